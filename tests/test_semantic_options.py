"""The ``options kept`` clause: a rewrite of a multiple-choice question that keeps every distinctive
option of its source is flagged, on real data -- PertEval's GPT-4 rewrites of MMLU professional
psychology (Apache-2.0, bench/data/independent/perteval_mmlu), options permuted, relabelled U-X and
moved before the question -- with the real embedded MiniLM and the shipped shortlist."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np

from contam.data import Item, load_benchmark
from contam.scan.choices import KEPT, OptionIndex
from contam.scan.semantic import SemanticConfig, SemanticScanner

DATA = Path(__file__).resolve().parents[1] / "bench" / "data" / "independent" / "perteval_mmlu"
_OPTION = re.compile(r"\n([A-D])\. ")


def _psychology() -> tuple[list[Item], dict[str, str]]:
    """The first 160 professional-psychology sources as MMLU items, and each one's rewrite with options."""
    items = []
    for line in (DATA / "sources.jsonl").read_text(encoding="utf-8").splitlines():
        r = json.loads(line)
        parts = _OPTION.split(r["text"])
        if r["id"].startswith("mmlu/professional_psychology/") and len(parts) == 9:
            items.append(Item(id=r["id"], question=parts[0], choices=tuple(parts[2::2]), benchmark="mmlu"))
    rewrites = {}
    for line in (DATA / "variants.jsonl").read_text(encoding="utf-8").splitlines():
        v = json.loads(line)
        if v["subtype"] == "perteval_with_options":
            rewrites[v["source"]] = v["text"]
    return items[:160], rewrites


def test_shared_quoted_and_numeric_options_do_not_count() -> None:
    items = [
        Item("a", "Which organelle makes ATP?", choices=("Mitochondrion", "Golgi apparatus", "Ribosome", "None of the above")),
        Item("b", "Which is a lipid?", choices=("Cholesterol", "Glucose molecule", "Keratin fibre", "None of the above")),
        Item("c", 'The passage says "we hold these truths"', choices=("we hold these truths", "unalienable rights", "1776", "consent")),
    ]
    idx = OptionIndex(items)
    assert idx.options[0] == (" golgi apparatus ", " mitochondrion ", " ribosome ")
    assert " we hold these truths " not in idx.options[2] and " 1776 " not in idx.options[2]
    assert idx.kept("U. ribosome\nV. None of the above\nW. Mitochondrion\nX. golgi apparatus\nWhere is ATP made?", 0) == 3
    assert idx.kept("ribosome, mitochondrion", 0) == 0  # every distinctive option, not two of three
    assert not OptionIndex(load_benchmark("gsm8k")[:50]).any  # no options: the clause costs nothing


def test_rewrites_keeping_their_options_are_flagged_and_others_are_not() -> None:
    items, rewrites = _psychology()
    seen, unseen = items[:120], items[120:]
    sem = SemanticScanner(SemanticConfig()).fit(seen)  # the defaults: learned rule, shortlist on
    docs = [rewrites[it.id] for it in seen[:40] if it.id in rewrites]
    others = [rewrites[it.id] for it in unseen if it.id in rewrites]
    s = sem.score(docs + others)
    flagged = s.flagged(0.5, "learned")
    kept = s.options_kept
    assert kept is not None
    n = len(docs)
    # PertEval keeps the options: most seen rewrites hold all of their source's distinctive ones.
    assert (kept[:n] >= KEPT).sum() >= 0.6 * n
    assert flagged[:n][kept[:n] > 0].all()
    # The rewrites of items not in the benchmark are not flagged by the clause (other items' options).
    assert not (kept[n:] > 0).any()
    # A flag the combiner alone would not raise names the clause and what it passed.
    by_clause = [i for i in np.flatnonzero(flagged[:n]) if s.probability is not None and not s.probability[i] >= 0.5]
    assert by_clause, "expected a rewrite flagged by its options alone"
    f = sem.flag("doc", int(by_clause[0]), s, text=docs[int(by_clause[0])])
    rule = [e.text for e in f.evidence if e.kind == "rule"]
    assert rule and rule[0].startswith("options kept: the document writes all") and f.score == 1.0
    assert f.scores["options_kept"] >= KEPT


def test_a_templates_options_are_left_out_before_comparing() -> None:
    """MMLU's abstract-algebra Statement items all end in the same four options; another such item
    written out with them (a document of MCQs with options) no longer meets the benchmark through
    them, while an item of the benchmark copied with its options is still a near copy. Real MMLU."""
    items = load_benchmark("mmlu")
    idx = OptionIndex(items)
    assert {" true true ", " false false ", " true false ", " false true ", " all of the above "} <= idx.shared
    assert " pure land " not in idx.shared  # a topic's option, offered by the three questions on it
    assert not any(o.strip().replace(" ", "").isdigit() for o in idx.shared)  # numbers tell a translation apart
    statements = [it for it in items if it.question.startswith("Statement 1 |") and "True, True" in it.choices]
    assert len(statements) >= 20
    held_out, bench = statements[:12], [it for it in items if it not in statements[:12]]
    text = held_out[0].text
    assert "True, True" in text and "True, True" not in idx.without_shared(text)
    sem = SemanticScanner(SemanticConfig()).fit(bench)
    s = sem.score([it.text for it in held_out] + [statements[20].text])
    flagged = s.flagged(0.5, "learned")
    assert flagged[:-1].sum() <= 1, "other Statement items with the template's options are not leaks"
    assert flagged[-1] and sem.items[int(s.nearest[-1, 0])].id == statements[20].id
