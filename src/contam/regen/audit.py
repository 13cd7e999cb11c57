"""Audit every generated instance: injectivity, coverage, determinism, faithfulness, solvability.

Paper 003 §3: correctness of a generative oracle is a proof obligation, so every instance is
checked, not a sample. The checks:

- **injectivity** — the seed's id map is one-to-one per class, disjoint from the originals
  of its class, and the task's extension map (values minted for the task) is too;
- **coverage** — no original id (order, user, item, product, payment, tracking, email,
  address, reservation code, flight number) occurs as a *substring* of the fresh world's ids
  or of the instance's instruction, actions, outputs, goal delta or catalog patch, and no original name
  (nor the task user's zip or card last-four) occurs as a word; the shipped database's
  non-id content is checked once per domain to contain no original id, so the fresh
  database (ids renamed + that content) is covered as a whole;
- **determinism** — a second, independently built map at the same seed has the same digest
  and regenerates the identical instance (same oracle hash);
- **faithfulness** — the fresh gold program reproduces, position by position, the tool-error
  pattern of the same program on the shipped world (for a branch spec: the spec
  re-derives the shipped actions on the shipped catalog);
- **solvability** — the fresh goal state is exactly the re-keyed goal state of the program on
  the shipped world (so the gold program reaches it), and every id-bearing output is observable.

>>> row = Auditor().audit("retail", 0, seed=1)
>>> row.valid, row.problems
(True, [])
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from functools import cache
from typing import Any

from contam.records import Record
from contam.regen import branch
from contam.regen.generate import Instance, generate_full, task_plan, world_map
from contam.regen.rekey import SUBSTRING_CLASSES, KeyMap, map_digest, originals
from contam.regen.replay import run_actions
from contam.regen.world import (
    DEFAULT_SEMANTICS,
    DICT_KEY_CLASS,
    KEY_CLASS,
    TABLE_CLASS,
    IdTemplate,
    State,
    dumps,
    load_tasks,
    load_world,
    loads,
    make_template,
)

CHECKS = ("injective", "covered", "deterministic", "faithful", "solvable")

_JSON_STRING = re.compile(r'"((?:[^"\\]|\\.)*)"')
_DIGITS = re.compile(r"\d+")


@dataclass(frozen=True)
class AuditRow(Record):
    """The audit of one instance; ``problems`` says what failed, in words."""

    key: str
    domain: str
    task_index: int
    seed: int
    branch: str | None
    injective: bool
    covered: bool
    deterministic: bool
    faithful: bool
    solvable: bool
    problems: list[str] = field(default_factory=list)

    @property
    def valid(self) -> bool:
        return self.injective and self.covered and self.deterministic and self.faithful and self.solvable


@dataclass(frozen=True)
class RegenAuditReport(Record):
    """Totals over many audited regenerated τ-bench instances (the ``summary.json`` audit of
    ``contam regen``). Named apart from :class:`contam.perturb.AuditReport`, the audit counts of a
    variant-set build."""

    n: int
    n_invalid: int
    failures: dict[str, int]
    by_domain: dict[str, int]
    branches: dict[str, int]
    invalid_examples: list[dict[str, Any]]

    @property
    def invalid_rate(self) -> float:
        return self.n_invalid / self.n if self.n else 0.0

    @classmethod
    def of(cls, rows: list[AuditRow]) -> RegenAuditReport:
        bad = [r for r in rows if not r.valid]
        fails = Counter(c for r in bad for c in CHECKS if not getattr(r, c))
        return cls(
            len(rows),
            len(bad),
            {c: fails.get(c, 0) for c in CHECKS},
            dict(Counter(r.domain for r in rows)),
            dict(Counter(f"{r.domain}/{r.task_index}:{r.branch}" for r in rows if r.branch)),
            [{"key": r.key, "problems": r.problems[:5]} for r in bad[:20]],
        )


class _Transport:
    """The instance's map, except that ids no database or task holds (ones a tool minted during the
    replay, such as a new reservation code) are left as they are, as the tools mint them alike."""

    key = "transport"

    def __init__(self, km: KeyMap, originals_by_class: dict[str, frozenset[str]]) -> None:
        self.km = km
        self.orig = originals_by_class

    @property
    def flat(self) -> dict[tuple[str, str], str]:
        # The seed map's database values, one dict lookup per template slot; anything else
        # (task extensions, minted ids) goes through fwd.
        return self.km.flat

    def fwd(self, cls: str, value: str) -> str:
        if value in self.orig.get(cls, ()) or value in self.km.forward.get(cls, {}):
            return self.km.fwd(cls, value)
        return value

    def inv(self, cls: str, value: str) -> str | None:  # pragma: no cover - not used
        return None


def _inert_strings(obj: Any, cls: str | None = None) -> list[str]:
    """String leaves of the shipped data that re-keying keeps (not under an id field)."""
    out: list[str] = []
    if isinstance(obj, dict):
        for k, v in obj.items():
            if k in DICT_KEY_CLASS and isinstance(v, dict):
                for vv in v.values():
                    out.extend(_inert_strings(vv))
            else:
                out.extend(_inert_strings(v, KEY_CLASS.get(k)))
    elif isinstance(obj, list):
        for v in obj:
            out.extend(_inert_strings(v, cls))
    elif isinstance(obj, str) and cls is None:
        out.append(obj)
    return out


@cache
def _domain_problems(domain: str) -> list[str]:
    """Checks of the shipped data and the branch specs (they depend on the domain only)."""
    orig = originals(domain)
    probs = []
    inert = set()
    for rows in load_world(domain).tables.values():
        for row in rows.values():
            inert.update(_inert_strings(row))
    for text in sorted(inert):
        hits = [v for _, v in orig.automaton.iter(text.casefold())]
        if hits:
            probs.append(f"covered: shipped content {text!r} contains original id {hits[0]!r}")
    for idx in range(len(load_tasks(domain))):
        if branch.has_spec(domain, idx):
            shipped = load_tasks(domain)[idx]
            d = branch.derive(domain, idx, None)
            if d.actions != list(shipped["actions"]) or d.outputs not in (None, list(shipped["outputs"])):
                probs.append(f"faithful: branch spec of task {idx} does not re-derive the shipped actions and outputs")
    return probs[:20]


class Auditor:
    """Runs the five checks; caches per-domain and per-seed work so auditing stays cheap.

    ``determinism=False`` skips the second build (for quick looks; the CLI and bench keep it on).
    """

    def __init__(self, determinism: bool = True) -> None:
        self.determinism = determinism
        self._seed: dict[tuple[str, int], tuple[list[str], KeyMap | None]] = {}
        self._expected: dict[tuple[str, int, str, str], tuple[tuple[str, ...], list[tuple[str, str, str]], list[str]]] = {}
        self._wants: dict[tuple[str, str, int, str, str], list[tuple[str, str, IdTemplate]]] = {}

    # -- once per domain -------------------------------------------------------------------
    def domain_problems(self, domain: str) -> list[str]:
        return _domain_problems(domain)

    # -- once per seed ---------------------------------------------------------------------
    def seed_problems(self, domain: str, seed: int, km: KeyMap) -> tuple[list[str], KeyMap | None]:
        key = (domain, seed)
        if key not in self._seed:
            orig = originals(domain)
            probs = []
            for cls, fwd in km.forward.items():
                fresh = set(fwd.values())
                if len(fresh) != len(fwd):
                    probs.append(f"injective: {cls} map has {len(fwd) - len(fresh)} collisions")
                own = orig.by_class.get(cls, frozenset())
                if not own.isdisjoint(fresh):
                    probs.append(f"injective: a fresh {cls} equals an original")
                # The inverse map is exactly the forward map turned round (a dict comparison in C).
                if km.backward.get(cls, {}) != dict(zip(fwd.values(), fwd.keys(), strict=True)):
                    probs.append(f"injective: {cls} inverse map disagrees")
            joined = "\n".join(v for fwd in km.forward.values() for v in fwd.values())
            leaks = orig.leaks(joined)
            if leaks:
                probs.append(f"covered: fresh ids contain original {leaks[0]!r} ({len(leaks)} leaks)")
            twin = None
            if self.determinism:
                twin = KeyMap.build(domain, seed)
                if map_digest(twin) != map_digest(km):
                    probs.append("deterministic: a second map at the same seed differs")
            if len(self._seed) > 8:
                self._seed.clear()
            self._seed[key] = (probs, twin)
        return self._seed[key]

    # -- once per (task, branch) -------------------------------------------------------------
    def expected(
        self, domain: str, index: int, deriv: branch.Derivation, semantics: str = DEFAULT_SEMANTICS
    ) -> tuple[tuple[str, ...], list[tuple[str, str, str]], list[str]]:
        key = (domain, index, deriv.patch_key, semantics)
        if key not in self._expected:
            state = State(load_world(domain), None, deriv.patches(), deriv.patch_key, semantics)
            run = run_actions(domain, state, deriv.actions)
            probs = [] if state.diff() == state.diff(full=True) else ["faithful: a tool changed an entity it did not declare"]
            self._expected[key] = (run.errors, state.diff(), probs)
        return self._expected[key]

    def _want(
        self, domain: str, index: int, patch_key: str, exp_diff: list[tuple[str, str, str]], semantics: str = DEFAULT_SEMANTICS
    ) -> list[tuple[str, str, IdTemplate]]:
        key = ("want", domain, index, patch_key, semantics)
        if key not in self._wants:
            self._wants[key] = [(t, k, make_template(loads(x))) for t, k, x in exp_diff]
        return self._wants[key]

    # -- per instance ----------------------------------------------------------------------
    def audit(self, domain: str, index: int, seed: int, km: KeyMap | None = None, semantics: str = DEFAULT_SEMANTICS) -> AuditRow:
        """Generate instance (domain, index, seed) under ``semantics`` and audit it."""
        km = km if km is not None else world_map(domain, seed)
        inst, skm, deriv = generate_full(domain, index, seed, km, semantics)
        return self.check(inst, skm, deriv, km)

    def check(self, inst: Instance, skm: KeyMap, deriv: branch.Derivation, km: KeyMap) -> AuditRow:
        domain, index, seed = inst.domain, inst.task_index, inst.seed
        orig = originals(domain)
        problems = list(self.domain_problems(domain))
        seed_probs, twin = self.seed_problems(domain, seed, km)
        problems += seed_probs

        # injectivity of the task's own extensions
        for cls, fwd in skm.forward.items():
            vals = list(fwd.values())
            base_back = km.backward.get(cls, {})
            if len(set(vals)) != len(vals) or any(v in base_back or v in orig.by_class.get(cls, ()) for v in vals):
                problems.append(f"injective: task extension map of {cls} collides")

        # coverage of everything the instance carries
        actions_text = dumps(inst.actions)
        texts = [
            inst.instruction,
            inst.user_id,
            *inst.outputs,
            actions_text,
            *(t for row in inst.goal_delta for t in row),
            *inst.catalog_patch,
        ]  # the patch keys name catalog ids too
        hits = orig.leaks("\n".join(texts))  # one pass; the separator keeps matches inside one text
        if hits:
            where = next(t for t in texts if hits[0].casefold() in t.casefold())
            problems.append(f"covered: original {hits[0]!r} in fresh text {where[:60]!r}")
        plan = task_plan(domain, index)
        user = load_world(domain).tables["users"].get(plan.task["user_id"])
        if user is not None:
            private = {user["address"]["zip"], *plan.extra.get("last4", set())}
            # Strings only: an amount that happens to equal a last-four is shipped content, not an id.
            # The string literals of the actions' JSON text (keys included) hold every digit group of
            # the decoded strings; an escape can only add groups (a false alarm, never a miss).
            strings = " ".join(_JSON_STRING.findall(actions_text))
            words = set(_DIGITS.findall(inst.instruction + " " + strings))
            if private & words:
                problems.append(f"covered: the task user's zip/last-four {sorted(private & words)[0]!r} survives")

        # determinism
        if twin is not None:
            again = generate_full(domain, index, seed, twin, inst.semantics)[0]
            if again != inst:
                problems.append("deterministic: regenerating at the same seed gives a different instance")

        # faithfulness
        exp_errors, exp_diff, exp_probs = self.expected(domain, index, deriv, inst.semantics)
        problems += exp_probs
        if tuple(inst.errors) != exp_errors:
            problems.append(f"faithful: error pattern {inst.errors} != shipped {list(exp_errors)}")

        # solvability: the fresh goal is the re-keyed shipped goal; id-bearing outputs are observable
        # Fill the shipped goal's templates with this instance's ids, compare as data (key order and
        # the order of id-sorted lists aside).
        transport = _Transport(skm, orig.by_class)
        want = {
            (t, transport.fwd(_table_cls(t), k)): tpl for t, k, tpl in self._want(domain, index, deriv.patch_key, exp_diff, inst.semantics)
        }
        got = {(t, k): x for t, k, x in inst.goal_delta}
        if set(want) != set(got) or any(not _same_entity(tpl.fill(transport), got[key]) for key, tpl in want.items()):
            problems.append("solvable: the fresh goal state is not the re-keyed shipped goal state")
        if any(not o for o in inst.outputs):
            problems.append("solvable: an empty required output")
        for text, spans in zip(plan.task["outputs"], plan.output_spans, strict=True):
            for sp in spans:
                if sp.cls in SUBSTRING_CLASSES and skm.fwd(sp.cls, sp.value) not in km.backward.get(sp.cls, {}):
                    problems.append(f"solvable: output id {sp.value!r} of {text!r} has no counterpart in the fresh world")

        flags = {c: not any(p.split(":", 1)[0] == c for p in problems) for c in CHECKS}
        return AuditRow(inst.key, domain, index, seed, inst.branch, problems=problems, **flags)


#: Fields the tools store sorted by id: their order legitimately changes under re-keying.
_SORTED_FIELDS = ("exchange_items", "exchange_new_items", "return_items")


def _same_entity(want: str, got: str) -> bool:
    """Equal as data; equal text (the common case: keys already sorted in both) short-cuts the parse."""
    return want == got or _norm(loads(want)) == _norm(loads(got))


def _norm(ent: Any) -> Any:
    if isinstance(ent, dict):
        for k in _SORTED_FIELDS:
            if isinstance(ent.get(k), list):
                ent[k] = sorted(ent[k])
    return ent


def _table_cls(table: str) -> str:
    return TABLE_CLASS[table]
