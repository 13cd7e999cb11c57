"""Model-side detectors: log-prob family, Zero-CoT Probe, performance cliff, generation probes,
code diagnostics, and the paired verdict for any model.

**One contract.** Every probe is a config dataclass (the papers' defaults) and a class with one
verb::

    result = Probe(Config(...)).run(model, items, *, variants=None, control=None, checkpoint=None)

``variants`` are each item's isomorphic variants (``{item id: [Item, ...]}``, what
:func:`contam.probe.variantset.load_variants` reads from a ``contam perturb`` set); ``control``
is a clean comparison set (a clean benchmark, post-cutoff items). A probe that needs one of them
says so with a :class:`~contam.errors.ConfigError`, and so does a probe given one it has no use
for. Probes that also take a second model accept ``ref_model=``. Every result is a
:class:`~contam.records.Record` (``to_dict()`` gives JSON) whose statistics are
:class:`~contam.stats.results.TestResult` records.

The names below are imported on first use, so ``import contam.probe.cdd`` does not load every probe.

>>> from contam.probe import PROBES
>>> sorted(PROBES)[:3]
['cdd', 'cliff', 'guided']

``__all__`` is written out (so that type checkers see the lazy names) and kept equal to the table:

>>> import contam.probe as probe
>>> sorted(set(probe.__all__) ^ {"PROBES", "ProbeResult", "probe_class", *probe._EXPORTS})
[]
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

#: ``contam probe <name>`` -> (module, probe class, config class).
PROBES: dict[str, tuple[str, str, str]] = {
    "zerocot": ("contam.probe.zerocot", "ZeroCoTProbe", "ZeroCoTConfig"),
    "minkprob": ("contam.probe.logprob", "LogProbProbe", "LogProbConfig"),
    "cliff": ("contam.probe.cliff", "CliffProbe", "CliffConfig"),
    "paired": ("contam.probe.paired", "PairedProbe", "PairedConfig"),
    "cdd": ("contam.probe.cdd", "CDD", "CDDConfig"),
    "reconstruct": ("contam.probe.reconstruct", "Reconstruct", "ReconstructConfig"),
    "ts-guess": ("contam.probe.tsguess", "TSGuess", "TSGuessConfig"),
    "guided": ("contam.probe.guided", "Guided", "GuidedConfig"),
    "swe-filepath": ("contam.probe.swe", "FilePath", "SweConfig"),
    "swe-funcrepro": ("contam.probe.swe", "FuncRepro", "SweConfig"),
    "swe-prefix": ("contam.probe.swe", "PrefixCompletion", "SweConfig"),
}

_EXPORTS: dict[str, str] = {}
for _mod, _cls, _cfg in PROBES.values():
    _EXPORTS[_cls] = _mod
    _EXPORTS[_cfg] = _mod
_EXPORTS.update(
    {
        "ZeroCoTResult": "contam.probe.zerocot",
        "LogProbResult": "contam.probe.logprob",
        "CliffResult": "contam.probe.cliff",
        "PairedResult": "contam.probe.paired",
        "CDDResult": "contam.probe.cdd",
        "ReconstructResult": "contam.probe.reconstruct",
        "TSGuessResult": "contam.probe.tsguess",
        "GuidedResult": "contam.probe.guided",
        "SweResult": "contam.probe.swe",
        "performance_cliff": "contam.probe.cliff",
        "load_variants": "contam.probe.variantset",
        "pair_items": "contam.probe.variantset",
        "run_in_folder": "contam.probe.runfolder",
    }
)

_EXPORTS.update(
    {
        "ItemLogProb": "contam.probe.logprob",
        "min_k_prob": "contam.probe.logprob",
        "min_k_plus_plus": "contam.probe.logprob",
        "compare": "contam.probe.swe",
        "ContaminateConfig": "contam.probe.contaminate",
        "Contaminator": "contam.probe.contaminate",
        "ContaminationManifest": "contam.probe.contaminate",
        "EvalProbesConfig": "contam.probe.evalprobes",
        "EvalProbes": "contam.probe.evalprobes",
        "EvalProbesResult": "contam.probe.evalresults",
        "extract_answer": "contam.probe.answers",
        "answers_equal": "contam.probe.answers",
    }
)


if TYPE_CHECKING:  # the lazy names, visible to type checkers and IDEs (the doctest above keeps both lists equal)
    from contam.probe.answers import answers_equal, extract_answer
    from contam.probe.cdd import CDD, CDDConfig, CDDResult
    from contam.probe.cliff import CliffConfig, CliffProbe, CliffResult, performance_cliff
    from contam.probe.contaminate import ContaminateConfig, ContaminationManifest, Contaminator
    from contam.probe.evalprobes import EvalProbes, EvalProbesConfig
    from contam.probe.evalresults import EvalProbesResult
    from contam.probe.guided import Guided, GuidedConfig, GuidedResult
    from contam.probe.logprob import ItemLogProb, LogProbConfig, LogProbProbe, LogProbResult, min_k_plus_plus, min_k_prob
    from contam.probe.paired import PairedConfig, PairedProbe, PairedResult
    from contam.probe.reconstruct import Reconstruct, ReconstructConfig, ReconstructResult
    from contam.probe.reference import load_reference as load_reference  # the old name, see _OLD_NAMES
    from contam.probe.runfolder import run_in_folder
    from contam.probe.swe import FilePath, FuncRepro, PrefixCompletion, SweConfig, SweResult, compare
    from contam.probe.tsguess import TSGuess, TSGuessConfig, TSGuessResult
    from contam.probe.variantset import load_variants, pair_items
    from contam.probe.zerocot import ZeroCoTConfig, ZeroCoTProbe, ZeroCoTResult


@runtime_checkable
class ProbeResult(Protocol):
    """What every probe's ``run`` returns: a record that serialises to JSON."""

    def to_dict(self) -> dict[str, Any]: ...


def probe_class(name: str) -> tuple[type, type]:
    """``(probe class, config class)`` of ``contam probe <name>``."""
    mod, cls, cfg = PROBES[name]
    m = importlib.import_module(mod)
    return getattr(m, cls), getattr(m, cfg)


#: Old public names still importable (issue 33: the reference set is now the variant set).
_OLD_NAMES = {"load_reference": "load_variants"}


def __getattr__(name: str) -> Any:
    name = _OLD_NAMES.get(name, name)
    if name in _EXPORTS:
        return getattr(importlib.import_module(_EXPORTS[name]), name)
    raise AttributeError(f"module 'contam.probe' has no attribute {name!r}")


__all__ = [
    "CDD",
    "PROBES",
    "CDDConfig",
    "CDDResult",
    "CliffConfig",
    "CliffProbe",
    "CliffResult",
    "ContaminateConfig",
    "ContaminationManifest",
    "Contaminator",
    "EvalProbes",
    "EvalProbesConfig",
    "EvalProbesResult",
    "FilePath",
    "FuncRepro",
    "Guided",
    "GuidedConfig",
    "GuidedResult",
    "ItemLogProb",
    "LogProbConfig",
    "LogProbProbe",
    "LogProbResult",
    "PairedConfig",
    "PairedProbe",
    "PairedResult",
    "PrefixCompletion",
    "ProbeResult",
    "Reconstruct",
    "ReconstructConfig",
    "ReconstructResult",
    "SweConfig",
    "SweResult",
    "TSGuess",
    "TSGuessConfig",
    "TSGuessResult",
    "ZeroCoTConfig",
    "ZeroCoTProbe",
    "ZeroCoTResult",
    "answers_equal",
    "compare",
    "extract_answer",
    "load_variants",
    "min_k_plus_plus",
    "min_k_prob",
    "pair_items",
    "performance_cliff",
    "probe_class",
    "run_in_folder",
]
