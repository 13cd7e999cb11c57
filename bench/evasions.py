"""Cheap evasions of the token level (issue 15 item 7): every GSM8K test question (real, 1,319)
rewritten with a zero-width space between the letters of each word, with Cyrillic а/е for Latin
a/e, with Greek ο, full-width digits and soft hyphens, placed in a web paragraph, and scanned at
the token level (defaults, GSM8K test as the benchmark). Prints how many are flagged for their
own item, per evasion, and the flags on the same questions without evasion.

    PYTHONPATH=src python bench/evasions.py
"""

from __future__ import annotations

import json
import time

from contam.data import Document, load_benchmark
from contam.data.webtext import paragraphs
from contam.scan.ngram import NGramConfig, NGramScanner

ZWSP = "\u200b"


def zero_width(text: str) -> str:
    return "".join(c + ZWSP if c.isalpha() and i + 1 < len(text) and text[i + 1].isalpha() else c for i, c in enumerate(text))


def cyrillic(text: str) -> str:
    return text.replace("a", "\u0430").replace("e", "\u0435")


def greek_fullwidth(text: str) -> str:
    out = text.replace("o", "\u03bf")
    out = "".join(chr(ord(c) - 0x30 + 0xFF10) if c.isdigit() else c for c in out)
    return " ".join(w[:3] + "\u00ad" + w[3:] if len(w) > 6 else w for w in out.split(" "))


def main() -> None:
    items = load_benchmark("gsm8k")
    scanner = NGramScanner(NGramConfig()).fit(items)
    pool = paragraphs()
    out = {}
    for name, evade in (
        ("none", lambda t: t),
        ("zero-width", zero_width),
        ("cyrillic a/e", cyrillic),
        ("greek o + full-width digits + soft hyphen", greek_fullwidth),
    ):
        docs = [Document(id=str(k), text=pool[k % len(pool)] + "\n\n" + evade(it.question), line=k + 1) for k, it in enumerate(items)]
        t = time.process_time()
        found = sum(
            1 for r, it in zip(scanner.scan(docs), items, strict=True) if r.contaminated and any(f.item_id == it.id for f in r.flags)
        )
        out[name] = {"found": found, "of": len(items), "cpu_s": round(time.process_time() - t, 2)}
    print(json.dumps(out))


if __name__ == "__main__":
    main()
