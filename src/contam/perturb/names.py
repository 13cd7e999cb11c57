"""Optional context swaps: person names replaced by others of the same list (paper 004, Table 3
changes the context as well as the numbers).

Only names from the lists below are swapped, each consistently in question and solution,
to a name of the same list (so pronouns still agree) that the item does not already use.

>>> swap_names("Natalia sold clips. Natalia's friends", "Natalia sold 48.", random.Random(0))[0].split()[0] != "Natalia"
True
"""

from __future__ import annotations

import random
import re

FEMALE = (
    "Alice",
    "Amy",
    "Anna",
    "Betty",
    "Carla",
    "Claire",
    "Diana",
    "Emily",
    "Emma",
    "Grace",
    "Hannah",
    "Helen",
    "Janet",
    "Jenna",
    "Julia",
    "Kate",
    "Laura",
    "Linda",
    "Lisa",
    "Maria",
    "Mary",
    "Megan",
    "Mia",
    "Nancy",
    "Natalia",
    "Olivia",
    "Rachel",
    "Rose",
    "Sarah",
    "Sophia",
    "Susan",
    "Tina",
    "Wendy",
    "Zoe",
)
MALE = (
    "Adam",
    "Ben",
    "Bill",
    "Brian",
    "Carl",
    "Chris",
    "Dan",
    "David",
    "Eric",
    "Frank",
    "George",
    "Henry",
    "Jack",
    "James",
    "Jason",
    "Jim",
    "Joe",
    "John",
    "Josh",
    "Kevin",
    "Mark",
    "Matt",
    "Michael",
    "Mike",
    "Nick",
    "Paul",
    "Peter",
    "Sam",
    "Steve",
    "Tom",
    "Tony",
    "Will",
)


def swap_names(question: str, solution: str, rng: random.Random) -> tuple[str, str, dict[str, str]]:
    """``question`` and ``solution`` with listed first names replaced consistently, and the mapping."""
    text = question + "\n" + solution
    mapping: dict[str, str] = {}
    for pool in (FEMALE, MALE):
        present = [n for n in pool if re.search(rf"\b{n}\b", text)]
        free = [n for n in pool if not re.search(rf"\b{n}\b", text)]
        rng.shuffle(free)
        for name in present:
            if free:
                mapping[name] = free.pop()
    if not mapping:
        return question, solution, {}
    pattern = re.compile(r"\b(" + "|".join(map(re.escape, mapping)) + r")\b")
    return pattern.sub(lambda m: mapping[m.group(1)], question), pattern.sub(lambda m: mapping[m.group(1)], solution), mapping
