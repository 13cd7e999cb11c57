"""``contam report`` over real outputs of the real commands: scan, decontaminate, perturb,
minkprob and zerocot with the embedded model, regen, stats power; both writers; escaping of
hostile benchmark text, document ids and file names."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from markdown_it import MarkdownIt

from contam.cli.main import main
from contam.outputs import write_json
from contam.report import build_report, render
from contam.report.html_writer import render_html
from contam.report.markdown_writer import md_code, md_text, render_markdown
from contam.report.model import Report, SectionBuilder, code, mark, pval, text

EVIL = "<script>alert(1)</script> | pipe | `tick` **bold** &lt;b&gt; [link](javascript:alert(2)) _x_"


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Real outputs of the demo's commands on small inputs (about 15 CPU seconds, most in the model)."""
    from contam.data.webtext import build_demo_corpus
    from contam.stats.power import power_report

    d = tmp_path_factory.mktemp("runs")
    corpus = d / "corpus.jsonl"
    build_demo_corpus(corpus, seed=0)
    r = {
        "scan": d / "scan",
        "log": d / "clean.jsonl.log.jsonl",
        "ref": d / "ref",
        "mink": d / "mink",
        "zcp": d / "zcp",
        "regen": d / "regen",
        "power": d / "power.json",
        "evd": d / "evd",
        "replay": d / "replay",
    }
    assert main(["scan", "-b", "gsm8k", "-b", "humaneval", "-b", "mmlu", "--corpus", str(corpus), "--out", str(r["scan"])]) == 0
    assert main(["decontaminate", "--corpus", str(corpus), "--scan", str(r["scan"]), "--out", str(d / "clean.jsonl")]) == 0
    assert main(["perturb", "-b", "gsm8k", "--limit", "6", "--per-item", "1", "--out", str(r["ref"])]) == 0
    assert (
        main(["probe", "minkprob", "-b", "gsm8k", "-n", "3", "--field", "question", "--control", str(r["ref"]), "--out", str(r["mink"])])
        == 0
    )
    assert (
        main(
            [
                "probe",
                "zerocot",
                "-b",
                "gsm8k",
                "-n",
                "2",
                "--reference",
                str(r["ref"]),
                "--max-cot-tokens",
                "8",
                "--max-answer-tokens",
                "6",
                "--truncation",
                "",
                "--resamples",
                "200",
                "--out",
                str(r["zcp"]),
            ]
        )
        == 0
    )
    assert main(["regen", "--domain", "retail", "--seeds", "0:1", "--tasks", "0:3", "--out", str(r["regen"])]) == 0
    write_json(r["power"], power_report(115).to_dict())  # what `contam stats power --json` prints
    assert main(["eval-detectors", "-b", "gsm8k", "--n", "6", "--levels", "token", "--out", str(r["evd"])]) == 0
    assert main(["regen", "replay", "--domain", "retail", "--out", str(r["replay"])]) == 0
    return r


def _summary(p: Path) -> dict:
    return json.loads((p / "summary.json").read_text(encoding="utf-8"))


def _strict_json(text: str) -> dict:
    def no_nan(x: str) -> None:
        raise AssertionError(f"non-standard JSON constant {x}")

    return json.loads(text, parse_constant=no_nan)


def test_report_shows_every_result_with_its_statistics(runs: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    paths = [str(runs[k]) for k in ("scan", "log", "ref", "mink", "zcp", "regen", "power")]
    html_out, md_out, js_out = tmp_path / "r.html", tmp_path / "r.md", tmp_path / "r.json"
    for out in (html_out, md_out, js_out):
        assert main(["report", *paths, "--out", str(out)]) == 0
    assert "wrote" in capsys.readouterr().out
    page, md = html_out.read_text(encoding="utf-8"), md_out.read_text(encoding="utf-8")
    scan, mink, zcp = _summary(runs["scan"]), _summary(runs["mink"]), _summary(runs["zcp"])
    for doc in (page, md):
        # one section per result, in the order given
        kinds = re.findall(r"\((scan|decontaminate|perturb|minkprob|zerocot|regen|power)\)", doc)
        assert kinds[:7] == ["scan", "decontaminate", "perturb", "minkprob", "zerocot", "regen", "power"]
        assert f"{scan['flagged']:,} of {scan['documents']:,}" in doc
        assert "Contaminated documents found" in doc
        # verdicts with their test, p-value and interval, never a bare number
        head = next(m for m in mink["methods"] if m["method"] == mink["primary"])
        assert f"p = {pval(head['test']['p_value'])}" in doc and "Mann-Whitney U" in doc and "95% CI" in doc
        prim = next(m for m in zcp["metrics"] if m["metric"] == zcp["primary_metric"])
        assert f"p = {pval(prim['test']['p_value'])}" in doc and "exact McNemar" in doc
        assert "Contamination Confidence" in doc
        assert "1,565" in doc  # n per arm for a 5-point gap at a 50% baseline (stats power)
        assert "0 of 3 regenerated instances invalid" in doc
    # the first flagged documents, with their item and the evidence highlighted
    first = next(json.loads(line) for line in (runs["scan"] / "flags.jsonl").read_text(encoding="utf-8").splitlines())
    assert first["doc_id"] in page and first["flags"][0]["item_id"] in page
    assert page.count("<mark>") >= min(scan["flagged"], 10)
    ev = next(e for e in first["flags"][0]["evidence"] if e["kind"] == "exact")
    assert f"<mark>{ev['text'][:40]}" in page.replace("&#x27;", "'").replace("&quot;", '"')
    merged = _strict_json(js_out.read_text(encoding="utf-8"))
    assert [r["kind"] for r in merged["results"]] == ["scan", "decontaminate", "perturb", "minkprob", "zerocot", "regen", "power"]
    assert merged["results"][0]["figures"]["flagged"] == scan["flagged"]
    assert merged["results"][3]["figures"]["p_value"] == head["test"]["p_value"]


def test_detector_evaluation_and_replay(runs: dict[str, Path]) -> None:
    rep, results = build_report([runs["evd"], runs["replay"]])
    assert [r.kind for r in results] == ["eval-detectors", "regen-replay"]
    md = render(rep, "md", results)
    report = json.loads((runs["evd"] / "report.json").read_text(encoding="utf-8"))
    row = next(r for r in report["reports"][0]["rows"] if r["method"] == "13-gram" and r["scenario"] == "S1")
    m = row["metrics"]
    assert f"| 13-gram | S1 | {m['tp']} | {m['fp']} | {m['fn']} | " in md  # confusion counts with Wilson intervals
    assert "recall \\[95% CI\\]" in md and "S3 (isomorphic) F1" in md
    replay = json.loads((runs["replay"] / "summary.json").read_text(encoding="utf-8"))[0]
    assert f"retail: {replay['clean']} of {replay['tasks']} replay clean" in md


def test_folder_of_results_and_member_files(runs: dict[str, Path]) -> None:
    parent = runs["scan"].parent
    rep, results = build_report([parent])
    kinds = [r.kind for r in results]
    assert kinds == [
        "scan",
        "decontaminate",
        "eval-detectors",
        "perturb",
        "minkprob",
        "zerocot",
        "regen",
        "regen-replay",
        "power",
    ]  # data side first
    assert any("corpus.jsonl" in s for s in rep.skipped)  # the corpus itself is not a result, and says so
    _, one = build_report([runs["scan"] / "flags.jsonl"])  # a member file means its folder
    assert [r.kind for r in one] == ["scan"]


def test_unknown_input_is_one_clear_error(runs: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    odd = tmp_path / "notes.json"
    odd.write_text('{"hello": 1}', encoding="utf-8")
    assert main(["report", str(runs["scan"]), str(odd), "--out", str(tmp_path / "r.html")]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "notes.json" in err
    assert not (tmp_path / "r.html").exists()  # nothing half-written
    bad = tmp_path / "broken.json"
    bad.write_text('{"documents": 1,\n oops}', encoding="utf-8")
    assert main(["report", str(bad)]) == 2
    assert "broken.json:2" in capsys.readouterr().err
    assert main(["report", str(runs["scan"]), str(odd), "--skip-unknown", "--format", "md", "--out", str(tmp_path / "r.md")]) == 0
    assert "notes.json" in capsys.readouterr().err and (tmp_path / "r.md").exists()


def test_hostile_text_is_escaped_everywhere(tmp_path: Path) -> None:
    question = (
        "Tom has 12 apples and buys 30 more at the market every Sunday morning; "
        + EVIL
        + " how many apples does Tom have after three Sundays at the market in total?"
    )
    bench = tmp_path / "bench.jsonl"
    bench.write_text(json.dumps({"id": "evil|<script>`1`", "question": question, "answer": "102"}) + "\n", encoding="utf-8")
    corpus = tmp_path / "corpus.jsonl"
    docs = [
        {"id": "doc<script>alert(3)</script>|x", "text": "Intro | with `ticks` and **stars**.\n\n" + question + "\nOutro <b>bye</b>"},
        {"id": "clean", "text": "Nothing to see here, just some ordinary words about gardens and rain."},
    ]
    corpus.write_text("".join(json.dumps(d) + "\n" for d in docs), encoding="utf-8")
    out = tmp_path / "run <script>|`x`"
    assert main(["scan", "-b", str(bench), "--corpus", str(corpus), "--out", str(out)]) == 0
    assert _summary(out)["flagged"] == 1
    rep, results = build_report([out])
    page = render(rep, "html", results)
    assert "<script" not in page.lower() and 'href="javascript' not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert "&lt;script&gt;alert(3)&lt;/script&gt;" in page  # document id
    assert "run &lt;script&gt;" in page  # folder name
    assert "&amp;lt;b&amp;gt;" in page  # an entity in the data shows as written
    assert "<mark>" in page
    assert "Content-Security-Policy" in page and "default-src &#x27;none&#x27;" not in page  # the CSP is ours, not escaped
    md = render(rep, "md", results)
    rendered = MarkdownIt("commonmark", {"html": True}).enable("table").render(md)
    # raw HTML is allowed by this parser, so any escaping hole would surface here as a tag
    assert "<script" not in rendered.lower() and "<b>bye" not in rendered
    assert "<strong>bold</strong>" not in rendered and "<a href" not in rendered
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in rendered and "**bold**" in rendered
    # every table row has exactly its header's columns
    tables = re.findall(r"<table>.*?</table>", rendered, flags=re.S)
    assert any("evil|&lt;script&gt;" in t and "doc&lt;script&gt;" in t for t in tables)  # the flagged-documents table
    for table in tables:
        head = len(re.findall(r"<th[ >]", table.split("</thead>")[0]))
        for row in re.findall(r"<tr>(.*?)</tr>", table.split("<tbody>")[1], flags=re.S) if "<tbody>" in table else []:
            assert len(re.findall(r"<td[ >]", row)) == head
    assert "evil|&lt;script&gt;" in rendered and "doc&lt;script&gt;alert(3)" in rendered


def test_markdown_escapes() -> None:
    assert md_text("a|b") == "a\\|b"
    assert md_text("**x** _y_ `z` <i> [l] & # $ ~") == "\\*\\*x\\*\\* \\_y\\_ \\`z\\` \\<i\\> \\[l\\] \\& \\# \\$ \\~"
    assert md_text("one\ntwo") == "one<br>two"
    assert md_code("a``b") == "``` a``b ```"
    assert md_code("a|b", table=True) == "`a\\|b`"
    md = MarkdownIt("commonmark").render(md_code("x ``` y"))
    assert "<code>x ``` y</code>" in md


_PIECES = st.sampled_from(
    [*"<>|`*_[]()!&#;\\\n\r ~$-+=.1aZ\"'/:", "<script>", "&lt;", "javascript:", "<br>", "```", "\u2028", "http://x.y"]
)
_HOSTILE = st.lists(_PIECES, max_size=25).map("".join)
_MD_TAGS = {"p", "br", "code", "strong", "em", "table", "thead", "tbody", "tr", "th", "td", "h1", "h2", "ol", "li", "blockquote"}


@settings(max_examples=150, deadline=None)
@given(_HOSTILE, _HOSTILE, _HOSTILE)
def test_any_text_stays_text(a: str, b: str, c: str) -> None:
    """Whatever the strings, the writers' markup is the only markup, and a table keeps its columns."""
    s = SectionBuilder(a, kind="k", source=b)
    s.headline(text(a), code(b), mark(c))
    s.para(c, code(a))
    s.table(["x", "y", "z"], [[text(a), code(b), mark(c)], [c, a, b]])
    s.excerpt([code(a)], [text(b), mark(c)])
    rep = Report(c, (s.build(),))
    out = MarkdownIt("commonmark", {"html": True}).enable("table").render(render_markdown(rep))
    assert set(re.findall(r"</?([a-zA-Z][a-zA-Z0-9]*)", out)) <= _MD_TAGS
    tables = re.findall(r"<table>.*?</table>", out, flags=re.S)
    assert len(tables) == 1
    for row in re.findall(r"<tr>(.*?)</tr>", tables[0].split("<tbody>")[1], flags=re.S):
        assert len(re.findall(r"<td[ >]", row)) == 3
    body = render_html(rep).split("<body>")[1]
    assert set(re.findall(r"</?([a-zA-Z][a-zA-Z0-9]*)", body)) <= _MD_TAGS | {
        "section",
        "span",
        "a",
        "figure",
        "figcaption",
        "caption",
        "mark",
        "body",
        "html",
    }
