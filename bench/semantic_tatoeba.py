"""One-sentence translations one step away from every fit: the Tatoeba test sets of LASER (issue 30).

Artetxe & Schwenk's multilingual test set (``data/tatoeba/v1`` of facebookresearch/LASER: per
language up to 1,000 English Tatoeba sentences and their translations by Tatoeba's volunteers,
CC BY 2.0 FR) is short everyday sentences ("Mary said she didn't know where Tom was."), many of them
variations of one another: no fit of contam has seen it, and it is harder than any benchmark (a
translation of an unseen sentence often says almost what a seen one says). Per language, half of the
English sentences (by hash) are the benchmark; the documents are the translations of all of them,
scanned with the defaults. A translation of a seen sentence counts as found only when its flag
names its own sentence.

Printed per language: how many translations the semantic level routed to the multilingual embedder
(a short sentence in a Latin script is often too short to tell from English), P / R / F1 with the
defaults, and the same without the clear-outlier clause (``contam.scan.combiner.OUTLIER_Z``), which
was set on other data.

    python bench/semantic_tatoeba.py LASER_GIT_DIR [--langs deu,fra,...] [--out bench/results/semantic_tatoeba.json]

``LASER_GIT_DIR``: a clone (or bare mirror) of https://github.com/facebookresearch/LASER; the data is
read from it, not copied here.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import platform
import subprocess
import sys
import time
from datetime import date
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent
sys.path.insert(0, str(ROOT.parent / "src"))

LANGS = "deu,fra,spa,rus,cmn,jpn,tha,vie,ara,swh,ben,tel,tur,hin"


def read_pair(repo: Path, lang: str) -> tuple[list[str], list[str]]:
    def show(path: str) -> list[str]:
        p = subprocess.run(["git", "-C", str(repo), "show", f"HEAD:{path}"], capture_output=True, text=True, check=False)
        if p.returncode != 0:
            raise SystemExit(f"error: {repo}: no {path} (is this a clone of facebookresearch/LASER?)")
        return p.stdout.splitlines()

    return show(f"data/tatoeba/v1/tatoeba.{lang}-eng.{lang}"), show(f"data/tatoeba/v1/tatoeba.{lang}-eng.eng")


def seen(lang: str, i: int) -> bool:
    return hashlib.blake2b(f"{lang}/{i}".encode(), digest_size=8).digest()[0] % 2 == 0


def prf(flag: np.ndarray, pos: np.ndarray, right: np.ndarray) -> dict[str, float]:
    tp, fp = int((flag & pos & right).sum()), int((flag & ~pos).sum())
    p = tp / (tp + fp) if tp + fp else 1.0
    r = tp / int(pos.sum())
    return {"P": round(p, 3), "R": round(r, 3), "F1": round(2 * p * r / (p + r), 3) if tp else 0.0, "FP": fp}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("laser", type=Path, help="git directory of facebookresearch/LASER")
    ap.add_argument("--langs", default=LANGS)
    ap.add_argument("--out", default=str(ROOT / "results" / "semantic_tatoeba.json"))
    args = ap.parse_args()

    from contam.data import Item
    from contam.scan.semantic import SemanticConfig, SemanticScanner

    t0 = time.time()
    rows = {}
    for lang in args.langs.split(","):
        xs, en = read_pair(args.laser, lang)
        bench = [Item(id=f"tatoeba/{lang}/{i}", question=e, benchmark="tatoeba") for i, e in enumerate(en) if seen(lang, i)]
        s = SemanticScanner(SemanticConfig()).fit(bench).score(xs)
        pos = np.array([seen(lang, i) for i in range(len(xs))])
        right = np.array([bench[int(j)].id == f"tatoeba/{lang}/{i}" for i, j in enumerate(s.nearest[:, 0])])
        trees = (np.nan_to_num(s.probability, nan=0.0) >= 0.5) | np.asarray(s.near_copy)
        rows[lang] = {
            "sentences": len(xs),
            "multilingual": int(s.multilingual.sum()),
            "defaults": prf(s.flagged(0.5, "learned"), pos, right),
            "without_clear_outlier": prf(trees, pos, right),
        }
        r = rows[lang]
        print(
            f"{lang}: {r['sentences']} sentences, {r['multilingual']} routed to e5; defaults P {r['defaults']['P']:.3f} "
            f"R {r['defaults']['R']:.3f} F1 {r['defaults']['F1']:.3f} ({r['defaults']['FP']} FP); "
            f"without the clear-outlier clause F1 {r['without_clear_outlier']['F1']:.3f} ({r['without_clear_outlier']['FP']} FP)",
            flush=True,
        )
    res = {
        "date": date.today().isoformat(),
        "machine": f"{platform.machine()}, {platform.processor() or '?'}",
        "source": "facebookresearch/LASER data/tatoeba/v1 (Tatoeba, CC BY 2.0 FR)",
        "languages": rows,
        "mean_F1": round(float(np.mean([r["defaults"]["F1"] for r in rows.values()])), 3),
        "wall_s": round(time.time() - t0, 1),
    }
    Path(args.out).write_text(json.dumps(res, indent=1) + "\n", encoding="utf-8")
    print(f"mean F1 {res['mean_F1']:.3f} over {len(rows)} languages, {res['wall_s']} s")


if __name__ == "__main__":
    main()
