"""contam: find out whether an evaluation benchmark has leaked, and make fresh instances.

The package is organised by concern: :mod:`contam.data` (items, loaders, normalisation),
:mod:`contam.scan` (data-side detectors), :mod:`contam.models` (language-model and embedding
backends), :mod:`contam.probe` (model-side detectors), :mod:`contam.perturb` (variant sets with
computed answers), :mod:`contam.regen` (world regeneration), :mod:`contam.stats`,
:mod:`contam.report` and :mod:`contam.cli`.
"""

from contam.errors import ContamError

__version__ = "0.1.0"
__all__ = ["ContamError", "__version__"]
