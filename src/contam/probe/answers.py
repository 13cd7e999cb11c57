"""Pulling a final answer out of model text, and deciding whether two answers are the same.

Model text is untrusted: numbers are parsed with regular expressions into exact
:class:`fractions.Fraction` values, never evaluated. Handles ``\\boxed{...}`` (nested braces,
an unclosed box cut by a token limit), "The answer is ...", GSM8K's ``#### N``, thousands
separators, decimals, fractions (``3/4``, ``\\frac{3}{4}``, mixed ``2 1/2``), percent signs,
currency and trailing units (``$18.00``, ``18 dollars``, ``5 cm``).

>>> extract_answer("so she makes 9 * 2 = 18 dollars. \\\\boxed{\\\\$18.00}")
'\\\\$18.00'
>>> answers_equal("\\\\$18.00", "18"), answers_equal("1,000", "1000"), answers_equal("\\\\frac{3}{4}", "0.75")
(True, True, True)
"""

from __future__ import annotations

import re
from fractions import Fraction

_BOX = re.compile(r"\\(?:boxed|fbox)\s*\{")
_ANSWER_IS = re.compile(r"(?:final\s+)?answer\s*(?:is|:|=)\s*:?\s*(.+)", re.IGNORECASE)
_HASHES = re.compile(r"####\s*(.+)")
_NUMBER = re.compile(r"-?\d+(?:,\d{3})*(?:\.\d+)?|-?\.\d+")
_FRAC_TEX = re.compile(r"\\[dt]?frac\s*\{\s*([^{}]+?)\s*\}\s*\{\s*([^{}]+?)\s*\}")
_FRAC_TEX_SHORT = re.compile(r"\\[dt]?frac(\d)(\d)")
_TEX_WRAPPERS = re.compile(r"\\(?:text|textbf|mathrm|mathbf|textit|operatorname|mbox)\s*\{([^{}]*)\}")
_TEX_DROP = re.compile(r"\\(?:left|right|displaystyle|,|!|;|:|quad|qquad)|\\\(|\\\)|\\\[|\\\]|\$")
_NUM_CORE = r"-?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?|-?\.\d+"
_NUMERIC_FULL = re.compile(
    rf"^(?:[a-z]\s*=\s*)?(?:[$€£¥]|usd|rs\.?)?\s*(?P<num>{_NUM_CORE})"
    rf"(?:\s*/\s*(?P<den>{_NUM_CORE}))?"
    rf"\s*(?P<pct>%|percent)?\s*(?P<unit>[a-z][a-z .²³/]*)?\.?$"
)
_MIXED = re.compile(r"^(?P<whole>-?\d+)\s+(?P<num>\d+)\s*/\s*(?P<den>\d+)(?:\s*[a-z][a-z .]*)?\.?$")


def extract_boxed(text: str) -> str | None:
    """Content of the *last* ``\\boxed{...}`` (braces matched). An unclosed box -- the token
    limit cut the answer, or the prefill opened it -- yields what follows, up to the end of
    its line or a closing ``\\]``."""
    matches = list(_BOX.finditer(text))
    if not matches:
        return None
    start = matches[-1].end()
    depth = 1
    for i in range(start, len(text)):
        ch = text[i]
        if ch == "{":
            depth += 1
        elif ch == "}":
            depth -= 1
            if depth == 0:
                return text[start:i].strip()
    rest = text[start:]
    rest = re.split(r"\n|\\\]|\$\$", rest, maxsplit=1)[0]
    return rest.strip() or None


def extract_answer(text: str) -> str | None:
    """The final answer in model text: the last ``\\boxed{}``, else a "#### N" line, else
    "(final) answer is X", else the last number in the text. ``None`` when there is none.

    >>> extract_answer("First 3+4=7. Then 7*2=14. The answer is: 14.")
    '14'
    >>> extract_answer("I don't know") is None
    True
    """
    if not text:
        return None
    boxed = extract_boxed(text)
    if boxed:
        return boxed
    m = _last(_HASHES, text)
    if m is not None:
        return _first_line(m.group(1))
    m = _last(_ANSWER_IS, text)
    if m is not None:
        cand = _first_line(m.group(1))
        if parse_number(cand) is not None:
            return cand
        nums = _NUMBER.findall(cand)
        if nums:
            return nums[0].rstrip(".")
        if cand:
            return cand
    nums = _NUMBER.findall(text)
    return nums[-1].rstrip(".") if nums else None


def _last(pattern: re.Pattern[str], text: str) -> re.Match[str] | None:
    found = None
    for found in pattern.finditer(text):  # noqa: B007 -- the last match is wanted
        pass
    return found


def _first_line(s: str) -> str:
    return s.strip().split("\n", 1)[0].strip().rstrip(".").strip()


def normalize_answer(answer: str) -> str:
    """A canonical string for non-numeric comparison: LaTeX wrappers dropped, lower case,
    whitespace and a trailing period removed.

    >>> normalize_answer("\\\\text{ Paris }.")
    'paris'
    """
    s = answer.strip()
    for _ in range(3):  # nested wrappers: \\text{\\textbf{x}}
        s = _TEX_WRAPPERS.sub(r"\1", s)
    s = _FRAC_TEX.sub(_frac_repl, s)
    s = _FRAC_TEX_SHORT.sub(r" \1/\2", s)
    s = s.replace("\\%", "%").replace("\\$", "$")
    s = _TEX_DROP.sub("", s)  # math delimiters and currency dollars alike
    s = s.replace("{", "").replace("}", "")
    s = re.sub(r"\^\s*\\circ|°", "", s)
    s = re.sub(r"\s+", " ", s).strip().lower()
    while s.endswith(".") or s.endswith(","):
        s = s[:-1].rstrip()
    return s


def _frac_repl(m: re.Match[str]) -> str:
    num, den = m.group(1), m.group(2)
    if _NUMBER.fullmatch(num) and _NUMBER.fullmatch(den):
        return f" {num}/{den}"  # a leading whole part makes a mixed number: 2\\frac{1}{2}
    return f"({num})/({den})"


def _to_fraction(text: str) -> Fraction:
    return Fraction(text.replace(",", ""))


def parse_number(answer: str) -> Fraction | None:
    """The exact value of a numeric answer, or ``None`` when the answer is not a number.

    >>> parse_number("$1,234.50"), parse_number("3/4"), parse_number("2 1/2 cups"), parse_number("50%")
    (Fraction(2469, 2), Fraction(3, 4), Fraction(5, 2), Fraction(50, 1))
    >>> parse_number("x = -7"), parse_number("twelve"), parse_number("3 and 4")
    (Fraction(-7, 1), None, None)
    """
    s = normalize_answer(answer)
    s = re.sub(r"^\((.*)\)/\((.*)\)$", r"\1/\2", s)  # (3)/(4) from \frac
    m = _MIXED.match(s)
    if m:
        whole, num, den = int(m["whole"]), int(m["num"]), int(m["den"])
        if den == 0:
            return None
        frac = Fraction(num, den)
        return whole - frac if whole < 0 or m["whole"].startswith("-") else whole + frac
    m = _NUMERIC_FULL.match(s)
    if not m:
        return None
    unit = (m["unit"] or "").strip()
    if unit and _NUMBER.search(unit):
        return None
    # A percent answer equals its number ("50%" == "50"): GSM8K golds drop the sign.
    value = _to_fraction(m["num"])
    if m["den"]:
        den = _to_fraction(m["den"])
        if den == 0:
            return None
        value /= den
    return value


def answers_equal(predicted: str | None, gold: str | None, *, rel_tol: float = 1e-6) -> bool:
    """Whether two answers are the same: equal numbers when both are numeric (a decimal
    rounding of a fraction within ``rel_tol`` counts), else equal normalized strings.

    >>> answers_equal("0.3333333", "1/3"), answers_equal("18", "17"), answers_equal(None, "3")
    (True, False, False)
    """
    if predicted is None or gold is None:
        return False
    a, b = parse_number(predicted), parse_number(gold)
    if a is not None and b is not None:
        if a == b:
            return True
        scale = max(abs(a), abs(b))
        return bool(scale) and abs(float(a - b)) <= rel_tol * float(scale)
    if a is not None or b is not None:
        return False
    na, nb = normalize_answer(predicted), normalize_answer(gold)
    return bool(na) and na == nb
