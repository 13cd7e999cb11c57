"""Paper 003's regeneration operators on BFCL multi-turn tasks.

Two operators, both drawing from the benchmark's own distributions (pools gathered over all
800 shipped tasks, per kind):

- **re-keying** (a literal map): entity names — file and directory names (extension kept),
  Twitter handles and passwords, people's first and last names (messages, tickets, travel),
  travel card ids, card numbers, booking ids and access tokens (digits re-drawn, format kept) —
  are renamed by one map applied to *every* string of the task: the initial configuration
  (keys and values), each question turn, and each ground-truth call's string arguments. Matching
  is whole-token (no letter or digit on either side) and case-preserving, so ``'report.txt'`` in a
  question, a config key and ``cat(file_name='report.txt')`` all become the same fresh name.
- **state resampling** (positional): numeric state fields (vehicle fuel, battery, tyre pressures,
  temperatures; trading balance and stock quotes; travel card balances and budget) and the text
  of files get a value drawn from the same field over all tasks. Only values nothing refers to
  are resampled: a number no call argument and no question states, unique among the task's
  numbers; a file content no call argument occurs in.

The golden is not remembered but re-derived: the rewritten calls are replayed through BFCL's
classes on the fresh configuration, and the goal state (after each turn) is what they leave.
A draw whose replay is not the *transport* of the shipped replay — same error pattern call by
call, every observation equal to the shipped one under the map — is discarded and the next draw
tried (fewer operators each time); a task no draw regenerates is rejected with a reason code.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import random
import re
from collections import defaultdict
from dataclasses import dataclass, field
from functools import cache
from typing import Any

from contam.records import Record
from contam.regen.bfcl.calls import Call, Replay, parse_call, replay
from contam.regen.bfcl.world import Task, canonical_hash, get_task, load_tasks, state_hash

#: Rejection reasons (a task at a seed that no draw regenerates).
REASONS = {
    "read_only": "no ground-truth turn changes the state (BFCL grades it by call outputs only)",
    "nothing_reseeded": "no literal or state field the recipe may move",
    "error_pattern_changed": "a rewritten call errs where the shipped one did not, or the reverse",
    "outputs_not_transported": "an observation of the rewritten replay is not the shipped one under the map",
    "goal_unchanged": "the fresh goal equals the fresh initial state at every turn",
    "leak": "an original literal survives in the fresh question, config or calls",
    "not_injective": "two originals map to one fresh value, or a fresh value is an original",
}

#: Numeric state fields resampled, by class: a path pattern (``*`` = any key) per field.
NUMERIC_FIELDS: dict[str, tuple[tuple[str, ...], ...]] = {
    "VehicleControlAPI": tuple(
        (f,)
        for f in (
            "fuelLevel",
            "batteryVoltage",
            "acTemperature",
            "fanSpeed",
            "humidityLevel",
            "distanceToNextVehicle",
            "frontLeftTirePressure",
            "frontRightTirePressure",
            "rearLeftTirePressure",
            "rearRightTirePressure",
        )
    ),
    "TradingBot": (
        ("account_info", "balance"),
        ("stocks", "*", "price"),
        ("stocks", "*", "percent_change"),
        ("stocks", "*", "volume"),
        ("stocks", "*", "MA(5)"),
        ("stocks", "*", "MA(20)"),
    ),
    "TravelAPI": (("credit_card_list", "*", "balance"), ("budget_limit",)),
}

_NUM = re.compile(r"(?<![\w.])-?\d+(?:\.\d+)?")
_MIN_LEN = 3  # shorter literals would rewrite ordinary words of the prose


# --------------------------------------------------------------------------- literal extraction
def _tree(node: dict[str, Any], out: list[tuple[str, str]], contents: list[tuple[tuple[str, ...], str]], path: tuple[str, ...]) -> None:
    for name, item in node.items():
        if not isinstance(item, dict):
            continue
        if item.get("type") == "file":
            out.append(("file", name))
            if isinstance(item.get("content"), str):
                contents.append(((*path, name), item["content"]))
        else:
            out.append(("dir", name))
            _tree(item.get("contents") or {}, out, contents, (*path, name))


#: Words of role accounts ("Support Agent"), not people's names: never pooled as names.
_ROLES = frozenset({"support", "agent", "admin", "team", "staff", "service", "customer", "system"})


def _names(full: str, out: list[tuple[str, str]]) -> None:
    words = full.split()
    if any(w.casefold() in _ROLES for w in words):
        return
    if len(words) >= 2 and all(w[:1].isupper() and w.isalpha() for w in words):
        out.append(("first", words[0]))
        out.append(("last", words[-1]))
    elif len(words) == 1 and full.isalpha():
        out.append(("first", full))


def extract(cls: str, cfg: dict[str, Any]) -> tuple[list[tuple[str, str]], list[tuple[tuple[str, ...], str]]]:
    """(kind, literal) pairs re-keyed in one class's config, and GFS file contents by path."""
    out: list[tuple[str, str]] = []
    contents: list[tuple[tuple[str, ...], str]] = []
    if cls == "GorillaFileSystem" and isinstance(cfg.get("root"), dict):
        for top, item in cfg["root"].items():
            out.append(("dir", top))
            _tree((item or {}).get("contents") or {}, out, contents, (top,))
    elif cls == "TwitterAPI":
        for k in ("username",):
            if isinstance(cfg.get(k), str):
                out.append(("handle", cfg[k]))
        if isinstance(cfg.get("password"), str):
            out.append(("password", cfg["password"]))
        for t in (cfg.get("tweets") or {}).values():
            if isinstance(t, dict) and isinstance(t.get("username"), str):
                out.append(("handle", t["username"]))
        for h in cfg.get("following_list") or []:
            if isinstance(h, str):
                out.append(("handle", h))
        for lst in (cfg.get("comments") or {}).values():
            for c in lst if isinstance(lst, list) else []:
                for k in ("username", "user"):
                    if isinstance(c, dict) and isinstance(c.get(k), str):
                        out.append(("handle", c[k]))
    elif cls == "MessageAPI":
        for name in cfg.get("user_map") or {}:
            _names(name, out)
    elif cls == "TicketAPI":
        for v in [cfg.get("current_user")] + [t.get("created_by") for t in cfg.get("ticket_queue") or [] if isinstance(t, dict)]:
            if isinstance(v, str):
                _names(v, out)
    elif cls == "TravelAPI":
        for k, kind in (("user_first_name", "first"), ("user_last_name", "last")):
            if isinstance(cfg.get(k), str) and cfg[k].isalpha():
                out.append((kind, cfg[k]))
        if isinstance(cfg.get("access_token"), str):
            out.append(("token", cfg["access_token"]))
        for cid, card in (cfg.get("credit_card_list") or {}).items():
            out.append(("card_id", cid))
            if isinstance(card, dict):
                if isinstance(card.get("card_number"), str):
                    out.append(("card_number", card["card_number"]))
                if isinstance(card.get("cardholder_name"), str):
                    _names(card["cardholder_name"], out)
        for bid in cfg.get("booking_record") or {}:
            out.append(("booking_id", bid))
    return out, contents


# --------------------------------------------------------------------------- pools
@dataclass(frozen=True)
class Pools:
    """Per kind, every value the 800 shipped tasks hold (sorted: the pools are data, not a seed)."""

    strings: dict[str, tuple[str, ...]]
    numbers: dict[tuple[str, tuple[str, ...]], tuple[float | int, ...]]
    contents: tuple[str, ...]


def _stem(name: str) -> tuple[str, str]:
    """``('report', '.txt')``; a hidden file keeps its dot in the extension slot: ``('hidden', '.')``."""
    if name.startswith("."):
        return name[1:], "."
    if "." in name:
        stem, ext = name.rsplit(".", 1)
        return stem, "." + ext
    return name, ""


@cache
def pools() -> Pools:
    strings: dict[str, set[str]] = defaultdict(set)
    numbers: dict[tuple[str, tuple[str, ...]], set[float | int]] = defaultdict(set)
    contents: set[str] = set()
    for t in load_tasks():
        for cls, cfg in t.initial_config.items():
            lits, conts = extract(cls, cfg)
            for kind, v in lits:
                strings[kind].add(_stem(v)[0] if kind == "file" else v)
            contents.update(c for _, c in conts)
            for pat in NUMERIC_FIELDS.get(cls, ()):
                for _, v in _leaves(cfg, pat):
                    if isinstance(v, (int, float)) and not isinstance(v, bool):
                        numbers[(cls, pat)].add(v)
    return Pools(
        {k: tuple(sorted(v)) for k, v in strings.items()},
        {k: tuple(sorted(v)) for k, v in numbers.items()},
        tuple(sorted(contents)),
    )


def _leaves(cfg: Any, pat: tuple[str, ...], path: tuple[str, ...] = ()) -> list[tuple[tuple[str, ...], Any]]:
    if not pat:
        return [(path, cfg)]
    if not isinstance(cfg, dict):
        return []
    head, rest = pat[0], pat[1:]
    keys = list(cfg) if head == "*" else ([head] if head in cfg else [])
    out = []
    for k in keys:
        out.extend(_leaves(cfg[k], rest, (*path, k)))
    return out


# --------------------------------------------------------------------------- the map
def _pattern(words: list[str]) -> re.Pattern[str] | None:
    if not words:
        return None
    alts = "|".join(re.escape(w) for w in sorted(set(words), key=lambda w: (-len(w), w)))
    return re.compile(rf"(?<![A-Za-z0-9])(?:{alts})(?![A-Za-z0-9])", re.IGNORECASE)


def _case_like(matched: str, original: str, fresh: str) -> str:
    if matched == original:
        return fresh
    if matched.islower():
        return fresh.lower()
    if matched.isupper():
        return fresh.upper()
    if matched[:1].isupper():
        return fresh[:1].upper() + fresh[1:]
    return fresh


@dataclass
class LiteralMap:
    """Original -> fresh literals, applied token-wise (case-insensitive match, case kept)."""

    fwd: dict[str, str] = field(default_factory=dict)  # casefolded original -> fresh
    orig: dict[str, str] = field(default_factory=dict)  # casefolded original -> as registered
    kinds: dict[str, str] = field(default_factory=dict)  # casefolded original -> kind

    def __post_init__(self) -> None:
        self._re: re.Pattern[str] | None = None

    def add(self, kind: str, original: str, fresh: str) -> None:
        key = original.casefold()
        self.fwd[key] = fresh
        self.orig[key] = original
        self.kinds[key] = kind
        self._re = None

    @property
    def regex(self) -> re.Pattern[str] | None:
        if self._re is None:
            self._re = _pattern(list(self.orig.values()))
        return self._re

    def sub(self, text: str) -> str:
        rx = self.regex
        if rx is None or not text:
            return text

        def one(m: re.Match[str]) -> str:
            key = m.group(0).casefold()
            return _case_like(m.group(0), self.orig[key], self.fwd[key])

        return rx.sub(one, text)

    def digest(self) -> str:
        return hashlib.sha256(json.dumps(sorted(self.fwd.items())).encode()).hexdigest()[:16]


def sub_config(obj: Any, lm: LiteralMap) -> Any:
    """Every string of a config (dict keys included) through the map; other leaves kept."""
    if isinstance(obj, dict):
        return {(lm.sub(k) if isinstance(k, str) else k): sub_config(v, lm) for k, v in obj.items()}
    if isinstance(obj, list):
        return [sub_config(v, lm) for v in obj]
    if isinstance(obj, str):
        return lm.sub(obj)
    return obj


def sub_call(call: Call, lm: LiteralMap) -> Call:
    return call.map_values(lambda v: lm.sub(v) if isinstance(v, str) else v)


# --------------------------------------------------------------------------- per-task plan
def _call_leaves(calls: list[Call]) -> list[Any]:
    out: list[Any] = []

    def walk(v: Any) -> None:
        if isinstance(v, (list, tuple)):
            for x in v:
                walk(x)
        elif isinstance(v, dict):
            for k, x in v.items():
                walk(k)
                walk(x)
        else:
            out.append(v)

    for c in calls:
        for a in c.args:
            walk(a)
        for _, v in c.kwargs:
            walk(v)
    return out


def _config_numbers(obj: Any) -> list[float]:
    if isinstance(obj, dict):
        return [x for v in obj.values() for x in _config_numbers(v)]
    if isinstance(obj, list):
        return [x for v in obj for x in _config_numbers(v)]
    if isinstance(obj, (int, float)) and not isinstance(obj, bool):
        return [float(obj)]
    return []


@dataclass(frozen=True)
class TaskPlan:
    """What is computed once per shipped task: candidates, frozen literals, the shipped replay."""

    task: Task
    calls: list[list[Call]]
    literals: list[tuple[str, str]]  # (kind, original), one per casefolded original
    frozen: dict[str, str]  # original -> why it is kept
    numeric: list[tuple[str, tuple[str, ...], tuple[str, ...], float | int]]  # (cls, pattern, path, value)
    contents: list[tuple[str, tuple[str, ...], str]]  # (cls, path, content)
    vocabulary: frozenset[str]  # casefolded strings of the task (fresh values must avoid them)
    shipped: Replay
    read_only: bool


def question_text(question: list[list[dict[str, str]]]) -> str:
    return "\n".join(m.get("content", "") for turn in question for m in turn if isinstance(m, dict))


@cache
def plan(task_id: str) -> TaskPlan:
    task = get_task(task_id)
    calls = [[parse_call(c) for c in turn] for turn in task.ground_truth]
    flat = [c for turn in calls for c in turn]
    leaves = _call_leaves(flat)
    call_strings = [v for v in leaves if isinstance(v, str)]
    qtext = question_text(task.question)
    vocab: set[str] = set()

    def collect(o: Any) -> None:
        if isinstance(o, dict):
            for k, v in o.items():
                if isinstance(k, str):
                    vocab.add(k.casefold())
                collect(v)
        elif isinstance(o, list):
            for v in o:
                collect(v)
        elif isinstance(o, str):
            vocab.add(o.casefold())

    collect(task.initial_config)
    vocab.update(s.casefold() for s in call_strings)

    seen: dict[str, tuple[str, str]] = {}
    frozen: dict[str, str] = {}
    contents: list[tuple[str, tuple[str, ...], str]] = []
    for cls in task.involved_classes:
        lits, conts = extract(cls, task.initial_config.get(cls, {}))
        contents.extend((cls, p, c) for p, c in conts)
        for kind, v in lits:
            key = v.casefold()
            if key in seen or key in frozen:
                continue
            if len(v) < _MIN_LEN or (kind == "file" and len(_stem(v)[0]) < _MIN_LEN):
                frozen[v] = "too short to rename in prose"
            elif key in schema_words():
                frozen[v] = "a function, parameter or enum name of BFCL's tool docs"
            elif task.long_context and kind == "file" and v in _files_tail_used():
                frozen[v] = "BFCL's long-context extension treats this file name specially"
            elif any(s and s.casefold() != key and s.casefold() in key for s in call_strings if len(s) >= 2):
                # A call reads it by a part of its name (find(name='test') on test_image1.jpg).
                frozen[v] = "a call argument is a part of it"
            else:
                seen[key] = (kind, v)
    # A part of a kept literal that is itself a candidate would rename the kept one's part
    # consistently; that is fine (all strings pass through one map).
    literals = list(seen.values())

    call_numbers = {float(v) for v in leaves if isinstance(v, (int, float)) and not isinstance(v, bool)}
    q_numbers = {float(x) for x in _NUM.findall(qtext)}
    all_numbers: dict[float, int] = defaultdict(int)
    for x in _config_numbers(task.initial_config):
        all_numbers[x] += 1
    numeric = []
    for cls in task.involved_classes:
        for pat in NUMERIC_FIELDS.get(cls, ()):
            for path, v in _leaves(task.initial_config.get(cls, {}), pat):
                if not isinstance(v, (int, float)) or isinstance(v, bool):
                    continue
                fv = float(v)
                if fv in call_numbers or fv in q_numbers or all_numbers[fv] > 1:
                    continue  # referenced or ambiguous: resampling it could change what a call means
                numeric.append((cls, pat, path, v))
    swappable = []
    qfold = qtext.casefold()
    for cls, p, c in contents:
        low = c.casefold()
        words = {w for w in re.findall(r"[a-z]{5,}", low)}
        if any(len(s) >= 2 and s.casefold() in low for s in call_strings) or any(w in qfold for w in words):
            continue
        swappable.append((cls, p, c))
    shipped = replay(task.initial_config, task.involved_classes, task.long_context, calls)
    read_only = all(s == shipped.initial for s in shipped.states)
    p = TaskPlan(task, calls, literals, frozen, numeric, swappable, frozenset(vocab), shipped, read_only)
    if read_only:
        return p
    return dataclasses.replace(p, numeric=_probe(p, numeric, "n"), contents=_probe(p, swappable, "c"))


def _probe_values(p: TaskPlan, item: tuple[Any, ...], kind: str) -> list[Any]:
    """The two extreme draws of a field (its pool's least and greatest other value)."""
    if kind == "n":
        cls, pat, _, v = item
        taken = set(_config_numbers(p.task.initial_config))
        pool = [x for x in pools().numbers.get((cls, pat), ()) if float(x) not in taken and type(x) is type(v)]
    else:
        pool = [x for x in pools().contents if x != item[2]]
    return sorted({pool[0], pool[-1]}, key=repr) if pool else []


def _probe(p: TaskPlan, items: list[Any], kind: str) -> list[Any]:
    """The fields whose resampling leaves the replay a transport of the shipped one, at both
    extremes of their pool (group testing: a passing group is kept whole, a failing one split).
    A field a ground-truth call computes with (``fillFuelTank`` on the fuel level, ``place_order``
    against the balance) fails here and is never resampled."""

    def passes(group: list[Any]) -> bool:
        vals = [_probe_values(p, it, kind) for it in group]
        if any(not v for v in vals):
            return False
        for pick in (0, -1):
            if kind == "n":
                d = Draw(LiteralMap(), {(it[0], it[2]): (it[3], v[pick]) for it, v in zip(group, vals, strict=True)}, {})
            else:
                d = Draw(LiteralMap(), {}, {(it[0], it[1]): (it[2], v[pick]) for it, v in zip(group, vals, strict=True)})
            cfg, _, calls = apply(p, d)
            run = replay(cfg, p.task.involved_classes, p.task.long_context, calls)
            if any(not x.startswith("goal_unchanged") for x in check_draw(p, d, run)):
                return False
        return True

    def keep(group: list[Any]) -> list[Any]:
        if not group:
            return []
        if passes(group):
            return group
        if len(group) == 1:
            return []
        mid = len(group) // 2
        return keep(group[:mid]) + keep(group[mid:])

    return keep(items)


@cache
def schema_words() -> frozenset[str]:
    """Function, parameter, property and enum names of BFCL's multi-turn tool docs (casefolded):
    a literal equal to one is a field name of the tools' outputs, never renamed."""
    from contam.regen.bfcl.world import CLASS_MODULE, data_root

    out: set[str] = set()

    def walk(o: Any) -> None:
        if isinstance(o, dict):
            for k, v in o.items():
                out.add(str(k).casefold())
                if k == "enum" and isinstance(v, list):
                    out.update(str(x).casefold() for x in v)
                walk(v)
        elif isinstance(o, list):
            for v in o:
                walk(v)

    for mod in CLASS_MODULE.values():
        doc = data_root() / "multi_turn_func_doc" / f"{mod}.json"
        for line in doc.read_text(encoding="utf-8").splitlines():
            if line.strip():
                rec = json.loads(line)
                out.add(rec.get("name", "").casefold())
                walk(rec.get("parameters"))
                walk(rec.get("response"))
    return frozenset(out)


@cache
def _long_context_texts() -> tuple[str, ...]:
    try:
        from bfcl_eval.eval_checker.multi_turn_eval.func_source_code import long_context as lc

        return tuple(v for k, v in sorted(vars(lc).items()) if k.isupper() and isinstance(v, str) and len(v) > 200)
    except ImportError:  # pragma: no cover - older bfcl-eval
        return ()


@cache
def _files_tail_used() -> frozenset[str]:
    try:
        from bfcl_eval.eval_checker.multi_turn_eval.func_source_code.long_context import FILES_TAIL_USED

        return frozenset(FILES_TAIL_USED)
    except ImportError:  # pragma: no cover - older bfcl-eval
        return frozenset()


# --------------------------------------------------------------------------- drawing fresh values
def _redigit(value: str, rng: random.Random) -> str:
    return "".join(str(rng.randrange(10)) if ch.isdigit() else ch for ch in value)


def _fresh_string(
    kind: str, original: str, rng: random.Random, used: set[str], bad: re.Pattern[str] | None, vocab: frozenset[str]
) -> str | None:
    pool = list(pools().strings.get(kind, ()))
    rng.shuffle(pool)
    stem, ext = _stem(original) if kind == "file" else (original, "")

    def build(base: str) -> str:
        if kind == "file":
            return "." + base if ext == "." else base + ext
        if kind in ("card_number", "booking_id", "token", "card_id") and any(ch.isdigit() for ch in base):
            return _redigit(base, rng)
        return base

    def ok(c: str) -> bool:
        key = c.casefold()
        return (
            key != original.casefold()
            and key not in used
            and key not in vocab
            and (bad is None or not bad.search(c))
            and len(c) >= _MIN_LEN
        )

    for base in pool:
        if kind == "file" and base == stem:
            continue
        cand = build(base)
        if ok(cand):
            return cand
    # Pool exhausted for this task: two pool values joined (still the benchmark's own words).
    for _ in range(50):
        if len(pool) < 2:
            break
        a, b = rng.sample(pool, 2)
        cand = build(f"{a}_{b}" if kind in ("file", "dir", "handle", "card_id", "booking_id", "token") else a + b)
        if ok(cand):
            return cand
    return None


@dataclass(frozen=True)
class Draw:
    """One attempt's operators: the literal map and the positional replacements."""

    lm: LiteralMap
    numbers: dict[tuple[str, tuple[str, ...]], tuple[Any, Any]]  # (cls, path) -> (old, new)
    contents: dict[tuple[str, tuple[str, ...]], tuple[str, str]]  # (cls, path) -> (old, new)


def draw(p: TaskPlan, seed: int, attempt: int, rekey: bool, resample: bool, half: bool = False) -> Draw | None:
    rng = random.Random(f"bfcl|{p.task.id}|{seed}|{attempt}")
    lm = LiteralMap()
    used: set[str] = set()
    bad = _pattern([v for _, v in p.literals])
    if rekey:
        for kind, v in p.literals:
            fresh = _fresh_string(kind, v, rng, used, bad, p.vocabulary)
            if fresh is None:
                return None
            used.add(fresh.casefold())
            lm.add(kind, v, fresh)
    numbers: dict[tuple[str, tuple[str, ...]], tuple[Any, Any]] = {}
    contents: dict[tuple[str, tuple[str, ...]], tuple[str, str]] = {}
    if resample:
        taken = set(_config_numbers(p.task.initial_config))
        for cls, pat, path, v in p.numeric:
            if half and rng.random() < 0.5:
                continue  # fields a joint condition ties (an average of four tyres) stay apart
            pool = [x for x in pools().numbers.get((cls, pat), ()) if float(x) not in taken and type(x) is type(v)]
            if not pool:
                continue
            new = rng.choice(pool)
            taken.add(float(new))
            numbers[(cls, path)] = (v, new)
        cpool = list(pools().contents)
        for cls, path, c in p.contents:
            if half and rng.random() < 0.5:
                continue
            others = [x for x in cpool if x != c and (bad is None or not bad.search(x))]
            if others:
                contents[(cls, path)] = (c, rng.choice(others))
    return Draw(lm, numbers, contents)


def _set_path(cfg: dict[str, Any], path: tuple[str, ...], value: Any, gfs: bool = False) -> None:
    node: Any = cfg
    if gfs:  # GFS paths run through "contents" between names
        node = cfg["root"][path[0]]
        for name in path[1:-1]:
            node = node["contents"][name]
        node["contents"][path[-1]]["content"] = value
        return
    for k in path[:-1]:
        node = node[k]
    node[path[-1]] = value


def apply(p: TaskPlan, d: Draw) -> tuple[dict[str, Any], list[list[dict[str, str]]], list[list[Call]]]:
    """The fresh config, question and calls of a draw (positional changes first, then the map)."""
    cfg = json.loads(json.dumps(p.task.initial_config))
    for (cls, path), (_, new) in d.numbers.items():
        _set_path(cfg[cls], path, new)
    for (cls, path), (_, new) in d.contents.items():
        _set_path(cfg[cls], path, new, gfs=True)
    cfg = sub_config(cfg, d.lm)
    question = [[{**m, "content": d.lm.sub(m.get("content", ""))} for m in turn] for turn in p.task.question]
    calls = [[sub_call(c, d.lm) for c in turn] for turn in p.calls]
    return cfg, question, calls


# --------------------------------------------------------------------------- transport checks
def _parse_output(s: str) -> Any:
    if s[:1] in "{[":
        try:
            return json.loads(s)
        except json.JSONDecodeError:
            return s
    return s


def _canon(o: Any) -> Any:
    """Order-insensitive form (a rename may reorder listings and dict keys)."""
    if isinstance(o, dict):
        return sorted(((str(k), _canon(v)) for k, v in o.items()), key=repr)
    if isinstance(o, list):
        return sorted((_canon(v) for v in o), key=repr)
    if isinstance(o, float) and o.is_integer():
        return int(o)
    return o


def transport_output(out: str, d: Draw) -> Any:
    """The shipped observation carried into the fresh world: strings through the map, resampled
    numbers and contents replaced by their fresh values."""
    nums = {float(old): new for old, new in d.numbers.values()}
    conts = dict(d.contents.values())

    def walk(o: Any) -> Any:
        if isinstance(o, dict):
            return {(walk(k) if isinstance(k, str) else k): walk(v) for k, v in o.items()}
        if isinstance(o, list):
            return [walk(v) for v in o]
        if isinstance(o, str):
            for old, new in conts.items():
                if old and old in o:
                    o = o.replace(old, new)
            # BFCL's long-context filler is glued to a file's text ("report.csvThe company's ...");
            # it is class data, not task text: map the pieces around it.
            for ext in _long_context_texts():
                if ext in o:
                    return ext.join(d.lm.sub(part) for part in o.split(ext))
            return d.lm.sub(o)
        if isinstance(o, (int, float)) and not isinstance(o, bool) and float(o) in nums:
            return nums[float(o)]
        return o

    return _canon(walk(_parse_output(out)))


def check_draw(p: TaskPlan, d: Draw, run: Replay) -> list[str]:
    """Problems of a draw's replay against the shipped replay, as ``reason: detail`` strings."""
    probs = []
    if run.errors != p.shipped.errors:
        probs.append(f"error_pattern_changed: {run.errors} != shipped {p.shipped.errors}")
    else:
        for t, (a, b) in enumerate(zip(p.shipped.outcomes, run.outcomes, strict=True)):
            for k, (oa, ob) in enumerate(zip(a, b, strict=True)):
                if transport_output(oa.output, d) != _canon(_parse_output(ob.output)):
                    probs.append(f"outputs_not_transported: turn {t} call {k} ({p.calls[t][k].name})")
                    break
            if probs:
                break
    if all(s == run.initial for s in run.states):
        probs.append("goal_unchanged: no turn changes the fresh state")
    return probs


def leaks(p: TaskPlan, d: Draw, cfg: dict[str, Any], question: list[list[dict[str, str]]], calls: list[list[Call]]) -> list[str]:
    """Original re-keyed literals (whole-token, any case) or replaced contents found in fresh text."""
    texts: list[str] = [question_text(question)]

    def collect(o: Any) -> None:
        if isinstance(o, dict):
            for k, v in o.items():
                if isinstance(k, str):
                    texts.append(k)
                collect(v)
        elif isinstance(o, list):
            for v in o:
                collect(v)
        elif isinstance(o, str):
            texts.append(o)

    collect(cfg)
    texts.extend(v for v in _call_leaves([c for t in calls for c in t]) if isinstance(v, str))
    joined = "\n".join(texts)
    out = []
    rx = _pattern(list(d.lm.orig.values()))
    if rx is not None:
        m = rx.search(joined)
        if m:
            out.append(f"leak: original {m.group(0)!r} in the fresh instance")
    for old, new in d.contents.values():
        if old != new and len(old) >= 8 and old in joined:
            out.append(f"leak: a replaced file content {old[:30]!r} survives")
    return out


def injective(d: Draw) -> list[str]:
    fresh = [v.casefold() for v in d.lm.fwd.values()]
    if len(set(fresh)) != len(fresh):
        return ["not_injective: two originals share a fresh value"]
    if set(fresh) & set(d.lm.fwd):
        return ["not_injective: a fresh value is an original"]
    return []


# --------------------------------------------------------------------------- the instance
@dataclass(frozen=True)
class BfclInstance(Record):
    """One regenerated BFCL multi-turn task; everything is in the fresh literal space."""

    key: str
    task_id: str
    category: str
    seed: int
    attempt: int
    operators: list[str]
    question: list[list[dict[str, str]]]
    initial_config: dict[str, Any]
    involved_classes: list[str]
    ground_truth: list[list[str]]
    excluded_function: list[str]
    missed_function: dict[str, list[str]] | None
    reseeded: dict[str, int]
    goal_hashes: list[str]
    initial_hash: str
    map_digest: str
    instance_hash: str = ""

    @property
    def long_context(self) -> bool:
        return "long_context" in self.category

    @property
    def goal_hash(self) -> str:
        return self.goal_hashes[-1] if self.goal_hashes else self.initial_hash


@dataclass(frozen=True)
class Rejection(Record):
    """A task at a seed that no draw regenerates: the reason code of the last draw, and detail."""

    key: str
    task_id: str
    category: str
    seed: int
    reason: str
    detail: str


#: The draws tried in order, (re-key, resample, a random half of the resampled fields): fewer
#: operators each time, each draw with its own random stream.
ATTEMPTS = ((True, True, False),) * 3 + ((True, False, False),) * 2 + ((False, True, False),) * 2 + ((True, True, True),) * 3


@dataclass
class Generated:
    """A successful generation with what the audit needs (the map is never written out)."""

    instance: BfclInstance
    draw: Draw
    run: Replay
    calls: list[list[Call]]


def hash_instance(rec: dict[str, Any]) -> str:
    return canonical_hash({k: v for k, v in rec.items() if k != "instance_hash"})


def generate(task_id: str, seed: int) -> Generated | Rejection:
    """Regenerate ``task_id`` at ``seed``: the first draw whose replay transports the shipped one."""
    p = plan(task_id)
    t = p.task
    key = f"bfcl/{t.id}/{seed}"
    if p.read_only:
        return Rejection(key, t.id, t.category, seed, "read_only", REASONS["read_only"])
    last = ("nothing_reseeded", REASONS["nothing_reseeded"])
    for attempt, (rekey, resample, half) in enumerate(ATTEMPTS):
        if (rekey and not p.literals) and (not resample or not (p.numeric or p.contents)):
            continue
        d = draw(p, seed, attempt, rekey and bool(p.literals), resample, half)
        if d is None:
            last = ("not_injective", "the pools have no fresh value for a literal")
            continue
        if not d.lm.fwd and not d.numbers and not d.contents:
            continue
        cfg, question, calls = apply(p, d)
        probs = injective(d) + leaks(p, d, cfg, question, calls)
        run = replay(cfg, t.involved_classes, t.long_context, calls)
        probs += check_draw(p, d, run)
        if probs:
            code, _, detail = probs[0].partition(": ")
            last = (code, detail)
            continue
        ops = (["rekey"] if d.lm.fwd else []) + (["resample"] if d.numbers or d.contents else [])
        kinds: dict[str, int] = defaultdict(int)
        for k in d.lm.kinds.values():
            kinds[k] += 1
        if d.numbers:
            kinds["numeric_field"] = len(d.numbers)
        if d.contents:
            kinds["file_content"] = len(d.contents)
        rec = BfclInstance(
            key=key,
            task_id=t.id,
            category=t.category,
            seed=seed,
            attempt=attempt,
            operators=ops,
            question=question,
            initial_config=cfg,
            involved_classes=list(t.involved_classes),
            ground_truth=[[c.render() for c in turn] for turn in calls],
            excluded_function=list(t.excluded_function),
            missed_function=t.missed_function,
            reseeded=dict(sorted(kinds.items())),
            goal_hashes=[state_hash(s) for s in run.states],
            initial_hash=state_hash(run.initial),
            map_digest=d.lm.digest(),
        )
        inst = dataclasses.replace(rec, instance_hash=hash_instance(rec.to_dict()))
        return Generated(inst, d, run, calls)
    return Rejection(key, t.id, t.category, seed, last[0], last[1])
