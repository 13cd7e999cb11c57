"""Level 3, first part: the reasoning steps of a trace (paper 001 §3.2, Level 3).

Steps come from GSM8K calculator annotations (``<<48/2=24>>``), numbered steps (``1.`` /
``Step 2:``), fenced or indented code (one statement a step), or, failing those, sentences that
carry a number or an equation; the first rule that finds steps wins. Each :class:`ReasoningStep` keeps
its type, text, operators, numbers, entities and operand pairs: what
:mod:`contam.scan.reasoning.scorer` compares.

>>> [s.kind for s in extract_steps("x = <<2*3=6>>6 apples.\\n#### 6")]
['calc:*', 'answer']
"""

from __future__ import annotations

import builtins
import keyword
import re
from dataclasses import dataclass

from contam.records import Record


@dataclass(frozen=True)
class ReasoningStep(Record):
    """One reasoning step: its type, text, operators, numbers and named entities."""

    kind: str
    text: str
    ops: tuple[str, ...] = ()
    numbers: tuple[str, ...] = ()
    entities: tuple[str, ...] = ()
    operands: tuple[str, ...] = ()


_CALC_RE = re.compile(r"<<([^<>=]{1,400})=([^<>]{0,60})>>")
_NUMBERED_RE = re.compile(r"^\s*(?:step\s*\d+\s*[:.)]|\(?\d{1,2}[.)]\s|[-*•]\s)", re.IGNORECASE)
_FENCE_RE = re.compile(r"```[a-zA-Z0-9_+-]*\n(.*?)```", re.DOTALL)
_CODE_LINE_RE = re.compile(
    r"^\s*(def |class |return\b|for |while |if |elif |else:|import |from \S+ import|[A-Za-z_][\w.\[\], ]*\s*[+\-*/%]?=[^=])"
)
_NUM_RE = re.compile(r"(?<![\w.])-?\d[\d,]*(?:\.\d+)?")
_INLINE_EQ_RE = re.compile(r"(\d[\d,.]*\s*(?:[-+*/×x÷]\s*\d[\d,.]*\s*)+)=\s*\$?\d")
_OP_RE = re.compile(r"\*\*|//|==|!=|<=|>=|[-+*/%<>×÷]")
_WORD_RE = re.compile(r"[A-Za-z_][A-Za-z_0-9']*")
_ENTITY_RE = re.compile(r"(?<![.!?]\s)(?<!^)\b[A-Z][a-z]{2,}\b")
_CODE_KEYWORDS = (
    "def",
    "class",
    "return",
    "for",
    "while",
    "if",
    "elif",
    "else",
    "import",
    "from",
    "try",
    "except",
    "with",
    "yield",
    "assert",
    "raise",
)
_PY_KNOWN = frozenset(keyword.kwlist) | frozenset(dir(builtins)) | frozenset(("STR", "self"))
#: A name not after a dot: attributes and methods (``.split``) are API, not the author's names.
_PY_NAME_RE = re.compile(r"(?<![.\w])[A-Za-z_]\w*")
_STOP = frozenset(
    "the a an and or of to in on for at by with is are was were be it its he she they them his her their this that "
    "so then there has have had do does did as from into per each how many much what which if not".split()
)


def _norm_num(s: str) -> str:
    s = s.replace(",", "").strip()
    if "." in s:
        s = s.rstrip("0").rstrip(".")
    return s or "0"


#: Operator spellings read as the same operation.
_CANON_OP: dict[str, str] = {"×": "*", "x": "*", "÷": "/"}


def _op_sig(expr: str) -> tuple[str, ...]:
    return tuple(_CANON_OP.get(o, o) for o in map(str, _OP_RE.findall(expr)))


def _operands(expr: str) -> tuple[str, ...]:
    """Operator-operand pairs: ``48/2`` gives ``48/``, ``/2`` — what the computation did to what."""
    toks = re.findall(r"\d[\d,.]*|\*\*|[-+*/]", expr.replace("×", "*").replace("÷", "/"))
    out: list[str] = []
    for i, t in enumerate(toks):
        if t[0].isdigit() and i + 1 < len(toks) and not toks[i + 1][0].isdigit():
            out.append(_norm_num(t) + toks[i + 1])
        if t[0].isdigit() and i > 0 and not toks[i - 1][0].isdigit():
            out.append(toks[i - 1] + _norm_num(t))
    return tuple(out)


def _entities(text: str) -> tuple[str, ...]:
    return tuple(e.lower() for e in _ENTITY_RE.findall(text))


def _make_step(kind: str, text: str, expr: str = "") -> ReasoningStep:
    body = expr or text
    # The calculator annotation repeats the visible arithmetic; count each number once.
    text = _CALC_RE.sub(" ", text)
    return ReasoningStep(
        kind=kind,
        text=text.strip(),
        ops=_op_sig(body) if expr or kind.startswith("calc") else (),
        numbers=tuple(_norm_num(n) for n in _NUM_RE.findall(text)),
        entities=_entities(text),
        operands=_operands(body) if expr else (),
    )


def _code_kind(line: str) -> str:
    s = line.strip()
    head = s.split(None, 1)[0].rstrip(":") if s else ""
    if head in _CODE_KEYWORDS:
        return head
    if re.match(r"[A-Za-z_][\w.\[\], ]*\s*[+\-*/%]=", s):
        return "augassign"
    if re.match(r"[A-Za-z_][\w.\[\], ]*\s*=[^=]", s):
        return "assign"
    return "call" if "(" in s else "expr"


def _code_steps(code: str) -> list[ReasoningStep]:
    """One step per statement line. Identifiers are renamed ``v0, v1, ...`` by first appearance in
    the step text (so a consistently renamed clone reads the same) and kept as written in
    ``entities`` (so ArgSim still sees the names)."""
    canon: dict[str, str] = {}
    steps = []
    code = _DOCSTRING_RE.sub(" ", code)  # docstrings are prose, not steps
    for line in code.splitlines():
        s = line.strip()
        if not s or s.startswith("#") or s.startswith(('"""', "'''", ">>>")):
            continue
        kind = "code:" + _code_kind(s)
        bare = re.sub(r"'[^']*'|\"[^\"]*\"", " STR ", s)
        idents = tuple(w for w in _PY_NAME_RE.findall(bare) if w not in _PY_KNOWN)
        for w in idents:
            canon.setdefault(w, f"v{len(canon)}")
        text = _PY_NAME_RE.sub(lambda m: "v" if m.group(0) in canon else m.group(0), bare)
        steps.append(
            ReasoningStep(
                kind=kind, text=text, ops=_op_sig(bare), numbers=tuple(_NUM_RE.findall(bare)), entities=tuple(w.lower() for w in idents)
            )
        )
    return steps


_DOCSTRING_RE = re.compile(r'("""|\'\'\')(.*?)\1', re.DOTALL)


def _looks_like_code(text: str) -> bool:
    lines = [ln for ln in _DOCSTRING_RE.sub(" ", text).splitlines() if ln.strip()]
    if not lines:
        return False
    hits = sum(1 for ln in lines if _CODE_LINE_RE.match(ln))
    return hits >= 2 and hits >= 0.3 * len(lines)


def extract_steps(text: str) -> list[ReasoningStep]:
    """Reasoning steps of a trace (see the module docstring for the rules, first match wins).

    >>> [s.kind for s in extract_steps("1. Add 2 and 3 to get 5.\\n2. Multiply: 5 * 4 = 20.")]
    ['numbered', 'numbered:*']
    """
    fences = _FENCE_RE.findall(text)
    if fences:
        return [s for block in fences for s in _code_steps(block)]
    if _CALC_RE.search(text):
        steps = []
        for line in text.splitlines():
            calcs = _CALC_RE.findall(line)
            if calcs:
                for expr, _val in calcs:
                    steps.append(_make_step("calc:" + "".join(_op_sig(expr)), line, expr))
            elif line.strip().startswith("####"):
                steps.append(_make_step("answer", line))
        return steps
    if _looks_like_code(text):
        return _code_steps(text)
    lines = [ln for ln in re.split(r"\n+", text) if ln.strip()]
    numbered = [ln for ln in lines if _NUMBERED_RE.match(ln)]
    if len(numbered) >= 2:
        return [_sentence_step("numbered", ln) for ln in numbered]
    sentences = [s for ln in lines for s in re.split(r"(?<=[.!?])\s+", ln) if s.strip()]
    return [_sentence_step("sent", s) for s in sentences if _NUM_RE.search(s) or "=" in s]


def _sentence_step(prefix: str, text: str) -> ReasoningStep:
    m = _INLINE_EQ_RE.search(text)
    if m:
        return _make_step(f"{prefix}:" + "".join(_op_sig(m.group(1))), text, m.group(1))
    if text.strip().startswith("####"):
        return _make_step("answer", text)
    return _make_step(prefix, text)


def step_words(step: ReasoningStep) -> list[str]:
    """The words of a step with numbers masked, stop words dropped and entities as ``<ent>``."""
    out = []
    for w in _WORD_RE.findall(_NUM_RE.sub(" 0 ", step.text)):
        lw = w.lower()
        if lw in _STOP:
            continue
        out.append("<ent>" if lw in step.entities else lw)
    return out
