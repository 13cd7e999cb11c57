"""The ``nn`` rule's calibrated cosine thresholds per embedder (the semantic level's older default
decision, kept for ``--embedder`` choices without a fitted combiner)."""

from __future__ import annotations

from dataclasses import dataclass

from contam.models.embed import STATIC_SEMANTIC_THRESHOLD


@dataclass(frozen=True)
class SemanticDefaults:
    """Default decision of the ``nn`` rule for one embedder: cosine ``threshold`` flags alone;
    ``rescue_threshold`` <= cosine < ``threshold`` flags with :func:`specifics_overlap` >= ``rescue_overlap``
    or :func:`word_overlap` >= ``rescue_words``."""

    threshold: float
    rescue_threshold: float
    rescue_overlap: float
    rescue_words: float


#: Calibrated on the ``calib`` halves of the DCQ tasks (real GPT-4 perturbations of GSM8K and
#: HumanEval against GSM8K test / other HumanEval tasks, :mod:`contam.scan.dcq`) for the best F1
#: of both together, measured on the disjoint ``test`` halves (docs/semantic.md, bench/semantic_dcq.py).
#: Keys are embedder specs; an embedder not listed gets MiniLM's values (calibrate your own
#: with ``contam eval-detectors --embedder SPEC`` and pass ``--thresholds``).
EMBEDDER_DEFAULTS: dict[str, SemanticDefaults] = {
    "minilm": SemanticDefaults(threshold=0.86, rescue_threshold=0.6, rescue_overlap=0.8, rescue_words=0.5),
    "static": SemanticDefaults(threshold=STATIC_SEMANTIC_THRESHOLD, rescue_threshold=0.66, rescue_overlap=0.8, rescue_words=0.45),
    # Google USE multilingual v3 (``--embedder use-multilingual``): the same calibration, run with
    # ``python bench/semantic_dcq.py --embedders use-multilingual`` (bench/RESULTS.md, issue 15).
    # Calibrated on English paraphrases only: no real translated contamination was available.
    "use-multilingual": SemanticDefaults(threshold=0.86, rescue_threshold=0.57, rescue_overlap=0.7, rescue_words=0.6),
}


def defaults_for(embedder: object | None) -> SemanticDefaults:
    """The calibrated ``nn`` defaults of ``embedder`` (by its ``spec``; MiniLM's for ``None`` or unknown specs)."""
    spec = str(getattr(embedder, "spec", "minilm")) if embedder is not None else "minilm"
    return EMBEDDER_DEFAULTS.get(spec, EMBEDDER_DEFAULTS["minilm"])
