"""Model-side detectors: log-prob family, Zero-CoT Probe, performance cliff, generation probes, code diagnostics.

Each detector is a small class with a config dataclass (the papers' defaults) and one verb
(``run``), returning a typed record that serializes to JSON. They are exported here and imported
on first use, so that ``import contam.probe.answers`` does not load the model backends:

>>> from contam.probe import LogProbConfig, ZeroCoTConfig
>>> LogProbConfig().k, ZeroCoTConfig().primary_metric
(0.2, 'accuracy')
"""

from __future__ import annotations

from typing import TYPE_CHECKING

#: public name -> module that defines it
_EXPORTS = {
    # log-prob family (paper 001 level 1): Min-K% Prob, Min-K%++, perplexity, zlib, reference model
    "LogProbConfig": "contam.probe.logprob", "LogProbProbe": "contam.probe.logprob", "LogProbResult": "contam.probe.logprob",
    "ItemLogProb": "contam.probe.logprob", "min_k_prob": "contam.probe.logprob", "min_k_plus_plus": "contam.probe.logprob",
    # Zero-CoT Probe (paper 004)
    "ZeroCoTConfig": "contam.probe.zerocot", "ZeroCoTProbe": "contam.probe.zerocot", "ZeroCoTResult": "contam.probe.zerocot",
    # performance cliff (paper 001 level 4)
    "CliffConfig": "contam.probe.cliff", "CliffProbe": "contam.probe.cliff", "CliffResult": "contam.probe.cliff",
    "performance_cliff": "contam.probe.cliff",
    # generation probes
    "CDD": "contam.probe.cdd", "CDDConfig": "contam.probe.cdd", "CDDResult": "contam.probe.cdd",
    "Reconstruct": "contam.probe.reconstruct", "ReconstructConfig": "contam.probe.reconstruct", "ReconstructResult": "contam.probe.reconstruct",
    "TSGuess": "contam.probe.tsguess", "TSGuessConfig": "contam.probe.tsguess", "TSGuessResult": "contam.probe.tsguess",
    "Guided": "contam.probe.guided", "GuidedConfig": "contam.probe.guided", "GuidedResult": "contam.probe.guided",
    # SWE-bench memorization diagnostics (paper 002)
    "SweConfig": "contam.probe.swe", "SweResult": "contam.probe.swe", "FilePath": "contam.probe.swe", "FuncRepro": "contam.probe.swe",
    "PrefixCompletion": "contam.probe.swe", "compare": "contam.probe.swe",
    # controlled contamination and the probes' evaluation on it
    "ContaminateConfig": "contam.probe.contaminate", "Contaminator": "contam.probe.contaminate",
    "ContaminationManifest": "contam.probe.contaminate",
    "EvalProbesConfig": "contam.probe.evalprobes", "EvalProbes": "contam.probe.evalprobes", "EvalProbesResult": "contam.probe.evalprobes",
    # shared pieces: answer extraction, reference sets
    "extract_answer": "contam.probe.answers", "answers_equal": "contam.probe.answers",
    "load_reference": "contam.probe.reference", "pair_items": "contam.probe.reference",
}

__all__ = [
    "CDD", "CDDConfig", "CDDResult", "CliffConfig", "CliffProbe", "CliffResult", "ContaminateConfig",
    "ContaminationManifest", "Contaminator", "EvalProbes", "EvalProbesConfig", "EvalProbesResult", "FilePath",
    "FuncRepro", "Guided", "GuidedConfig", "GuidedResult", "ItemLogProb", "LogProbConfig", "LogProbProbe",
    "LogProbResult", "PrefixCompletion", "Reconstruct", "ReconstructConfig", "ReconstructResult", "SweConfig",
    "SweResult", "TSGuess", "TSGuessConfig", "TSGuessResult", "ZeroCoTConfig", "ZeroCoTProbe", "ZeroCoTResult",
    "answers_equal", "compare", "extract_answer", "load_reference", "min_k_plus_plus", "min_k_prob", "pair_items",
    "performance_cliff",
]

if TYPE_CHECKING:  # what the lazy exports are, for type checkers and editors
    from contam.probe.answers import answers_equal, extract_answer
    from contam.probe.cdd import CDD, CDDConfig, CDDResult
    from contam.probe.cliff import CliffConfig, CliffProbe, CliffResult, performance_cliff
    from contam.probe.contaminate import ContaminateConfig, ContaminationManifest, Contaminator
    from contam.probe.evalprobes import EvalProbes, EvalProbesConfig, EvalProbesResult
    from contam.probe.guided import Guided, GuidedConfig, GuidedResult
    from contam.probe.logprob import ItemLogProb, LogProbConfig, LogProbProbe, LogProbResult, min_k_plus_plus, min_k_prob
    from contam.probe.reconstruct import Reconstruct, ReconstructConfig, ReconstructResult
    from contam.probe.reference import load_reference, pair_items
    from contam.probe.swe import FilePath, FuncRepro, PrefixCompletion, SweConfig, SweResult, compare
    from contam.probe.tsguess import TSGuess, TSGuessConfig, TSGuessResult
    from contam.probe.zerocot import ZeroCoTConfig, ZeroCoTProbe, ZeroCoTResult


def __getattr__(name: str) -> object:
    if name in _EXPORTS:
        import importlib

        return getattr(importlib.import_module(_EXPORTS[name]), name)
    raise AttributeError(f"module 'contam.probe' has no attribute {name!r}")
