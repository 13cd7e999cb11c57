"""Paper 003's regeneration recipe on a second benchmark by other authors: BFCL v4 multi-turn.

BFCL's own world classes (imported from the ``bfcl-eval`` package) are the world; call strings
are parsed with :mod:`ast` and dispatched, never evaluated; the goal state is what the rewritten
ground-truth calls leave behind, compared attribute-wise as BFCL's state checker does.

>>> from contam.regen.bfcl import generate
>>> g = generate("multi_turn_base_0", seed=1)
>>> g.instance.key
'bfcl/multi_turn_base_0/1'
"""

from contam.regen.bfcl.calls import Call, CallSyntaxError, parse_call, replay
from contam.regen.bfcl.reseed import BfclInstance, BfclRejection, generate

__all__ = ["BfclInstance", "BfclRejection", "Call", "CallSyntaxError", "generate", "parse_call", "replay"]

#: The old name of :class:`BfclRejection` (issue 33: ``Rejection`` also names why an item could
#: not be templated, :class:`contam.perturb.Rejection`), importable for scripts written against it.
Rejection = BfclRejection
