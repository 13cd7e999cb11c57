"""Each package's ``__init__`` exports its detectors, records and entry points: every exported
name resolves to the object its module defines, and ``__all__`` lists exactly the exports."""

from __future__ import annotations

import importlib

import pytest

LAZY = ["contam.probe", "contam.stats"]  # packages whose exports load on first use
EAGER = ["contam.data", "contam.models", "contam.perturb", "contam.regen", "contam.report"]


@pytest.mark.parametrize("name", LAZY)
def test_lazy_exports_resolve(name: str) -> None:
    pkg = importlib.import_module(name)
    assert set(pkg._EXPORTS) <= set(pkg.__all__)  # plus names defined in the package itself (contam.probe.PROBES)
    for attr, module in pkg._EXPORTS.items():
        obj = getattr(pkg, attr)
        assert obj is getattr(importlib.import_module(module), attr)
        assert getattr(obj, "__module__", module) == module, attr  # defined there, not re-exported from elsewhere
    with pytest.raises(AttributeError):
        pkg.no_such_name  # noqa: B018


@pytest.mark.parametrize("name", LAZY + EAGER)
def test_all_names_exist(name: str) -> None:
    pkg = importlib.import_module(name)
    assert pkg.__all__, name
    missing = [a for a in pkg.__all__ if not hasattr(pkg, a)]
    assert not missing, (name, missing)


def test_probe_exports_every_detector_with_its_config() -> None:
    import contam.probe as probe

    for name in (
        "LogProbProbe",
        "LogProbConfig",
        "ZeroCoTProbe",
        "ZeroCoTConfig",
        "CliffProbe",
        "CliffConfig",
        "CDD",
        "CDDConfig",
        "Reconstruct",
        "ReconstructConfig",
        "TSGuess",
        "TSGuessConfig",
        "Guided",
        "GuidedConfig",
        "FilePath",
        "FuncRepro",
        "PrefixCompletion",
        "SweConfig",
        "Contaminator",
        "ContaminateConfig",
        "EvalProbes",
        "EvalProbesConfig",
    ):
        assert name in probe.__all__, name
