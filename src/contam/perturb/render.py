"""Writing an instance: the question with its slots rewritten, and a GSM8K-format solution with
every ``<<expr=result>>`` recomputed, each number spelled as the original spelled it.

>>> format_value(Fraction(130000), "130,000")
'130,000'
"""

from __future__ import annotations

import re
from fractions import Fraction

from contam.perturb import arith
from contam.perturb.mentions import word_for
from contam.perturb.records import Mention, Template

_PROSE_TOK = re.compile(r"\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?|\.\d+")
_LIT = re.compile(r"\d+(?:\.\d*)?|\.\d+")


def decimal_places(x: Fraction, limit: int = 8) -> int | None:
    for p in range(limit + 1):
        if (x * 10**p).denominator == 1:
            return p
    return None


def format_value(x: Fraction, like: str, *, kind: str = "int", min_decimals: int = 0) -> str:
    """Spell ``x`` the way ``like`` was spelled: commas, decimal places, number words, capitals.

    >>> format_value(Fraction(130000), "130,000"), format_value(Fraction(5, 2), "1.50"), format_value(Fraction(5), "Three", kind="word")
    ('130,000', '2.50', 'Five')
    """
    if kind == "word" and x.denominator == 1:
        w = word_for(int(x))
        if w is not None:
            return w.capitalize() if like[:1].isupper() else w
    places = decimal_places(x) or 0
    plain = like.replace(",", "")
    if "." in plain:
        places = max(places, len(plain.split(".", 1)[1]))
    places = max(places, min_decimals)
    text = _fixed(x, places)
    if "," in like and abs(x) >= 1000:
        head, _, tail = text.partition(".")
        text = f"{int(head):,}" + (f".{tail}" if tail else "")
    if like.startswith(".") and text.startswith("0."):
        text = text[1:]
    return text


def _fixed(x: Fraction, places: int) -> str:
    """``x`` with exactly ``places`` decimals (rounded half away from zero; exact for finite decimals)."""
    scaled = x * 10**places
    n = int(abs(scaled) + Fraction(1, 2))
    sign = "-" if x < 0 and n else ""
    if not places:
        return f"{sign}{n}"
    head, tail = divmod(n, 10**places)
    return f"{sign}{head}.{tail:0{places}d}"


def render_question(template: Template, values: dict[str, Fraction]) -> str:
    """The question with every moving slot's mentions rewritten."""
    edits: list[tuple[int, int, str]] = []
    for s in template.slots:
        if s.role == "frozen":
            continue
        for i in s.mentions:
            m: Mention = template.mentions[i]
            edits.append((m.start, m.end, format_value(values[s.id], m.text, kind=m.kind)))
    return _apply(template.question, edits)


def render_solution(template: Template, values: dict[str, Fraction], results: list[Fraction]) -> tuple[str, str]:
    """The GSM8K-format solution (each ``<<expr=result>>`` recomputed) and the final answer."""
    sol = template.solution
    edits: list[tuple[int, int, str]] = []

    def leaf_value(kind: str, ref: str, scale: str, value: str, offset: str = "0") -> Fraction:
        if kind == "slot":
            return values[ref] * Fraction(scale) + Fraction(offset)
        if kind == "step":
            return results[int(ref)]
        return Fraction(value)

    for j, step in enumerate(template.steps):
        if step.prose:  # "60/15 = 4": rewrite each number where it stands, in its own spelling
            toks = list(_PROSE_TOK.finditer(sol, step.start, step.end))
            news = [leaf_value(lf.kind, lf.ref, lf.scale, lf.value, lf.offset) for lf in step.leaves] + [results[j]]
            for tok, new in zip(toks, news, strict=True):
                edits.append((tok.start(), tok.end(), format_value(new, tok.group(0))))
            continue
        expr = arith.normalize_expression(step.expr)
        pieces: list[str] = []
        pos = 0
        for lit, leaf in zip(_LIT.finditer(expr), step.leaves, strict=True):
            pieces.append(expr[pos : lit.start()])
            pieces.append(format_value(leaf_value(leaf.kind, leaf.ref, leaf.scale, leaf.value, leaf.offset), lit.group(0)))
            pos = lit.end()
        pieces.append(expr[pos:])
        edits.append((step.start, step.end, f"<<{''.join(pieces)}={format_value(results[j], '0')}>>"))
        if step.echo_start >= 0:
            edits.append((step.echo_start, step.echo_end, format_value(results[j], sol[step.echo_start : step.echo_end])))
    for p in template.prose:
        if p.kind != "const":
            spelling = "word" if p.text[:1].isalpha() else "int"
            edits.append((p.start, p.end, format_value(leaf_value(p.kind, p.ref, p.scale, "0", p.offset), p.text, kind=spelling)))
    answer = format_value(results[template.answer_step], "0")
    hash_at = sol.rfind("####")
    edits.append((hash_at, len(sol), f"#### {answer}"))
    return _apply(sol, edits), answer


def _apply(text: str, edits: list[tuple[int, int, str]]) -> str:
    out: list[str] = []
    pos = 0
    for a, b, new in sorted(edits):
        out.append(text[pos:a])
        out.append(new)
        pos = b
    out.append(text[pos:])
    return "".join(out)
