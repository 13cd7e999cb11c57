"""Audit every regenerated BFCL instance, as contam audits τ-bench's (paper 003 §3).

The checks, on the *written* instance (its call strings re-parsed, its config re-loaded into
fresh BFCL class instances — nothing reused from the generation's replay):

- **injective** — the literal map is one-to-one and no fresh value is an original;
- **covered** — no original re-keyed literal (whole token, any case), nor a replaced file text,
  survives in the fresh question, config (keys and values) or calls;
- **deterministic** — regenerating at the same seed gives the identical instance (same
  instance hash), and the stored hash is the hash of the stored record;
- **faithful** — the replay is clean: every rewritten call errs exactly where the shipped one
  did (position by position), every observation is the shipped observation under the map, and
  the per-turn goal hashes stored in the instance are what the replay leaves;
- **solvable** — the goal differs from the initial state after at least one turn (BFCL checks
  the state after every turn with ground-truth calls).
"""

from __future__ import annotations

from contam.regen.audit import CHECKS, AuditRow
from contam.regen.bfcl.calls import parse_call, replay
from contam.regen.bfcl.reseed import Generated, check_draw, generate, hash_instance, injective, leaks, plan
from contam.regen.bfcl.world import state_hash


def audit(g: Generated, determinism: bool = True) -> AuditRow:
    """Audit one generated instance; ``problems`` names each failure as ``check: detail``."""
    inst = g.instance
    p = plan(inst.task_id)
    problems: list[str] = []
    problems += [f"injective: {x.partition(': ')[2]}" for x in injective(g.draw)]
    calls = [[parse_call(c) for c in turn] for turn in inst.ground_truth]
    problems += [f"covered: {x.partition(': ')[2]}" for x in leaks(p, g.draw, inst.initial_config, inst.question, calls)]
    if hash_instance(inst.to_dict()) != inst.instance_hash:
        problems.append("deterministic: the stored instance hash is not the hash of the record")
    if determinism:
        again = generate(inst.task_id, inst.seed)
        if not isinstance(again, Generated) or again.instance.instance_hash != inst.instance_hash:
            problems.append("deterministic: regenerating at the same seed gives a different instance")
    run = replay(inst.initial_config, inst.involved_classes, inst.long_context, calls)
    for x in check_draw(p, g.draw, run):
        code, _, detail = x.partition(": ")
        problems.append(f"{'solvable' if code == 'goal_unchanged' else 'faithful'}: {code} {detail}")
    if [state_hash(s) for s in run.states] != inst.goal_hashes or state_hash(run.initial) != inst.initial_hash:
        problems.append("faithful: the stored goal hashes are not what the rewritten calls leave")
    if all(h == inst.initial_hash for h in inst.goal_hashes):
        problems.append("solvable: the goal equals the initial state after every turn")
    flags = {c: not any(x.split(":", 1)[0] == c for x in problems) for c in CHECKS}
    return AuditRow(inst.key, f"bfcl/{inst.category}", p.task.index, inst.seed, None, problems=problems, **flags)
