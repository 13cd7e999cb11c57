"""Paper 003's equivariance table on BFCL multi-turn: which leaked artifact survives regeneration.

On held-out seeds, every regenerated instance is graded the way BFCL grades a multi-turn
episode (:func:`bfcl_check`: after each turn with ground-truth calls, the state of every involved
class equals the ground truth's, attribute-wise, and the ground truth's outputs of that turn are
among the episode's outputs so far). Three leaked artifacts:

- **memorised final state** (A0): the shipped task's state after each turn, offered as the
  answer — passes where the fresh goal equals the shipped one;
- **memorised call sequence** (A0): the shipped ground-truth calls replayed verbatim on the fresh
  world;
- **state-general procedure**: the same procedure with its literals bound to the fresh world
  (the rewritten ground truth, which the fresh question states or the tools show).

Counts with 95 % Wilson intervals (:func:`contam.stats.wilson_interval`), over all instances and
over the *moved* ones (fresh goal differs from the shipped goal at some turn).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from contam.records import Record
from contam.regen.bfcl.calls import Call, parse_call, replay
from contam.regen.bfcl.reseed import BfclInstance, Generated, generate, plan
from contam.regen.bfcl.world import load_tasks, state_hash
from contam.stats import wilson_interval


def bfcl_check(inst: BfclInstance, episode: Sequence[Sequence[Call | str]]) -> bool:
    """Grade an episode (calls per turn) on ``inst`` with BFCL's multi-turn checker semantics."""
    gt = [[parse_call(c) for c in turn] for turn in inst.ground_truth]
    want = replay(inst.initial_config, inst.involved_classes, inst.long_context, gt)
    got = replay(inst.initial_config, inst.involved_classes, inst.long_context, episode)
    seen: list[str] = []
    for t, turn in enumerate(gt):
        seen.extend(o.output for o in got.outcomes[t])
        if not turn:
            continue  # BFCL checks no state on a turn without ground-truth calls
        if got.states[t] != want.states[t]:
            return False
        pool = list(seen)
        for o in want.outcomes[t]:
            if o.output in pool:
                pool.remove(o.output)
            else:
                return False
    return True


@dataclass(frozen=True)
class BfclBoundaryRow(Record):
    """One row: a leaked artifact, scored by BFCL's checker, on fresh instances."""

    substrate: str
    scored_target: str
    leaked_artifact: str
    adversary: str
    n: int
    passed: int
    pass_all: float
    ci_low: float
    ci_high: float
    n_moved: int
    passed_moved: int
    pass_moved: float
    moved_ci_low: float
    moved_ci_high: float
    regeneration_holds: str


def bfcl_experiment(
    seeds: Iterable[int] = range(100, 103), task_ids: list[str] | None = None
) -> tuple[list[BfclBoundaryRow], dict[str, Any]]:
    """The three rows, plus counts of the instances used and the rejected (task, seed) pairs."""
    ids = task_ids if task_ids is not None else [t.id for t in load_tasks()]
    res: dict[str, list[tuple[bool, bool]]] = {"state": [], "literal": [], "general": []}
    rejected: Counter[str] = Counter()
    for seed in seeds:
        for tid in ids:
            g = generate(tid, seed)
            if not isinstance(g, Generated):
                rejected[g.reason] += 1
                continue
            inst = g.instance
            p = plan(tid)
            shipped_hashes = [state_hash(s) for s in p.shipped.states]
            # Per checked turn (BFCL checks turns with ground-truth calls only).
            checked = [i for i, turn in enumerate(inst.ground_truth) if turn]
            moved = any(shipped_hashes[i] != inst.goal_hashes[i] for i in checked)
            res["state"].append((all(shipped_hashes[i] == inst.goal_hashes[i] for i in checked), moved))
            res["literal"].append((bfcl_check(inst, p.task.ground_truth), moved))
            res["general"].append((bfcl_check(inst, inst.ground_truth), moved))

    def row(key: str, artifact: str, adversary: str, holds: str) -> BfclBoundaryRow:
        xs = res[key]
        ok = sum(a for a, _ in xs)
        mv = [a for a, m in xs if m]
        iv, ivm = wilson_interval(ok, len(xs)), wilson_interval(sum(mv), len(mv))
        return BfclBoundaryRow(
            "bfcl-v4-multi-turn",
            "state after each turn + outputs (BFCL checker)",
            artifact,
            adversary,
            len(xs),
            ok,
            iv.estimate,
            iv.low,
            iv.high,
            len(mv),
            sum(mv),
            ivm.estimate,
            ivm.low,
            ivm.high,
            holds,
        )

    rows = [
        row("state", "memorised final state", "A0", "yes vs A0"),
        row("literal", "memorised call sequence", "A0", "yes vs A0 where a call names a re-keyed literal"),
        row("general", "state-general procedure", "procedure", "no (fixed point)"),
    ]
    return rows, {"seeds": list(seeds), "tasks": len(ids), "instances": len(res["state"]), "rejected": dict(rejected)}
