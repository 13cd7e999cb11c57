"""contam audit, model side, with the embedded SmolLM2: the variant set is built on the fly, the
probes run, a verdict on too few items is lowered and says what it lacks; killed mid-probe and
started again, the run loses no finished item."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from contam.cli.main import main

SRC = str(Path(__file__).resolve().parents[1] / "src")


def _lines(p: Path) -> list[str]:
    """Complete lines only (a kill may cut the last one short; the checkpoint drops such a line)."""
    if not p.exists():
        return []
    text = p.read_text(encoding="utf-8")
    return text[: text.rfind("\n") + 1].splitlines()


@pytest.mark.slow  # ~110 s of CPU (SmolLM2 generations); 6 min wall on the shared 2-core machine
def test_small_model_audit_is_lowered_and_says_what_it_lacks(tmp_path):
    run = tmp_path / "run"
    rc = main(
        [
            "audit",
            "-b",
            "gsm8k",
            "--model",
            "smollm2",
            "--limit",
            "4",
            "--k",
            "1",
            "--max-cot-tokens",
            "24",
            "--probes",
            "zerocot,minkprob",
            "--out",
            str(run),
            "--fail-on",
            "suspect",
        ]
    )
    v = json.loads((run / "verdict.json").read_text(encoding="utf-8"))
    (m,) = v["verdicts"]
    assert m["side"] == "model" and {c["probe"] for c in m["claims"]} == {"zerocot", "minkprob"}
    # 4 items are fewer than min_items (20): never clean or contaminated, and it says so
    assert m["verdict"] in ("inconclusive", "suspect")
    assert any(lim["what"] == "too few items" for lim in m["limitations"])
    if m["verdict"] == "inconclusive":
        assert any("more items" in x for x in m["lacks"])
    assert rc == 1  # --fail-on suspect: a suspect verdict fails it, and so does an inconclusive one (issue 32.7)
    for c in m["claims"]:
        assert 0.0 <= c["confidence"] <= 1.0
    page = (run / "report.html").read_text(encoding="utf-8")
    assert page.count("<svg") >= 3  # accuracy with CIs, truncation curve, Min-K% vs control
    assert {p.name for p in (run / "figures").glob("*.png")} >= {"gsm8k-accuracy.png", "gsm8k-truncation.png", "gsm8k-minkprob.png"}
    assert (run / "gsm8k" / "reference" / "variants.jsonl").exists()


@pytest.mark.slow
def test_kill_and_resume_loses_no_finished_item(tmp_path):
    run = tmp_path / "run"
    argv = [
        sys.executable,
        "-c",
        "import sys; from contam.cli.main import run; run()",
        "audit",
        "-b",
        "gsm8k",
        "--model",
        "smollm2",
        "--limit",
        "6",
        "--k",
        "1",
        "--max-cot-tokens",
        "48",
        "--probes",
        "zerocot",
        "--out",
        str(run),
    ]
    env = {**os.environ, "PYTHONPATH": SRC + os.pathsep + os.environ.get("PYTHONPATH", ""), "CONTAM_PROGRESS": "0"}
    items = run / "gsm8k" / "zerocot" / "items.jsonl"
    proc = subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.time() + 600
        while len(_lines(items)) < 2 and time.time() < deadline and proc.poll() is None:
            time.sleep(0.2)
        assert proc.poll() is None, "the audit finished before it could be killed"
        proc.send_signal(signal.SIGKILL)
        proc.wait(30)
    finally:
        if proc.poll() is None:
            proc.kill()
    before = _lines(items)
    assert len(before) >= 2
    done = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stderr[-3000:]
    after = _lines(items)
    assert after[: len(before)] == before  # every finished item kept as it was, none redone
    n_pairs = json.loads((run / "gsm8k" / "zerocot" / "summary.json").read_text(encoding="utf-8"))["n_pairs"]
    assert len(before) < n_pairs == len(after) == len({json.loads(x)["key"] for x in after})  # items without a variant are not paired
    assert json.loads((run / "verdict.json").read_text(encoding="utf-8"))["verdicts"][0]["claims"][0]["n"] == n_pairs
