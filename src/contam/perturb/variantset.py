"""Variant sets: isomorphic instances for math word problems, permutations for multiple choice.

The one call other modules need::

    >>> from contam.data import load_benchmark
    >>> from contam.perturb import make_variant_set
    >>> ref = make_variant_set(load_benchmark("gsm8k")[:20], variants=1, seed=0)
    >>> all(v.answer != v.original_answer for v in ref)
    True

Every symbolic instance has passed the full audit (:mod:`contam.perturb.audit`); items that
cannot be templated or instantiated get no variant (:func:`build_variant_set` says why).
"""

from __future__ import annotations

import dataclasses
import hashlib
import random
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from contam.data.items import Item
from contam.errors import ConfigError, InputError
from contam.perturb.audit import CHECKS, audit_instance, faithful, instance_hash
from contam.perturb.choices import mask_option, permute
from contam.perturb.instantiate import SamplerStats, draw
from contam.perturb.mentions import find_mentions
from contam.perturb.names import swap_names
from contam.perturb.records import AuditReport, Rejection, Template, TemplateConstraint, Variant
from contam.perturb.symbolic import SymbolicConfig, lift
from contam.perturb.vetting import original_defect, vet
from contam.progress import track

KINDS = ("auto", "symbolic", "permute", "mask")


@dataclass
class VariantSet:
    """What a build produced: the variants, the audit counts, and why items were left out."""

    variants: list[Variant]
    report: AuditReport
    rejections: list[Rejection] = field(default_factory=list)
    templates: dict[str, Template] = field(default_factory=dict)


def instances(
    template: Template,
    n: int,
    seed: int = 0,
    *,
    budget: int = 400,
    max_tries: int | None = None,
    failures: dict[str, int] | None = None,
    stats: SamplerStats | None = None,
    distinct: bool = True,
    wide_tier: bool = True,
    names: bool = False,
    label: str = "",
) -> list[Variant]:
    """Up to ``n`` audited instances of ``template`` (distinct questions unless ``distinct=False``).

    Instance ``k`` is drawn at index ``k`` first; duplicates and audit failures move on to later
    indices, at most ``max_tries`` (default ``4*n``) of them. When the same-digits ranges admit
    fewer than ``n`` distinct instances, the wider tier of :func:`~contam.perturb.instantiate.slot_range`
    fills the rest (``metadata["tier"]`` says which; ``wide_tier=False`` turns it off). With
    ``names=True`` listed person names are swapped too (after the audit, which the swap cannot
    affect: it touches no number; the hash covers the emitted text). Failing
    instances are never returned; their failed checks are counted in ``failures``.
    """
    out: list[Variant] = []
    seen: set[str] = set()
    if not faithful(template):
        if failures is not None:
            failures["faithfulness"] = failures.get("faithfulness", 0) + 1
        return out
    tries = max_tries if max_tries is not None else 4 * n
    # First tier: same digits and roundness. Second tier, only when the first admits fewer than n
    # distinct instances: the wider window of the same order of magnitude.
    for wide in (False, True):
        tier = label + ("wide" if wide else "")  # in the variant id
        tier_name = label + ("wide" if wide else "same-digits")  # in the metadata
        exhausted = 0
        for index in range(tries):
            if len(out) >= n:
                break
            d = draw(template, seed, index, budget=budget, stats=stats, wide=wide)
            if d is None:
                if stats is not None:
                    stats.add("budget_exhausted")
                exhausted += 1
                if exhausted >= 2 and exhausted > len(out):  # a template that rarely admits a draw: stop early
                    break
                continue
            bad = audit_instance(template, d, seed=seed, index=index, wide=wide)
            if bad:
                if failures is not None:
                    for b in bad:
                        failures[b] = failures.get(b, 0) + 1
                continue
            if distinct and d.question in seen:
                continue
            seen.add(d.question)
            question, solution, swapped = d.question, d.solution, {}
            if names:
                question, solution, swapped = swap_names(
                    d.question, d.solution, random.Random(f"{template.id}|{seed}|{index}|{wide}|names")
                )
                if [m.value for m in find_mentions(question)] != [m.value for m in find_mentions(d.question)]:
                    question, solution, swapped = d.question, d.solution, {}  # a name next to a number: keep the audited text
            digest = instance_hash(template, seed, index, d, wide)
            if swapped:
                digest = hashlib.sha256((digest + question + solution).encode()).hexdigest()
            out.append(
                Variant(
                    original_id=template.item_id,
                    variant_id=f"{template.item_id}#s{seed}.{tier}{index}",
                    kind="symbolic",
                    seed=seed,
                    question=question,
                    answer=d.answer,
                    solution=solution,
                    template_id=template.id,
                    audit_hash=digest,
                    original_answer=template.answer,
                    values={k: str(v) for k, v in d.values.items()},
                    metadata={
                        "index": index,
                        "attempts": d.attempts,
                        "tier": tier_name,
                        "names": swapped,
                    },
                )
            )
        if len(out) >= n or not wide_tier:
            break
    return out


def cents_template(template: Template) -> Template | None:
    """``template`` with its whole-dollar results allowed to have cents, or None if it has none.

    The lifter marks the ``int`` constraint of a result the solution states in dollars with
    ``arg="$"``; here it becomes ``decimals`` 2. The id differs, so its instances have their own
    random streams and their own audit.
    """
    if re.search(r"\bround|\bnearest\b|\bwhole\s+(?:dollar|number)", template.question, re.IGNORECASE):
        return None  # "rounded to the nearest integer": the question asks for whole dollars (gsm8k/test/438)
    relaxed = tuple(TemplateConstraint("decimals", c.target, "2") if c.kind == "int" and c.arg == "$" else c for c in template.constraints)
    if relaxed == template.constraints:
        return None
    return dataclasses.replace(template, id=template.id + "+cents", constraints=relaxed)


def _kind_for(item: Item, kind: str) -> str:
    if kind != "auto":
        return kind
    if item.choices:
        return "permute"
    return "symbolic"


def build_variant_set(
    items: Iterable[Item],
    variants: int = 1,
    seed: int = 0,
    *,
    kind: str = "auto",
    config: SymbolicConfig | None = None,
    budget: int = 400,
    description: str = "perturbing",
    names: bool = False,
) -> VariantSet:
    """Variants for every item that allows them, with the audit report and the rejections."""
    if kind not in KINDS:
        raise ConfigError(f"unknown variant kind {kind!r} (expected one of {', '.join(KINDS)})")
    if variants < 1:
        raise ConfigError(f"variants must be at least 1, got {variants}")
    if budget < 1:
        raise ConfigError(f"budget must be at least 1 candidate assignment per instance, got {budget}")
    items = list(items)
    out: list[Variant] = []
    rejections: list[Rejection] = []
    templates: dict[str, Template] = {}
    failures: dict[str, int] = {}
    stats = SamplerStats()
    templated = covered = 0
    for item in track(items, description):
        k = _kind_for(item, kind)
        if k in ("permute", "mask"):
            if not item.choices:
                rejections.append(Rejection(item.id, "not_multiple_choice"))
                continue
            make = permute if k == "permute" else mask_option
            try:
                out.extend(make(item, seed, i) for i in range(variants))
            except InputError as e:  # "All of the above" is gold: no permutation keeps the item's meaning
                rejections.append(Rejection(item.id, f"{k}_refused", str(e)))
                continue
            templated += 1
            covered += 1
            continue
        defect = original_defect(item)
        if defect is not None:  # a faithful variant would copy the original's defect
            rejections.append(defect)
            continue
        t = lift(item, config)
        if not isinstance(t, Rejection):
            t = vet(t)
        if isinstance(t, Rejection):
            rejections.append(t)
            continue
        templated += 1
        templates[t.id] = t
        got = instances(t, variants, seed, budget=budget, failures=failures, stats=stats, names=names)
        if len(got) < variants and (tc := cents_template(t)) is not None:
            # Too few instances with whole dollars: money results may have cents ($2.50), as
            # prices do. Only for such items, so every other item's instances stay as they were.
            templates[tc.id] = tc
            seen = {v.question for v in got}
            more = instances(tc, variants - len(got), seed, budget=budget, failures=failures, stats=stats, names=names, label="cents")
            got += [v for v in more if v.question not in seen]
        if len(got) >= variants:
            covered += 1
        elif not got:
            rejections.append(Rejection(item.id, "sampling_exhausted", "no draw kept every constraint within the budget"))
        out.extend(got)
    reasons: dict[str, int] = {}
    for r in rejections:
        reasons[r.reason] = reasons.get(r.reason, 0) + 1
    report = AuditReport(
        items=len(items),
        templated=templated,
        covered=covered,
        instances=len(out),
        failures=failures,
        rejections=dict(sorted(reasons.items(), key=lambda kv: -kv[1])),
        sampling_exhausted=stats.rejected.get("budget_exhausted", 0),
        checks=CHECKS,
        frozen=_guard_counts(templates),
    )
    return VariantSet(out, report, rejections, templates)


def _guard_counts(templates: dict[str, Template]) -> dict[str, int]:
    out: dict[str, int] = {}
    for t in templates.values():
        for s in t.slots:
            if s.source.startswith("guard:"):
                out[s.source[6:]] = out.get(s.source[6:], 0) + 1
    return dict(sorted(out.items(), key=lambda kv: -kv[1]))


def make_variant_set(
    items: Sequence[Item] | Iterable[Item],
    variants: int = 1,
    seed: int = 0,
    *,
    kind: str = "auto",
    names: bool = False,
) -> list[Variant]:
    """Audited variants: symbolic isomorphs for GSM8K-style items, option permutations for multiple choice
    (``names=True`` also swaps listed person names)."""
    return build_variant_set(items, variants, seed, kind=kind, names=names).variants
