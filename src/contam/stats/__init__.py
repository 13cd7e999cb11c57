"""Statistics that hold: tests, intervals, calibration of p into confidence, power. Imports nothing of ours.

Every test returns a :class:`TestResult`, every interval a :class:`ConfidenceInterval`; both serialize to JSON.

>>> from contam.stats import contamination_confidence, wilson_interval
>>> round(contamination_confidence(0.01, effect=0.1), 3), round(wilson_interval(9, 12).low, 3)
(0.889, 0.468)
"""

from __future__ import annotations

from typing import TYPE_CHECKING

#: public name -> module that defines it (imported on first use: scipy loads only when needed)
_EXPORTS = {
    "ConfidenceInterval": "contam.stats.results",
    "TestResult": "contam.stats.results",
    "mcnemar_exact": "contam.stats.tests",
    "mcnemar_counts": "contam.stats.tests",
    "paired_bootstrap": "contam.stats.tests",
    "paired_permutation": "contam.stats.tests",
    "wilcoxon_signed_rank": "contam.stats.tests",
    "paired_ttest": "contam.stats.tests",
    "mann_whitney": "contam.stats.tests",
    "auc_delong": "contam.stats.tests",
    "two_proportion_ztest": "contam.stats.tests",
    "wilson_interval": "contam.stats.intervals",
    "newcombe_unpaired_interval": "contam.stats.intervals",
    "newcombe_paired_interval": "contam.stats.intervals",
    "bootstrap_interval": "contam.stats.intervals",
    "Calibration": "contam.stats.calibration",
    "contamination_confidence": "contam.stats.calibration",
    "sbb_bayes_factor": "contam.stats.calibration",
    "posterior_probability": "contam.stats.calibration",
    "FDRResult": "contam.stats.multiple",
    "benjamini_hochberg": "contam.stats.multiple",
    "PowerReport": "contam.stats.power",
    "power_report": "contam.stats.power",
    "mde_unpaired": "contam.stats.power",
    "n_unpaired": "contam.stats.power",
    "power_unpaired": "contam.stats.power",
    "mde_paired": "contam.stats.power",
    "n_paired": "contam.stats.power",
    "power_paired": "contam.stats.power",
    "power_mcnemar_exact": "contam.stats.power",
    "passk_gap": "contam.stats.power",
}

__all__ = [
    "Calibration",
    "ConfidenceInterval",
    "FDRResult",
    "PowerReport",
    "TestResult",
    "auc_delong",
    "benjamini_hochberg",
    "bootstrap_interval",
    "contamination_confidence",
    "mann_whitney",
    "mcnemar_counts",
    "mcnemar_exact",
    "mde_paired",
    "mde_unpaired",
    "n_paired",
    "n_unpaired",
    "newcombe_paired_interval",
    "newcombe_unpaired_interval",
    "paired_bootstrap",
    "paired_permutation",
    "paired_ttest",
    "passk_gap",
    "posterior_probability",
    "power_mcnemar_exact",
    "power_paired",
    "power_report",
    "power_unpaired",
    "sbb_bayes_factor",
    "two_proportion_ztest",
    "wilcoxon_signed_rank",
    "wilson_interval",
]

if TYPE_CHECKING:  # what the lazy exports are, for type checkers and editors
    from contam.stats.calibration import Calibration, contamination_confidence, posterior_probability, sbb_bayes_factor
    from contam.stats.intervals import bootstrap_interval, newcombe_paired_interval, newcombe_unpaired_interval, wilson_interval
    from contam.stats.multiple import FDRResult, benjamini_hochberg
    from contam.stats.power import (
        PowerReport,
        mde_paired,
        mde_unpaired,
        n_paired,
        n_unpaired,
        passk_gap,
        power_mcnemar_exact,
        power_paired,
        power_report,
        power_unpaired,
    )
    from contam.stats.results import ConfidenceInterval, TestResult
    from contam.stats.results import Interval as Interval  # the old name, see _OLD_NAMES
    from contam.stats.tests import (
        auc_delong,
        mann_whitney,
        mcnemar_counts,
        mcnemar_exact,
        paired_bootstrap,
        paired_permutation,
        paired_ttest,
        two_proportion_ztest,
        wilcoxon_signed_rank,
    )


#: Old public names still importable (issue 33 renamed them: ``Interval`` also named a config range).
_OLD_NAMES = {"Interval": "ConfidenceInterval"}


def __getattr__(name: str) -> object:
    name = _OLD_NAMES.get(name, name)
    if name in _EXPORTS:
        import importlib

        return getattr(importlib.import_module(_EXPORTS[name]), name)
    raise AttributeError(f"module 'contam.stats' has no attribute {name!r}")
