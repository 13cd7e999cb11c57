"""Paper 003's regeneration operators on BFCL multi-turn tasks.

Two operators, both drawing from the benchmark's own distributions (pools gathered over all
800 shipped tasks, per kind):

- **re-keying** (a literal map): entity names — file and directory names (extension kept),
  Twitter handles and passwords, people's first and last names (messages, tickets, travel),
  travel card ids, card numbers, booking ids and access tokens (digits re-drawn, format kept) —
  are renamed by one map applied to *every* string of the task: the initial configuration
  (keys and values), each question turn, and each ground-truth call's string arguments. Matching
  is whole-token (no letter or digit on either side) and case-preserving, so ``'report.txt'`` in a
  question, a config key and ``cat(file_name='report.txt')`` all become the same fresh name.
- **state resampling** (positional): numeric state fields (vehicle fuel, battery, tyre pressures,
  temperatures; trading balance and stock quotes; travel card balances and budget) and the text
  of files get a value drawn from the same field over all tasks. Only values nothing refers to
  are resampled: a number no call argument and no question states, unique among the task's
  numbers; a file content no call argument occurs in.

The golden is not remembered but re-derived: the rewritten calls are replayed through BFCL's
classes on the fresh configuration, and the goal state (after each turn) is what they leave.
A draw whose replay is not the *transport* of the shipped replay — same error pattern call by
call, every observation equal to the shipped one under the map — is discarded and the next draw
tried (fewer operators each time); a task no draw regenerates is rejected with a reason code.
"""

from __future__ import annotations

import dataclasses
import re
from collections import defaultdict
from dataclasses import dataclass
from functools import cache
from typing import Any

from contam.records import Record
from contam.regen.bfcl.calls import BfclReplay, Call, parse_call, replay
from contam.regen.bfcl.draws import BfclDraw, apply, draw
from contam.regen.bfcl.draws import _fresh_string as _fresh_string
from contam.regen.bfcl.draws import _redigit as _redigit
from contam.regen.bfcl.draws import _set_path as _set_path
from contam.regen.bfcl.literals import _MIN_LEN, _NUM, NUMERIC_FIELDS, LiteralMap, _leaves, _stem, extract, pools
from contam.regen.bfcl.literals import _ROLES as _ROLES
from contam.regen.bfcl.literals import Pools as Pools
from contam.regen.bfcl.literals import _case_like as _case_like
from contam.regen.bfcl.literals import _names as _names
from contam.regen.bfcl.literals import _pattern as _pattern
from contam.regen.bfcl.literals import _tree as _tree
from contam.regen.bfcl.literals import sub_call as sub_call
from contam.regen.bfcl.literals import sub_config as sub_config
from contam.regen.bfcl.taskplan import BfclTaskPlan, _call_leaves, _config_numbers, _files_tail_used, question_text, schema_words
from contam.regen.bfcl.taskplan import _long_context_texts as _long_context_texts
from contam.regen.bfcl.transport import _canon as _canon
from contam.regen.bfcl.transport import _parse_output as _parse_output
from contam.regen.bfcl.transport import check_draw, injective, leaks
from contam.regen.bfcl.transport import transport_output as transport_output
from contam.regen.bfcl.world import canonical_hash, get_task, state_hash

#: Rejection reasons (a task at a seed that no draw regenerates).
REASONS = {
    "read_only": "no ground-truth turn changes the state (BFCL grades it by call outputs only)",
    "nothing_reseeded": "no literal or state field the recipe may move",
    "error_pattern_changed": "a rewritten call errs where the shipped one did not, or the reverse",
    "outputs_not_transported": "an observation of the rewritten replay is not the shipped one under the map",
    "goal_unchanged": "the fresh goal equals the fresh initial state at every turn",
    "leak": "an original literal survives in the fresh question, config or calls",
    "not_injective": "two originals map to one fresh value, or a fresh value is an original",
}


@cache
def plan(task_id: str) -> BfclTaskPlan:
    task = get_task(task_id)
    calls = [[parse_call(c) for c in turn] for turn in task.ground_truth]
    flat = [c for turn in calls for c in turn]
    leaves = _call_leaves(flat)
    call_strings = [v for v in leaves if isinstance(v, str)]
    qtext = question_text(task.question)
    vocab: set[str] = set()

    def collect(o: Any) -> None:
        if isinstance(o, dict):
            for k, v in o.items():
                if isinstance(k, str):
                    vocab.add(k.casefold())
                collect(v)
        elif isinstance(o, list):
            for v in o:
                collect(v)
        elif isinstance(o, str):
            vocab.add(o.casefold())

    collect(task.initial_config)
    vocab.update(s.casefold() for s in call_strings)

    seen: dict[str, tuple[str, str]] = {}
    frozen: dict[str, str] = {}
    contents: list[tuple[str, tuple[str, ...], str]] = []
    for cls in task.involved_classes:
        lits, conts = extract(cls, task.initial_config.get(cls, {}))
        contents.extend((cls, p, c) for p, c in conts)
        for kind, v in lits:
            key = v.casefold()
            if key in seen or key in frozen:
                continue
            if len(v) < _MIN_LEN or (kind == "file" and len(_stem(v)[0]) < _MIN_LEN):
                frozen[v] = "too short to rename in prose"
            elif key in schema_words():
                frozen[v] = "a function, parameter or enum name of BFCL's tool docs"
            elif task.long_context and kind == "file" and v in _files_tail_used():
                frozen[v] = "BFCL's long-context extension treats this file name specially"
            elif any(s and s.casefold() != key and s.casefold() in key for s in call_strings if len(s) >= 2):
                # A call reads it by a part of its name (find(name='test') on test_image1.jpg).
                frozen[v] = "a call argument is a part of it"
            else:
                seen[key] = (kind, v)
    # A part of a kept literal that is itself a candidate would rename the kept one's part
    # consistently; that is fine (all strings pass through one map).
    literals = list(seen.values())

    call_numbers = {float(v) for v in leaves if isinstance(v, (int, float)) and not isinstance(v, bool)}
    q_numbers = {float(x) for x in _NUM.findall(qtext)}
    all_numbers: dict[float, int] = defaultdict(int)
    for x in _config_numbers(task.initial_config):
        all_numbers[x] += 1
    numeric = []
    for cls in task.involved_classes:
        for pat in NUMERIC_FIELDS.get(cls, ()):
            for path, v in _leaves(task.initial_config.get(cls, {}), pat):
                if not isinstance(v, (int, float)) or isinstance(v, bool):
                    continue
                fv = float(v)
                if fv in call_numbers or fv in q_numbers or all_numbers[fv] > 1:
                    continue  # referenced or ambiguous: resampling it could change what a call means
                numeric.append((cls, pat, path, v))
    swappable = []
    qfold = qtext.casefold()
    for cls, p, c in contents:
        low = c.casefold()
        words = {w for w in re.findall(r"[a-z]{5,}", low)}
        if any(len(s) >= 2 and s.casefold() in low for s in call_strings) or any(w in qfold for w in words):
            continue
        swappable.append((cls, p, c))
    shipped = replay(task.initial_config, task.involved_classes, task.long_context, calls)
    read_only = all(s == shipped.initial for s in shipped.states)
    p = BfclTaskPlan(task, calls, literals, frozen, numeric, swappable, frozenset(vocab), shipped, read_only)
    if read_only:
        return p
    return dataclasses.replace(p, numeric=_probe(p, numeric, "n"), contents=_probe(p, swappable, "c"))


def _probe_values(p: BfclTaskPlan, item: tuple[Any, ...], kind: str) -> list[Any]:
    """The two extreme draws of a field (its pool's least and greatest other value)."""
    if kind == "n":
        cls, pat, _, v = item
        taken = set(_config_numbers(p.task.initial_config))
        pool = [x for x in pools().numbers.get((cls, pat), ()) if float(x) not in taken and type(x) is type(v)]
    else:
        pool = [x for x in pools().contents if x != item[2]]
    return sorted({pool[0], pool[-1]}, key=repr) if pool else []


def _probe(p: BfclTaskPlan, items: list[Any], kind: str) -> list[Any]:
    """The fields whose resampling leaves the replay a transport of the shipped one, at both
    extremes of their pool (group testing: a passing group is kept whole, a failing one split).
    A field a ground-truth call computes with (``fillFuelTank`` on the fuel level, ``place_order``
    against the balance) fails here and is never resampled."""

    def passes(group: list[Any]) -> bool:
        vals = [_probe_values(p, it, kind) for it in group]
        if any(not v for v in vals):
            return False
        for pick in (0, -1):
            if kind == "n":
                d = BfclDraw(LiteralMap(), {(it[0], it[2]): (it[3], v[pick]) for it, v in zip(group, vals, strict=True)}, {})
            else:
                d = BfclDraw(LiteralMap(), {}, {(it[0], it[1]): (it[2], v[pick]) for it, v in zip(group, vals, strict=True)})
            cfg, _, calls = apply(p, d)
            run = replay(cfg, p.task.involved_classes, p.task.long_context, calls)
            if any(not x.startswith("goal_unchanged") for x in check_draw(p, d, run)):
                return False
        return True

    def keep(group: list[Any]) -> list[Any]:
        if not group:
            return []
        if passes(group):
            return group
        if len(group) == 1:
            return []
        mid = len(group) // 2
        return keep(group[:mid]) + keep(group[mid:])

    return keep(items)


# --------------------------------------------------------------------------- the instance
@dataclass(frozen=True)
class BfclInstance(Record):
    """One regenerated BFCL multi-turn task; everything is in the fresh literal space."""

    key: str
    task_id: str
    category: str
    seed: int
    attempt: int
    operators: list[str]
    question: list[list[dict[str, str]]]
    initial_config: dict[str, Any]
    involved_classes: list[str]
    ground_truth: list[list[str]]
    excluded_function: list[str]
    missed_function: dict[str, list[str]] | None
    reseeded: dict[str, int]
    goal_hashes: list[str]
    initial_hash: str
    map_digest: str
    instance_hash: str = ""

    @property
    def long_context(self) -> bool:
        return "long_context" in self.category

    @property
    def goal_hash(self) -> str:
        return self.goal_hashes[-1] if self.goal_hashes else self.initial_hash


@dataclass(frozen=True)
class BfclRejection(Record):
    """A task at a seed that no draw regenerates: the reason code of the last draw, and detail."""

    key: str
    task_id: str
    category: str
    seed: int
    reason: str
    detail: str


#: The draws tried in order, (re-key, resample, a random half of the resampled fields): fewer
#: operators each time, each draw with its own random stream.
ATTEMPTS = ((True, True, False),) * 3 + ((True, False, False),) * 2 + ((False, True, False),) * 2 + ((True, True, True),) * 3


@dataclass
class Generated:
    """A successful generation with what the audit needs (the map is never written out)."""

    instance: BfclInstance
    draw: BfclDraw
    run: BfclReplay
    calls: list[list[Call]]


def hash_instance(rec: dict[str, Any]) -> str:
    return canonical_hash({k: v for k, v in rec.items() if k != "instance_hash"})


def generate(task_id: str, seed: int) -> Generated | BfclRejection:
    """Regenerate ``task_id`` at ``seed``: the first draw whose replay transports the shipped one."""
    p = plan(task_id)
    t = p.task
    key = f"bfcl/{t.id}/{seed}"
    if p.read_only:
        return BfclRejection(key, t.id, t.category, seed, "read_only", REASONS["read_only"])
    last = ("nothing_reseeded", REASONS["nothing_reseeded"])
    for attempt, (rekey, resample, half) in enumerate(ATTEMPTS):
        if (rekey and not p.literals) and (not resample or not (p.numeric or p.contents)):
            continue
        d = draw(p, seed, attempt, rekey and bool(p.literals), resample, half)
        if d is None:
            last = ("not_injective", "the pools have no fresh value for a literal")
            continue
        if not d.lm.fwd and not d.numbers and not d.contents:
            continue
        cfg, question, calls = apply(p, d)
        probs = injective(d) + leaks(p, d, cfg, question, calls)
        run = replay(cfg, t.involved_classes, t.long_context, calls)
        probs += check_draw(p, d, run)
        if probs:
            code, _, detail = probs[0].partition(": ")
            last = (code, detail)
            continue
        ops = (["rekey"] if d.lm.fwd else []) + (["resample"] if d.numbers or d.contents else [])
        kinds: dict[str, int] = defaultdict(int)
        for k in d.lm.kinds.values():
            kinds[k] += 1
        if d.numbers:
            kinds["numeric_field"] = len(d.numbers)
        if d.contents:
            kinds["file_content"] = len(d.contents)
        rec = BfclInstance(
            key=key,
            task_id=t.id,
            category=t.category,
            seed=seed,
            attempt=attempt,
            operators=ops,
            question=question,
            initial_config=cfg,
            involved_classes=list(t.involved_classes),
            ground_truth=[[c.render() for c in turn] for turn in calls],
            excluded_function=list(t.excluded_function),
            missed_function=t.missed_function,
            reseeded=dict(sorted(kinds.items())),
            goal_hashes=[state_hash(s) for s in run.states],
            initial_hash=state_hash(run.initial),
            map_digest=d.lm.digest(),
        )
        inst = dataclasses.replace(rec, instance_hash=hash_instance(rec.to_dict()))
        return Generated(inst, d, run, calls)
    return BfclRejection(key, t.id, t.category, seed, last[0], last[1])
