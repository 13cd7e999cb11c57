"""Literals of a BFCL task and the benchmark's pools: what is re-keyed, what it may become, the map.

The kinds of literal re-keyed in each class's config (file and directory names, handles,
passwords, people's names, card and booking ids, tokens) and the numeric state fields resampled;
the pools of every value the 800 shipped tasks hold, per kind; and the literal map that renames
originals to fresh values token-wise and case-preserving across configs, questions and calls.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections import defaultdict
from dataclasses import dataclass, field
from functools import cache
from typing import Any

from contam.regen.bfcl.calls import Call
from contam.regen.bfcl.world import load_tasks

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
