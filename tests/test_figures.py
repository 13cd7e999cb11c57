"""Figure code (Asymptote, TikZ) left out of what the semantic level compares: MATH problems with
their figures as benchmark items, rewordings that drop the figure or draw one of their own.

The three problems are MATH test problems (hendrycks/math, MIT licence, Copyright (c) 2021 Dan
Hendrycks), verbatim; the rewordings were written for this test. Without figure stripping none of
the three is flagged (the shortlist drops all three: the drawing code is most of each text)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from contam.data import Item, load_benchmark
from contam.scan.figures import strip_figures, without_figures
from contam.scan.semantic import SemanticConfig, SemanticScanner
from contam.scan.shortlist import CUT

CONTAM = str(Path(sys.executable).with_name("contam"))

MATH = [
    (
        "math/test/circle",
        "A circle with center $C$ is shown. Express the area of the circle in terms of $\\pi$. [asy]\nsize(200); import graph; "
        'import markers; defaultpen(linewidth(0.7));\nxaxis("$x$",-5,11,Arrows);\nyaxis("$y$",-7,7,Arrows);\n'
        'draw(Circle((3,1),5));\ndot(Label("$C(3,1)$",align=N),(3,1));\ndot(Label("$(8,1)$",align=N),(8,1));\n[/asy]',
    ),
    (
        "math/test/paths",
        "How many paths are there from $C$ to $D$ on the grid shown, if every step must be down or to the right?[asy]size(4cm,4cm);"
        "int w=5;int h=7;int i;for (i=0; i<h; ++i){draw((0,i) -- (w-1,i));}for (i=0; i<w; ++i){draw((i, 0)--(i,h-1));}"
        'label("D", (w-1,0), SE);label("C", (0,h-1), NW);[/asy]',
    ),
    (
        "math/test/triangle",
        "What, in degrees, is the measure of the largest angle in $\\triangle PQR?$\n\n[asy]\ndraw((0,0)--(-1.3,4)--(7,0)--cycle);\n"
        'label("$P$",(-1.3,4),NW); label("$Q$",(0,0),SW); label("$R$",(7,0),SE);\n\nlabel("$6x^\\circ$",(0,0),NE); '
        'label("$x^\\circ$",(5,0),N); label("$3x^\\circ$",(-.25,3));\n[/asy]',
    ),
]
DOCS = [
    # figure dropped
    "Counting only moves down or to the right, how many different routes lead from $C$ to $D$ on the grid in the figure?",
    # a figure of the rewrite's own, as LLM rewrites of MATH add
    'Given the circle centred at $C$ in the figure, write its area in terms of $\\pi$. [asy] draw(Circle((0,0),2)); label("$C$",(0,0),N); [/asy]',
    # LaTeX's asy environment
    "In $\\triangle PQR$ below, how many degrees does its largest angle measure? \\begin{asy} draw((0,0)--(1,3)--(6,0)--cycle); \\end{asy}",
]
TRUTH = ["math/test/paths", "math/test/circle", "math/test/triangle"]


def test_strip_figures_keeps_the_problem_statement() -> None:
    assert strip_figures(MATH[1][1]) == (
        "How many paths are there from $C$ to $D$ on the grid shown, if every step must be down or to the right?",
        1,
    )
    assert strip_figures(MATH[2][1]) == ("What, in degrees, is the measure of the largest angle in $\\triangle PQR?$", 1)
    # a block cut off by truncation is code to the end; TikZ too; text without figures untouched
    assert strip_figures("Find $x$. [asy] draw((0,0)--(1,") == ("Find $x$.", 1)
    assert strip_figures("A \\begin{tikzpicture}\\draw (0,0);\\end{tikzpicture} B.") == ("A B.", 1)
    text = "Janet's ducks lay 16 eggs per day. [1] See [asymptote docs]."
    assert strip_figures(text) == (text, 0)


def test_without_figures_returns_the_same_item_when_there_is_none() -> None:
    plain = Item(id="x/1", question="What is 2 + 2?", solution="4")
    assert without_figures(plain) is plain
    fig = without_figures(Item(id=MATH[0][0], question=MATH[0][1], solution="The radius is 5 [asy]draw((0,0));[/asy], so $25\\pi$."))
    assert fig.id == MATH[0][0] and "[asy]" not in fig.question and fig.solution == "The radius is 5, so $25\\pi$."


@pytest.fixture(scope="module")
def scanner() -> SemanticScanner:
    items = load_benchmark("gsm8k")[:300] + [Item(id=i, question=q, benchmark="math") for i, q in MATH]
    return SemanticScanner(SemanticConfig()).fit(items)


def test_rewordings_of_math_problems_with_figures_are_found_with_the_defaults(scanner: SemanticScanner) -> None:
    s = scanner.score(DOCS)
    assert [scanner.items[int(j)].id for j in s.nearest[:, 0]] == TRUTH
    assert s.flagged(scanner.config.threshold, scanner.config.rule).all()
    flag = scanner.flag("doc1", 1, s, text=DOCS[1])
    assert flag.item_id == "math/test/circle"
    assert all("[asy]" not in e.text for e in flag.evidence)  # the evidence shows what was compared


def test_precomputed_item_vectors_are_remade_for_items_with_figures(scanner: SemanticScanner) -> None:
    items = [Item(id=i, question=q, benchmark="math") for i, q in MATH]
    raw = scanner.primary.embed([it.text for it in items])  # vectors of the texts *with* their figures
    sem = SemanticScanner(SemanticConfig()).fit(items, item_embeddings=raw)
    fresh = scanner.primary.embed([without_figures(it).text for it in items])
    assert abs(sem.primary.item_vecs - fresh).max() < 1e-5


def test_cli_scan_of_math_problems_and_the_shortlist_switch(tmp_path: Path) -> None:
    """End to end: a benchmark file of MATH problems among GSM8K questions. The default scan finds the
    rewordings of the figure problems and two short LaTeX-free rewordings that the first shortlist
    (static vectors and plain word overlap only) dropped; a thresholds file turning the
    shortlist off (``semantic_shortlist``) embeds every document, an unrelated one too."""
    more = [  # MATH train problems (MIT, as above)
        (
            "math/train/balls",
            "How many ways are there to put 4 balls in 3 boxes if the balls are not distinguishable and neither are the boxes?",
        ),
        ("math/train/five", "What is the least five-digit positive integer which is congruent to 5 (mod 15)?"),
    ]
    bench, corpus = tmp_path / "math.jsonl", tmp_path / "corpus.jsonl"
    rows = [{"id": it.id, "question": it.question} for it in load_benchmark("gsm8k")[:300]] + [
        {"id": i, "question": q} for i, q in MATH + more
    ]
    bench.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    dropped = [
        "Four identical balls go into three identical boxes. Count the possible arrangements.",
        "Compute the smallest 5-digit number that is 5 more than a multiple of 15.",
    ]
    unrelated = "Permission is hereby granted, free of charge, to any person obtaining a copy of this software."
    corpus.write_text(
        "".join(json.dumps({"id": f"d{k}", "text": t}) + "\n" for k, t in enumerate([*DOCS, *dropped, unrelated])), encoding="utf-8"
    )
    scores: dict[str, dict] = {}
    summary: dict = {}

    def flagged(*extra: str) -> dict[str, str]:
        out = tmp_path / f"o{len(extra)}"
        p = subprocess.run(
            [CONTAM, "scan", "-b", str(bench), "-c", str(corpus), "--out", str(out), "--levels", "semantic", "--all", *extra],
            capture_output=True,
            text=True,
            env={**os.environ, "CONTAM_PROGRESS": "0"},
            timeout=600,
        )
        assert p.returncode == 0, p.stderr
        recs = [json.loads(x) for x in (out / "flags.jsonl").read_text(encoding="utf-8").splitlines()]
        scores.update({r["doc_id"]: r.get("scores") or {} for r in recs})
        summary.clear()
        summary.update(json.loads((out / "summary.json").read_text(encoding="utf-8")))
        return {r["doc_id"]: r["flags"][0]["item_id"] for r in recs if r["contaminated"]}

    found = {"d0": TRUTH[0], "d1": TRUTH[1], "d2": TRUTH[2], "d3": "math/train/balls", "d4": "math/train/five"}
    assert flagged() == found
    assert all(scores[d]["shortlist_probability"] >= CUT for d in ("d3", "d4"))
    assert "cosine" not in scores["d5"] and scores["d5"]["shortlist_probability"] < CUT  # dropped: never embedded
    assert summary["semantic_shortlist"] == {"judged": 6, "embedded": 5, "not_embedded": 1, "cut": CUT}
    th = tmp_path / "full.json"
    th.write_text(json.dumps({"semantic_rule": "learned", "semantic": 0.5, "semantic_shortlist": False}), encoding="utf-8")
    assert flagged("--thresholds", str(th)) == found
    assert "cosine" in scores["d5"] and "shortlist_probability" not in scores["d5"]
    assert "semantic_shortlist" not in summary
    th.write_text(json.dumps({"semantic_shortlist": "no"}), encoding="utf-8")
    p = subprocess.run(
        [CONTAM, "scan", "-b", str(bench), "-c", str(corpus), "--out", str(tmp_path / "bad"), "--thresholds", str(th)],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert p.returncode == 2 and "semantic_shortlist" in p.stderr and "Traceback" not in p.stderr
