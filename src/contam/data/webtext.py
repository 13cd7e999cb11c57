"""Web-like filler text built offline from real text, with benchmark items injected at known places.

Sources (all real prose, none generated): GitHub issue text (the problem statements shipped with
SWE-bench), Python standard-library docstrings (read from the source files, nothing imported),
and the license files of installed packages. Paragraphs are shuffled into documents with a
seed. :func:`inject` puts a benchmark item into a document verbatim or lightly edited (case,
whitespace, punctuation, a few word substitutions) and returns where it went, so scans can be
scored against ground truth. Do not scan this filler against SWE-bench: part of it *is* SWE-bench.

>>> docs, truth = build_corpus(n_docs=50, seed=1, items=load_benchmark("gsm8k")[:3])
>>> len(docs), len(truth), truth[0].item_id in {"gsm8k/test/0", "gsm8k/test/1", "gsm8k/test/2"}
(50, 3, True)
"""

from __future__ import annotations

import glob
import json
import os
import random
import re
import sysconfig
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from contam.data.items import Item
from contam.data.registry import load_benchmark
from contam.outputs import atomic_write
from contam.records import Record

_DOCSTRING = re.compile(r'"""(.*?)"""', re.S)
_PARA = re.compile(r"\n\s*\n")
_SPACES = re.compile(r"[ \t]+")

#: Substitutions of the "few words" light edit: common words and a near-synonym.
SYNONYMS = {
    "buys": "purchases",
    "bought": "purchased",
    "has": "owns",
    "how": "how",
    "many": "many",
    "each": "every",
    "total": "overall",
    "find": "determine",
    "return": "give back",
    "number": "count",
    "makes": "earns",
    "gets": "receives",
    "uses": "spends",
    "list": "sequence",
    "given": "provided",
    "which": "what",
    "following": "below",
    "cost": "price",
    "costs": "is priced at",
    "week": "seven days",
    "half": "one half",
    "twice": "two times",
    "sells": "sold",
    "the": "this",
}


@dataclass(frozen=True)
class Injection(Record):
    """Ground truth of one injected item: which document, where, which item part, what edit."""

    doc_id: str
    line: int
    item_id: str
    benchmark: str
    part: str
    edit: str
    span: tuple[int, int]


@lru_cache(maxsize=1)
def paragraphs() -> tuple[str, ...]:
    """The pool of real paragraphs (deduplicated, 60-1500 characters, in a fixed order)."""
    texts: list[str] = []
    for item in load_benchmark("swebench-verified") + load_benchmark("swebench-lite"):
        texts.append(item.question)
    stdlib = sysconfig.get_paths()["stdlib"]
    for path in sorted(glob.glob(os.path.join(stdlib, "**", "*.py"), recursive=True)):
        if "/test" in path or "site-packages" in path or "/idlelib/" in path:
            continue
        try:
            src = Path(path).read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue
        texts.extend(m.group(1) for m in _DOCSTRING.finditer(src))
    purelib = sysconfig.get_paths()["purelib"]
    for path in sorted(
        glob.glob(os.path.join(purelib, "*.dist-info", "LICENSE*")) + glob.glob(os.path.join(purelib, "*.dist-info", "licenses", "*"))
    ):
        if os.path.isfile(path):
            texts.append(Path(path).read_text(encoding="utf-8", errors="replace"))
    seen: set[str] = set()
    out: list[str] = []
    for text in texts:
        for para in _PARA.split(text):
            para = _SPACES.sub(" ", "\n".join(line.strip() for line in para.strip().splitlines()))
            if 60 <= len(para) <= 1500 and para not in seen and sum(c.isalpha() for c in para) > 0.6 * len(para):
                seen.add(para)
                out.append(para)
    return tuple(out)


def make_document(rng: random.Random, pool: tuple[str, ...] | None = None, min_paras: int = 2, max_paras: int = 9) -> str:
    """A document of a few random real paragraphs."""
    pool = pool or paragraphs()
    return "\n\n".join(rng.choice(pool) for _ in range(rng.randint(min_paras, max_paras)))


def leak_text(item: Item, part: str) -> str:
    """How a leak of ``item`` looks: ``question``, ``answer``, or ``item`` (question, options, answer)."""
    options = "\n".join(f"{chr(65 + i)}. {c}" for i, c in enumerate(item.choices))
    question = item.question + ("\n" + options if options else "")
    if part == "question":
        return question
    if part == "answer":
        return item.answer_text
    if item.choices:
        return f"{question}\nAnswer: {item.answer}"
    return f"{question}\n{item.solution or item.answer}"


def light_edit(text: str, rng: random.Random, substitutions: int = 2) -> str:
    """Case, whitespace and punctuation changes plus a few word substitutions: what a
    copy-paste through a forum or a scraper does to a text."""
    words = text.split(" ")
    candidates = [i for i, w in enumerate(words) if w.lower() in SYNONYMS and SYNONYMS[w.lower()] != w.lower()]
    for i in rng.sample(candidates, min(substitutions, len(candidates))):
        words[i] = SYNONYMS[words[i].lower()]
    out = " ".join(words)
    out = out.replace(",", "").replace("?", " ?").replace("\n", rng.choice(["  ", "\n\n", " "]))
    return out.lower() if rng.random() < 0.5 else out.upper()


def inject(doc: str, item: Item, rng: random.Random, part: str = "question", edit: str = "verbatim") -> tuple[str, tuple[int, int]]:
    """Insert a leak of ``item`` between two paragraphs of ``doc``; returns the text and the leak's span."""
    leak = leak_text(item, part)
    if edit == "light":
        leak = light_edit(leak, rng)
    paras = doc.split("\n\n")
    at = rng.randint(0, len(paras))
    before = "\n\n".join(paras[:at])
    prefix = before + ("\n\n" if before else "")
    after = "\n\n".join(paras[at:])
    text = prefix + leak + ("\n\n" + after if after else "")
    return text, (len(prefix), len(prefix) + len(leak))


def build_corpus(
    n_docs: int,
    seed: int,
    items: list[Item],
    *,
    parts: tuple[str, ...] = ("question", "item"),
    edits: tuple[str, ...] = ("verbatim", "light"),
) -> tuple[list[dict], list[Injection]]:
    """``n_docs`` documents (dicts with ``id`` and ``text``); each of ``items`` is injected
    into a different random document, cycling through ``parts`` and ``edits``."""
    rng = random.Random(seed)
    pool = paragraphs()
    docs = [{"id": f"web-{seed}-{i:06d}", "text": make_document(rng, pool)} for i in range(n_docs)]
    if len(items) > n_docs:
        raise ValueError(f"cannot inject {len(items)} items into {n_docs} documents")
    targets = rng.sample(range(n_docs), len(items))
    truth: list[Injection] = []
    for k, (item, d) in enumerate(zip(items, targets, strict=True)):
        part, edit = parts[k % len(parts)], edits[(k // len(parts)) % len(edits)]
        text, span = inject(docs[d]["text"], item, rng, part, edit)
        docs[d]["text"] = text
        truth.append(Injection(docs[d]["id"], d + 1, item.id, item.benchmark, part, edit, span))
    truth.sort(key=lambda t: t.line)
    return docs, truth


def write_jsonl(path: str | os.PathLike[str], docs: list[dict]) -> None:
    """Write documents as JSONL, atomically."""
    with atomic_write(path) as fh:
        for doc in docs:
            fh.write(json.dumps(doc, ensure_ascii=False) + "\n")


def demo_items(seed: int = 0) -> list[Item]:
    """A handful of real items: 4 GSM8K, 4 HumanEval, 4 MMLU, chosen with ``seed``."""
    rng = random.Random(seed)
    out: list[Item] = []
    for name in ("gsm8k", "humaneval", "mmlu"):
        out.extend(rng.sample(load_benchmark(name), 4))
    return out


def build_demo_corpus(path: str | os.PathLike[str], seed: int = 0, n_docs: int = 200) -> list[Injection]:
    """Write the demo corpus (real web-like text, 12 real GSM8K / HumanEval / MMLU items injected,
    half verbatim, half lightly edited) to ``path`` and return the ground truth."""
    docs, truth = build_corpus(n_docs, seed, demo_items(seed))
    write_jsonl(path, docs)
    return truth
