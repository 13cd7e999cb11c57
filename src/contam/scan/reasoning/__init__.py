"""Level 3 of the cascade: reasoning-pattern similarity between chains of thought.

Paper 001, Section 3.2 (Level 3) and Section 3.3: reasoning steps are parsed from a trace with
regular expressions and two traces are compared with

    sim_reasoning = α·StructSim + β·StepSim + γ·ArgSim        (α .4, β .3, γ .3; Table 3)

each part a weighted Jaccard similarity on n-gram sets:

* **StructSim** — the sequence of step *types* (``calc:*``, ``calc:+-``, ``for``, ``return``, ...),
  as 1- to 3-grams, longer n-grams weighing more: the shape of the solution.
* **StepSim** — step by step: every step's words (numbers and names masked) as word 1–2-grams,
  each step matched to its best counterpart in the other trace, averaged both ways.
* **ArgSim** — the arguments: numbers, operand/operator pairs (``48/2``), capitalised entities and,
  for code, identifiers.

Steps come from GSM8K calculator annotations (``<<48/2=24>>``), numbered steps (``1.`` / ``Step 2:``),
fenced or indented code (one statement a step), or, failing those, sentences that carry a number
or an equation.

>>> a = "She has 16 - 3 = <<16-3=13>>13 eggs.\\nShe makes 13 * 2 = $<<13*2=26>>26.\\n#### 26"
>>> b = "He has 20 - 5 = <<20-5=15>>15 apples.\\nHe earns 15 * 2 = $<<15*2=30>>30.\\n#### 30"
>>> [s.kind for s in extract_steps(a)]
['calc:-', 'calc:*', 'answer']
>>> sim = ReasoningScorer().similarity(extract_steps(a), extract_steps(b))
>>> sim.struct, sim.total > 0.4
(1.0, True)

The three parts live in their own modules: :mod:`~contam.scan.reasoning.steps` (step
extraction), :mod:`~contam.scan.reasoning.scorer` (eq. 4, one pair at a time) and
:mod:`~contam.scan.reasoning.matcher` (the shortlist and the vectorised eq. 4 over a whole
benchmark); every public name is importable from here.
"""

from contam.scan.reasoning.matcher import ReasoningMatch, ReasoningMatcher
from contam.scan.reasoning.scorer import (
    Features,
    ReasoningConfig,
    ReasoningScorer,
    ReasoningSim,
    feature_tokens,
    ngram_counter,
    weighted_jaccard,
)
from contam.scan.reasoning.steps import ReasoningStep, extract_steps

__all__ = [
    "Features",
    "ReasoningConfig",
    "ReasoningMatch",
    "ReasoningMatcher",
    "ReasoningScorer",
    "ReasoningSim",
    "ReasoningStep",
    "extract_steps",
    "feature_tokens",
    "ngram_counter",
    "weighted_jaccard",
]

#: The old name of :class:`ReasoningStep` (issue 33: ``Step`` also named a template's calculator
#: step and an audit step), importable for scripts written against it.
Step = ReasoningStep
