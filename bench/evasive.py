"""Issue 34 target 2: evasive (paraphrased) contamination, reproduced in kind (paper 004, Table 2).

SmolLM2-135M (``--base gemma3-270m``: Gemma 3 270M, the ``gemma`` extra's GGUF dequantized by
transformers into a trainable model) is fine-tuned (``contam contaminate``, chat template: user question, assistant
chain-of-thought solution, as in SFT data) on GSM8K test items either **verbatim** or
**paraphrased**, at several exposure counts (snapshots of one run). Every snapshot is then audited
on the *original* items, seen vs unseen (the items after the trained slice), by every model-side
probe: the log-prob family with the paired base-model verdict (``contam eval-probes``), the
Zero-CoT Probe with Contamination Confidence, greedy prefix reconstruction, and the performance
cliff (``contam probe cliff``, one audited variant per item).

The paraphrases: the project's paraphrase pipeline (``contam perturb --kind paraphrase``) with
the embedded 135M model accepts none (0 of 6 GSM8K items: rewrites drop numbers or drift below
the similarity floor), so the paraphrases are GPT-4 rewrites made by other people -- MathCheck's
"problem understanding" rewrites of GSM8K test items (``bench/data/independent/mathcheck_gsm``,
not committed: no licence stated; run its extract.py) -- **audited by the pipeline's own checks**
(``Paraphraser.judge``: the same numbers as the original, MiniLM cosine >= 0.8, length ratio
<= 2). That is the paper's own scenario: a publisher paraphrasing the benchmark with a strong LLM.

    # here (CPU): audit the paraphrases, write the plan
    .venv/bin/python bench/evasive.py prepare --out bench/out/evasive
    # where a GPU is lent (minutes there; hours on 2 CPU cores): train and audit every snapshot
    python bench/evasive.py run --out bench/out/evasive --n 128 --epochs 10 --save-epochs 1,3 --jobs 6
    # the table (markdown) from the run's results
    .venv/bin/python bench/evasive.py table --out bench/out/evasive
"""

from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import sys
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
os.environ.setdefault("CONTAM_PROGRESS", "0")
ROOT = Path(__file__).resolve().parent
MATHCHECK = ROOT / "data" / "independent" / "mathcheck_gsm" / "variants.jsonl"


def prepare(out: Path) -> None:
    """Audit MathCheck's problem-understanding rewrites with the paraphrase pipeline's checks."""
    from contam.data import load_benchmark
    from contam.models import load_embedder
    from contam.perturb.paraphrase import ParaphraseConfig, Paraphraser

    if not MATHCHECK.is_file():
        raise SystemExit(f"{MATHCHECK} is missing: run bench/data/independent/mathcheck_gsm/extract.py")
    by_id = {it.id: it for it in load_benchmark("gsm8k")}
    rows = [json.loads(line) for line in MATHCHECK.read_text(encoding="utf-8").splitlines() if line.strip()]
    rows = [r for r in rows if r.get("subtype") == "mathcheck_problem_understanding"]
    judge, emb = Paraphraser(ParaphraseConfig(k=1)), load_embedder("minilm")
    kept, rejected = [], {}
    for r in rows:
        item = by_id[r["source"]]
        verdict = judge.judge(item.question, [r["text"]], emb)
        text, cos, reason = verdict[0]
        if reason:
            rejected[r["source"]] = f"{reason} (cosine {cos:.3f})"
        else:
            kept.append(
                {
                    "id": item.id,
                    "question": text,
                    "cosine": round(float(cos), 4),
                    "source": "MathCheck problem_understanding (GPT-4, human-checked)",
                }
            )
    out.mkdir(parents=True, exist_ok=True)
    with open(out / "paraphrases.jsonl", "w", encoding="utf-8") as fh:
        for k in kept:
            fh.write(json.dumps(k, ensure_ascii=False) + "\n")
    audit = {
        "candidates": len(rows),
        "accepted": len(kept),
        "rejected": rejected,
        "checks": "Paraphraser.judge: same numbers, MiniLM cosine >= 0.8, length ratio <= 2",
    }
    (out / "paraphrase_audit.json").write_text(json.dumps(audit, indent=2))
    print(f"[prepare] {len(kept)} of {len(rows)} paraphrases pass the pipeline's audit -> {out / 'paraphrases.jsonl'}")


def base_spec(base: str) -> tuple[str, str]:
    """(the model spec ``contam contaminate`` trains from, the prefix of its snapshot folders) for ``--base``."""
    if base == "smollm2":
        return "smollm2", ""
    if base == "gemma3-270m":  # the `gemma` extra's GGUF, dequantized by transformers into a trainable model
        from contam.models.embedded import gemma3_path

        return f"hf:{gemma3_path()}", "gemma3-270m-"
    raise SystemExit(f"--base {base!r}: choose smollm2 or gemma3-270m")


def train(
    out: Path, arm: str, n: int, epochs: int, saves: tuple[int, ...], paraphrases: Path, filler: float, base: str = "smollm2"
) -> list[Path]:
    from contam.data import load_benchmark
    from contam.probe.contaminate import ContaminateConfig, Contaminator

    # Both arms train the same items (those with an accepted paraphrase): the verbatim arm's
    # "paraphrase" file holds each item's own question, so only the wording differs.
    forms = paraphrases
    if arm == "verbatim":
        by_id = {it.id: it for it in load_benchmark("gsm8k")}
        forms = out / "verbatim.jsonl"
        ids = [json.loads(line)["id"] for line in paraphrases.read_text(encoding="utf-8").splitlines() if line.strip()]
        forms.write_text("".join(json.dumps({"id": i, "question": by_id[i].question}) + "\n" for i in ids), encoding="utf-8")
    cfg = ContaminateConfig(
        benchmark="gsm8k",
        subset=(0, n),
        mode="paraphrase",
        epochs=epochs,
        filler_ratio=filler,
        template="chat",
        paraphrases=str(forms),
        lr=1e-4,
        batch_size=8,
        max_length=384,
        seed=0,
        save_epochs=saves,
    )
    spec, prefix = base_spec(base)
    folder = out / f"{prefix}{arm}-x{epochs}"
    if not (folder / "manifest.json").is_file():
        t = time.perf_counter()
        m = Contaminator(cfg).run(spec, folder)
        print(f"[train] {arm}: {len(m.seen)} items x {epochs} epochs, {m.train_tokens} tokens, {time.perf_counter() - t:.0f} s", flush=True)
    return [folder / f"epoch-{e}" for e in saves if e != epochs] + [folder]


def evaluate(model_dir: Path, res_dir: Path, cot_tokens: int, cliff_tokens: int) -> dict:
    """Every probe on one snapshot; the results as one JSON-ready dict."""
    from contam.models import load
    from contam.outputs import JsonlCheckpoint
    from contam.probe.cliff import CliffConfig, CliffProbe
    from contam.probe.evalprobes import EvalProbes, EvalProbesConfig, eval_sets

    res_dir.mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()
    cfg = EvalProbesConfig(probes=("logprob", "zerocot", "reconstruct"), zerocot_cot_tokens=cot_tokens, cache=False)
    ev = EvalProbes(cfg).run(model_dir, res_dir / "evalprobes").to_dict()
    seen, unseen, variants = eval_sets(model_dir)
    cliff = {}
    for name, its in (("seen", seen), ("unseen", unseen)) if cliff_tokens else ():
        lm = load(f"hf:{Path(model_dir).resolve()}", cache=False)  # once: the registry keeps it
        with JsonlCheckpoint(res_dir / f"cliff-{name}.jsonl", key="key") as ck:
            r = CliffProbe(CliffConfig(k=1, max_new_tokens=cliff_tokens)).run(lm, its, variants, ck)
        cliff[name] = {
            "n": r.n_items,
            "acc_orig": r.acc_original,
            "acc_variants": r.acc_variants,
            "delta": r.delta,
            "p": r.test.p_value,
            "cc": r.calibration.confidence,
            "flagged": r.flagged,
        }
    out = {
        "model": str(model_dir),
        # The arm from the folder name (both arms train in contaminate's paraphrase mode).
        "mode": (model_dir.parent if model_dir.name.startswith("epoch-") else model_dir).name.split("-x")[0],
        "n_seen": len(seen),
        "epochs": ev["epochs"],
        "evalprobes": ev,
        "cliff": cliff,
        "wall_s": round(time.perf_counter() - t0, 1),
    }
    (res_dir / "result.json").write_text(json.dumps(out, indent=2, default=str))
    return out


def run(args: argparse.Namespace) -> None:
    import torch

    saves = tuple(int(x) for x in args.save_epochs.split(",") if x.strip())
    para = args.out / "paraphrases.jsonl"
    snaps: list[Path] = []
    for arm in args.arms.split(","):
        snaps += train(args.out, arm, args.n, args.epochs, saves, para, args.filler, args.base)
    print(f"[run] {len(snaps)} snapshots; device {'cuda' if torch.cuda.is_available() else 'cpu'}", flush=True)
    procs = []
    for s in snaps:
        res = args.out / "results" / f"{s.parent.name}-{s.name}" if s.name.startswith("epoch-") else args.out / "results" / s.name
        if (res / "result.json").is_file():
            continue
        cmd = [
            sys.executable,
            __file__,
            "eval",
            str(s),
            str(res),
            "--cot-tokens",
            str(args.cot_tokens),
            "--cliff-tokens",
            str(args.cliff_tokens),
        ]
        while sum(p.poll() is None for p in procs) >= args.jobs:
            time.sleep(1)
        procs.append(subprocess.Popen(cmd))
    codes = [p.wait() for p in procs]
    print(f"[run] evaluations done, exit codes {codes}", flush=True)


def _fmt(x: object) -> str:
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "–"
    return f"{x:.3g}" if isinstance(x, float) else str(x)


def table(out: Path) -> str:
    rows = sorted((json.loads(p.read_text()) for p in (out / "results").glob("*/result.json")), key=lambda r: (r["mode"], r["epochs"]))
    lines = [
        "| trained on | exposures | probe | seen vs unseen AUROC | seen: p / CC | unseen: p / CC |",
        "|---|---|---|---|---|---|",
    ]
    for r in rows:
        ev = r["evalprobes"]
        auc = {(s["probe"], s["method"]): s["auroc"] for s in ev["separations"]}
        ver = {(v["probe"], v["method"], v["set"]): v for v in ev["verdicts"]}
        for probe, method in sorted({(p, m) for p, m, _ in ver} | set(auc)):
            s, u = ver.get((probe, method, "seen"), {}), ver.get((probe, method, "unseen"), {})
            cells = [f"{_fmt(v.get('p_value'))} / {_fmt(v.get('confidence'))}" if v else "–" for v in (s, u)]
            lines.append(
                f"| {r['mode']} | {r['epochs']} | {probe}: {method} | {_fmt(auc.get((probe, method)))} | {cells[0]} | {cells[1]} |"
            )
        c = r["cliff"]
        if not c:
            continue
        lines.append(
            f"| {r['mode']} | {r['epochs']} | cliff (acc orig→variant) | – | {_fmt(c['seen']['p'])} / {_fmt(c['seen']['cc'])} ({_fmt(c['seen']['acc_orig'])}→{_fmt(c['seen']['acc_variants'])}) | {_fmt(c['unseen']['p'])} / {_fmt(c['unseen']['cc'])} ({_fmt(c['unseen']['acc_orig'])}→{_fmt(c['unseen']['acc_variants'])}) |"
        )
    text = "\n".join(lines)
    print(text)
    return text


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("prepare")
    p.add_argument("--out", type=Path, default=ROOT / "out" / "evasive")
    r = sub.add_parser("run")
    r.add_argument("--out", type=Path, default=ROOT / "out" / "evasive")
    r.add_argument("--arms", default="paraphrase,verbatim")
    r.add_argument("--base", default="smollm2", help="smollm2 or gemma3-270m (the `gemma` extra: make .venv/.gemma)")
    r.add_argument("--n", type=int, default=128, help="GSM8K test items [0, n) are the trained slice")
    r.add_argument("--epochs", type=int, default=10)
    r.add_argument("--save-epochs", default="1,3")
    r.add_argument("--filler", type=float, default=1.0, help="clean documents per leaked one in each epoch")
    r.add_argument("--jobs", type=int, default=2, help="snapshots audited at once (processes)")
    r.add_argument("--cot-tokens", type=int, default=128)
    r.add_argument("--cliff-tokens", type=int, default=256, help="0: no cliff")
    e = sub.add_parser("eval")
    e.add_argument("model_dir", type=Path)
    e.add_argument("res_dir", type=Path)
    e.add_argument("--cot-tokens", type=int, default=128)
    e.add_argument("--cliff-tokens", type=int, default=256)
    t = sub.add_parser("table")
    t.add_argument("--out", type=Path, default=ROOT / "out" / "evasive")
    args = ap.parse_args()
    if args.cmd == "prepare":
        prepare(args.out)
    elif args.cmd == "run":
        run(args)
    elif args.cmd == "eval":
        evaluate(args.model_dir, args.res_dir, args.cot_tokens, args.cliff_tokens)
    else:
        table(args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
