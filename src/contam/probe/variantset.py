"""Variant sets for the model-side probes: read the JSONL that ``contam perturb`` writes and
pair every original item with its isomorphic variant(s).

A variant row names the item it was made from (``original_id``), its own id
(``variant_id`` or ``id``), and its ``question`` and computed ``answer`` (``solution`` optional).

>>> from contam.data import Item
>>> o = Item(id="a", question="1+1?", answer="2")
>>> v = Item(id="a#v0", question="1+2?", answer="3", metadata={"original_id": "a"})
>>> [(x.id, y.id) for x, y in pair_items([o], {"a": [v]})]
[('a', 'a#v0')]
"""

from __future__ import annotations

import gzip
import json
import os
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from contam.data import Item
from contam.errors import InputError, reading

_ORIG_KEYS = ("original_id", "orig_id", "source_id", "parent_id", "item_id")
_ID_KEYS = ("variant_id", "id")
_Q_KEYS = ("question", "problem", "modified_problem", "prompt")
_A_KEYS = ("answer", "modified_answer", "gold")
#: File names a variant-set folder may hold its variants in, in order of preference.
_FOLDER_NAMES = ("variants.jsonl", "reference.jsonl", "references.jsonl", "variants.jsonl.gz", "reference.jsonl.gz")


def _pick(row: dict[str, Any], keys: Sequence[str]) -> tuple[str | None, Any]:
    for k in keys:
        if k in row and row[k] not in (None, ""):
            return k, row[k]
    return None, None


def resolve_variant_file(path: str | os.PathLike[str]) -> Path:
    """The JSONL file behind ``path``: the file itself, or inside a folder ``variants.jsonl``
    (or ``reference.jsonl``), or the folder's only ``*.jsonl``."""
    p = Path(path)
    if p.is_file():
        return p
    if p.is_dir():
        for name in _FOLDER_NAMES:
            if (p / name).is_file():
                return p / name
        refuse_other_output(p)
        found = sorted(q for q in p.glob("*.jsonl*") if q.is_file() and not q.name.startswith("."))
        if len(found) == 1:
            return found[0]
        raise InputError(f"reference folder holds {len(found)} JSONL files; name one, or call it variants.jsonl", path=p)
    raise InputError("reference set not found", path=p)


_NOT_A_SET = (
    "this is {what}, not a comparison set: --variants takes the folder `contam perturb --benchmark B --out DIR` "
    "writes (DIR or DIR/variants.jsonl); --control takes a clean benchmark (a name or a file of items)"
)


def refuse_other_output(path: str | os.PathLike[str]) -> None:
    """Raise :class:`InputError` naming what ``path`` is when it holds another command's results
    (a scan folder or its ``flags.jsonl``, a probe run) rather than a comparison set."""
    p = Path(path)
    if p.is_dir() and not any((p / name).is_file() for name in _FOLDER_NAMES):
        other = _other_command(p)
        if other is not None:
            raise InputError(_NOT_A_SET.format(what=f"a `contam {other}` folder"), path=p)
    elif p.is_file() and p.suffix == ".jsonl":
        try:
            with open(p, encoding="utf-8-sig") as fh:
                row = json.loads(next((ln for ln in fh if ln.strip()), "{}"))
        except (OSError, ValueError):
            return
        if isinstance(row, dict) and "doc_id" in row and "contaminated" in row:
            raise InputError(_NOT_A_SET.format(what="the flags file of `contam scan` (flagged corpus documents)"), path=p)


def _other_command(folder: Path) -> str | None:
    """The contam command whose results ``folder`` holds when it is not a variant set (its
    ``manifest.json``, or a scan's ``flags.jsonl``); ``None`` otherwise."""
    try:
        m = json.loads((folder / "manifest.json").read_text(encoding="utf-8"))
        cmd = m.get("command") if isinstance(m, dict) else None
        if isinstance(cmd, str) and cmd != "perturb":
            return cmd
    except (OSError, ValueError):
        pass
    return "scan" if (folder / "flags.jsonl").is_file() else None


def load_variants(path: str | os.PathLike[str]) -> dict[str, list[Item]]:
    """Variants by original item id, in file order. Bad rows raise :class:`InputError` naming
    file, line and field; the input file is only read."""
    refuse_other_output(path)
    file = resolve_variant_file(path)
    opener: Any = gzip.open if file.name.endswith(".gz") else open
    out: dict[str, list[Item]] = {}
    try:
        with opener(file, "rt", encoding="utf-8-sig") as fh:  # -sig: a byte-order mark is not data
            for lineno, raw in enumerate(fh, 1):
                if not raw.strip():
                    continue
                try:
                    row = json.loads(raw)
                except json.JSONDecodeError as e:
                    raise InputError(f"not valid JSON ({e.msg})", path=file, line=lineno) from None
                except RecursionError:
                    raise InputError("JSON nested too deeply to read", path=file, line=lineno) from None
                if not isinstance(row, dict):
                    raise InputError("expected a JSON object", path=file, line=lineno)
                with reading(file, line=lineno, what="not a reference-set row"):
                    item = _row_item(row, file, lineno)
                out.setdefault(item.metadata["original_id"], []).append(item)
    except UnicodeDecodeError as e:
        raise InputError(f"not UTF-8 text ({e.reason})", path=file) from None
    except (OSError, EOFError) as e:
        raise InputError(f"cannot read: {e}", path=file) from None
    if not out:
        raise InputError("reference set is empty", path=file)
    return out


def _row_item(row: dict[str, Any], file: Path, lineno: int) -> Item:
    ok, orig = _pick(row, _ORIG_KEYS)
    if ok is None:
        raise InputError(f"missing (one of {', '.join(_ORIG_KEYS)})", path=file, line=lineno, field="original_id")
    _, vid = _pick(row, _ID_KEYS)
    qk, question = _pick(row, _Q_KEYS)
    if qk is None or not isinstance(question, str):
        raise InputError("missing or not a string", path=file, line=lineno, field="question")
    ak, answer = _pick(row, _A_KEYS)
    if ak is None or not isinstance(answer, (str, int, float)):
        raise InputError("missing or not a string/number", path=file, line=lineno, field="answer")
    choices = row.get("choices") or ()
    return Item(
        id=str(vid if vid is not None else f"{orig}#ref{lineno}"),
        question=question,
        answer=str(answer),
        solution=str(row.get("solution") or ""),
        choices=tuple(str(c) for c in choices) if isinstance(choices, list) else (),
        benchmark="reference",
        metadata={"original_id": str(orig), "kind": row.get("kind", "")},
    )


def variants_by_item(variants: Iterable[Any]) -> dict[str, list[Item]]:
    """Variants by original id from any objects with ``original_id``, ``variant_id``,
    ``question``, ``answer`` (``contam.perturb`` Variant records, dicts)."""
    out: dict[str, list[Item]] = {}
    for i, v in enumerate(variants, 1):
        row = v.to_dict() if hasattr(v, "to_dict") else dict(v)
        item = _row_item(row, Path("<variants>"), i)
        out.setdefault(item.metadata["original_id"], []).append(item)
    return out


def pair_items(items: Sequence[Item], variants: dict[str, list[Item]], variant: int = 0) -> list[tuple[Item, Item]]:
    """``(original, its variant number `variant`)`` for every item that has one, in item order
    (items without a variant are left out: a paired test needs both sides)."""
    return [(it, variants[it.id][variant]) for it in items if len(variants.get(it.id, ())) > variant]
