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
import re

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
    raise InputError(
        f"answer {item.answer!r} is not a letter A-{chr(64 + len(item.choices))} or an option's text", path=item.id, field="answer"
    )


def _hash(*parts: object) -> str:
    return hashlib.sha256(json.dumps(parts, ensure_ascii=False).encode()).hexdigest()


#: Options that point at other options by place or letter ("All of the above", "Both (a) and (b)",
#: "A and B"): moving the others under them would change what they say, so they keep their place.
REFERS = re.compile(
    r"\b(?:all|none|neither|both|any|each)\s+of\s+(?:the\s+)?(?:above|below|these|those|them|the\s+options)\b"
    r"|\((?:[a-dA-D]|i{1,3}|iv)\)|\b(?:both|either|neither)\s+\(?[a-dA-D]\)?\s*(?:,|and|or|nor)\s+\(?[a-dA-D]\)?"
    r"|\b[A-D]\s*(?:,|and|or|&)\s*[A-D]\b|\b(?:options?|choices?|answers?)\s+\(?[A-Da-d]\)?\b",
    re.IGNORECASE,
)


def pinned_options(item: Item) -> list[int]:
    """Indices of options that refer to other options (kept in place by :func:`permute`)."""
    return [i for i, c in enumerate(item.choices) if REFERS.search(c)]


def permute(item: Item, seed: int = 0, index: int = 0) -> Variant:
    """The options shuffled so that the gold option moves to another letter (needs ≥ 2 options).

    Only the order changes: the question and every option text stay as they were, so the one
    thing a permutation moves for a reader is the gold letter. Options that refer to others
    ("All of the above", "Both (a) and (b)") keep their place; an item whose gold option is such
    an option cannot be permuted without changing its meaning and is refused (InputError).
    """
    n = len(item.choices)
    if n < 2:
        raise InputError("permutation needs at least two options", path=item.id, field="choices")
    gold = _gold_index(item)
    pinned = set(pinned_options(item))
    if gold in pinned:
        raise InputError(
            f"the gold option {item.choices[gold]!r} refers to other options; a permutation would change its meaning",
            path=item.id,
            field="choices",
        )
    movable = [i for i in range(n) if i not in pinned]
    if len(movable) < 2:
        raise InputError("fewer than two options can move without changing what the others say", path=item.id, field="choices")
    rng = random.Random(f"{item.id}|permute|{seed}|{index}")
    order = list(range(n))
    while True:  # rejection: uniform over permutations of the movable options that move the gold letter
        shuffled = movable[:]
        rng.shuffle(shuffled)
        for slot, src in zip(movable, shuffled, strict=True):
            order[slot] = src
        if order.index(gold) != gold:
            break
    choices = tuple(item.choices[i] for i in order)
    letter = chr(65 + order.index(gold))
    vid = f"{item.id}#perm{seed}.{index}"
    return Variant(
        original_id=item.id,
        variant_id=vid,
        kind="permute",
        seed=seed,
        question=item.question,
        answer=letter,
        choices=choices,
        original_answer=chr(65 + gold),
        audit_hash=_hash(item.id, seed, index, choices, letter),
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
    question = f"Fill in the [MASK] option of this multiple-choice question. Reply with the option text only.\n\n{item.question}\n{options}"
    return Variant(
        original_id=item.id,
        variant_id=f"{item.id}#mask{seed}.{index}",
        kind="mask",
        seed=seed,
        question=question,
        answer=item.choices[k],
        choices=shown,
        original_answer=chr(65 + gold),
        audit_hash=_hash(item.id, "mask", seed, index, k),
        metadata={"masked_letter": chr(65 + k)},
    )
