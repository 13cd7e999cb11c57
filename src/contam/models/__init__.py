"""Language-model and embedding backends behind one small protocol.

``load(spec)`` resolves a model spec to a :class:`LanguageModel`; ``load_embedder(spec)`` an
:class:`Embedder`.
"""

from contam.models.base import Completion, Embedder, LanguageModel, Messages, Prompt, TokenScores
from contam.models.embed import DEFAULT_EMBEDDER, load_embedder

__all__ = [
    "DEFAULT_EMBEDDER",
    "Completion",
    "Embedder",
    "LanguageModel",
    "Messages",
    "Prompt",
    "TokenScores",
    "load_embedder",
]
