"""Multiple-choice variants: option permutation and masked options (TS-Guessing).

*Permutation* reorders the options so the gold option lands on a different letter: a model
that memorized "the answer is C" loses, a model that knows the content does not.
*Masking* hides one wrong option behind ``[MASK]`` and asks for it back (TS-Guessing,
Deng et al. 2024): filling in an incorrect option exactly is hard without having seen the item.

>>> from contam.data import Item
>>> it = Item(id="q1", question="2+2?", answer="B", choices=("3", "4", "5", "6"))
>>> v = permute(it, seed=0)
>>> v.choices[ord(v.answer) - 65], v.answer != "B"
('4', True)
>>> m = mask_option(it, seed=0)
>>> "[MASK]" in m.question and m.answer in ("3", "5", "6")
True
"""

from __future__ import annotations

import hashlib
import json
import random

from contam.data.items import Item
from contam.errors import InputError
from contam.perturb.records import Variant

MASK = "[MASK]"


def _gold_index(item: Item) -> int:
    a = item.answer.strip().upper()
    if len(a) == 1 and "A" <= a < chr(65 + len(item.choices)):
        return ord(a) - 65
    for i, c in enumerate(item.choices):  # the answer may be the option text itself
        if c.strip() == item.answer.strip():
            return i
    raise InputError(f"answer {item.answer!r} is not a letter A-{chr(64 + len(item.choices))} or an option's text", path=item.id, field="answer")


def _hash(*parts: object) -> str:
    return hashlib.sha256(json.dumps(parts, ensure_ascii=False).encode()).hexdigest()


def permute(item: Item, seed: int = 0, index: int = 0) -> Variant:
    """The options shuffled so that the gold option moves to another letter (needs ≥ 2 options)."""
    n = len(item.choices)
    if n < 2:
        raise InputError("permutation needs at least two options", path=item.id, field="choices")
    gold = _gold_index(item)
    rng = random.Random(f"{item.id}|permute|{seed}|{index}")
    order = list(range(n))
    while True:  # rejection: uniform over permutations that move the gold letter
        rng.shuffle(order)
        if order.index(gold) != gold:
            break
    choices = tuple(item.choices[i] for i in order)
    letter = chr(65 + order.index(gold))
    vid = f"{item.id}#perm{seed}.{index}"
    return Variant(
        original_id=item.id, variant_id=vid, kind="permute", seed=seed, question=item.question, answer=letter,
        choices=choices, original_answer=chr(65 + gold), audit_hash=_hash(item.id, seed, index, choices, letter),
        metadata={"order": order},
    )


def mask_option(item: Item, seed: int = 0, index: int = 0) -> Variant:
    """One wrong option replaced by ``[MASK]``; the answer is the hidden option's text."""
    gold = _gold_index(item)
    wrong = [i for i in range(len(item.choices)) if i != gold and item.choices[i].strip()]
    if not wrong:
        raise InputError("no wrong option to mask", path=item.id, field="choices")
    rng = random.Random(f"{item.id}|mask|{seed}|{index}")
    k = rng.choice(wrong)
    shown = tuple(MASK if i == k else c for i, c in enumerate(item.choices))
    options = "\n".join(f"{chr(65 + i)}. {c}" for i, c in enumerate(shown))
    question = (f"Fill in the [MASK] option of this multiple-choice question. Reply with the option text only.\n\n"
                f"{item.question}\n{options}")
    return Variant(
        original_id=item.id, variant_id=f"{item.id}#mask{seed}.{index}", kind="mask", seed=seed, question=question,
        answer=item.choices[k], choices=shown, original_answer=chr(65 + gold),
        audit_hash=_hash(item.id, "mask", seed, index, k), metadata={"masked_letter": chr(65 + k)},
    )
