"""Write the short-sentence files of this folder from a git snapshot of facebookresearch/LASER.

    python extract.py LASER_GIT_DIR

``swahili.jsonl``: every Swahili-English pair of LASER's Tatoeba test set (``data/tatoeba/v1/
tatoeba.swh-eng.*``), one JSON line each: ``id`` (``tatoeba/swh/<line>``), ``en``, ``sw``.
``short_english.jsonl``: every distinct English sentence of two or three words in ASCII letters
from all 112 ``tatoeba.*-eng.eng`` files, sorted: ``{"text": ...}``.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent


def show(repo: str, path: str) -> list[str]:
    return subprocess.run(["git", "-C", repo, "show", f"HEAD:{path}"], capture_output=True, text=True, check=True).stdout.splitlines()


def main(repo: str) -> None:
    sw, en = show(repo, "data/tatoeba/v1/tatoeba.swh-eng.swh"), show(repo, "data/tatoeba/v1/tatoeba.swh-eng.eng")
    if len(sw) != len(en):
        raise SystemExit(f"tatoeba.swh-eng: {len(sw)} Swahili lines against {len(en)} English")
    rows = [{"id": f"tatoeba/swh/{i}", "en": e, "sw": s} for i, (e, s) in enumerate(zip(en, sw, strict=True))]
    (HERE / "swahili.jsonl").write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    names = subprocess.run(
        ["git", "-C", repo, "ls-tree", "--name-only", "HEAD", "data/tatoeba/v1/"], capture_output=True, text=True, check=True
    )
    english: set[str] = set()
    for name in names.stdout.split():
        if name.endswith("-eng.eng"):
            english.update(t.strip() for t in show(repo, name) if t.strip().isascii() and 2 <= len(t.split()) <= 3)
    out = "".join(json.dumps({"text": t}) + "\n" for t in sorted(english))
    (HERE / "short_english.jsonl").write_text(out, encoding="utf-8")
    print(f"{len(rows)} Swahili pairs, {len(english)} short English sentences")


if __name__ == "__main__":
    main(sys.argv[1])
