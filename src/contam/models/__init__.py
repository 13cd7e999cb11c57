"""Language-model and embedding backends behind one small protocol.

``load(spec)`` resolves a model spec to a :class:`LanguageModel`; ``load_embedder(spec)`` an
:class:`Embedder`.
"""

from contam.models.base import Completion, Embedder, LanguageModel, Messages, Prompt, TokenScores
from contam.models.cache import CachedModel
from contam.models.embed import DEFAULT_EMBEDDER, load_embedder
from contam.models.registry import available, load, parse_spec

__all__ = [
    "DEFAULT_EMBEDDER",
    "CachedModel",
    "Completion",
    "Embedder",
    "LanguageModel",
    "Messages",
    "Prompt",
    "TokenScores",
    "available",
    "load",
    "load_embedder",
    "parse_spec",
]
