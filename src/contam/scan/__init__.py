"""Data-side detectors (token, semantic, reasoning levels), the level cascade, decontamination."""

# Token level (L1), exact matching, the scan job and decontamination; imported on first use so
# that ``import contam.scan.flags`` stays light.
_EXPORTS = {
    "NGramConfig": "contam.scan.ngram",
    "NGramScanner": "contam.scan.ngram",
    "ExactConfig": "contam.scan.exact",
    "ExactScanner": "contam.scan.exact",
    "run_scan": "contam.scan.job",
    "decontaminate": "contam.scan.decontaminate",
}


def __getattr__(name: str) -> object:
    if name in _EXPORTS:
        import importlib

        return getattr(importlib.import_module(_EXPORTS[name]), name)
    raise AttributeError(f"module 'contam.scan' has no attribute {name!r}")
