"""Re-keying: a seeded, format-preserving, injective renaming of every id and personal datum.

Paper 003 §3: re-keying renames entities format-preservingly (a new order id, a new card
token) and so holds difficulty fixed. One :class:`KeyMap` per (domain, seed) covers every
id class of the database; fresh values keep the shape of the original (``#W`` + 7 digits,
``name_surname_1234``, 10-digit item ids, ``credit_card_`` + digits, 6-character
reservation codes with the same letter/digit positions, ``HAT`` + 3 digits, synthetic
names and street names), are disjoint from every original value of the class, and are
re-drawn until no original id occurs in them as a substring — never made by appending a
suffix to the original, which is the leak the paper's audit caught (``XEWRD9`` →
``XEWRD9_3602``).

>>> km = KeyMap.build("retail", 7)
>>> fresh = km.fwd("order", "#W2378156")
>>> fresh.startswith("#W") and len(fresh) == 9 and fresh != "#W2378156"
True
>>> km.inv("order", fresh)
'#W2378156'
"""

from __future__ import annotations

import bisect
import hashlib
import json
import random
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cache

import ahocorasick
import numpy as np

from contam.regen.mint import STREET_SUFFIX, SYLLABLES, draw
from contam.regen.world import World, load_world

#: Classes audited at the substring level: an original value must not occur anywhere inside
#: fresh text. Names, zips and card last-fours are short natural tokens and are audited as
#: whole words instead (``Li`` inside ``Lisbon`` is no leak; ``Li`` as a word is).
SUBSTRING_CLASSES = ("order", "user", "product", "item", "payment", "tracking", "email", "address1", "address2", "reservation", "flight")
WORD_CLASSES = ("name", "zip", "last4")

_DIGITS = "0123456789"
_DIGIT_RUN = re.compile(r"\d+")
#: Extra digits for fresh suite numbers (``Suite 259`` -> ``Suite 7431``).
ADDRESS2_WIDEN = 1
_UPPER = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
_LOWER = _UPPER.lower()


def _digits(rng: random.Random, n: int) -> str:
    return str(rng.randrange(10 ** (n - 1), 10**n)) if n > 0 else ""


def _shape(rng: random.Random, value: str) -> str:
    """Same length, each digit/upper/lower replaced by a random one of its kind."""
    out = []
    for c in value:
        if c.isdigit():
            out.append(rng.choice(_DIGITS))
        elif c.isupper():
            out.append(rng.choice(_UPPER))
        elif c.islower():
            out.append(rng.choice(_LOWER))
        else:
            out.append(c)
    return "".join(out)


def _word(rng: random.Random, lo: int = 2, hi: int = 3) -> str:
    return "".join(rng.choice(SYLLABLES) for _ in range(rng.randint(lo, hi))).capitalize()


@dataclass
class _Ctx:
    """What a mint function may consult: the name map (users and emails derive from it)."""

    names: dict[str, str]


#: A recipe mints one candidate: recipe(rng, ctx, extra) -> str. Parsing the original value
#: happens once per domain (in :func:`_recipe`); a seed only draws random parts.
Recipe = Callable[[random.Random, _Ctx, int], str]


def _recipe(cls: str, value: str) -> Recipe:
    """The format-preserving mint for ``value`` of class ``cls``; ``extra`` widens the format
    after many rejections (more digits, another syllable)."""
    if cls == "order" and (m := re.fullmatch(r"(#W?)(\d+)", value)):
        pre, n = m.group(1), len(m.group(2))
        return lambda rng, ctx, extra: pre + _digits(rng, n + extra)
    if cls in ("item", "product", "tracking") and value.isdigit():
        n = len(value)
        return lambda rng, ctx, extra: _digits(rng, n + extra)
    if cls == "payment" and (m := re.fullmatch(r"(.*_)(\d+)", value)):
        pre, n = m.group(1), len(m.group(2))
        return lambda rng, ctx, extra: pre + _digits(rng, n + extra)
    if cls == "name":
        return lambda rng, ctx, extra: _word(rng, 2, 3 + extra)
    if cls == "user" and (m := re.fullmatch(r"([a-z]+)_([a-z]+)_(\d+)", value)):
        a, b, n = m.group(1).capitalize(), m.group(2).capitalize(), len(m.group(3))
        return lambda rng, ctx, extra: (
            f"{ctx.names.get(a) or _word(rng)}_{ctx.names.get(b) or _word(rng)}".lower() + "_" + _digits(rng, n + extra)
        )
    if cls == "email" and (m := re.fullmatch(r"([a-z]+)\.([a-z]+)(\d*)@(.+)", value)):
        a, b, n, dom = m.group(1).capitalize(), m.group(2).capitalize(), max(len(m.group(3)), 4), m.group(4)
        return lambda rng, ctx, extra: (
            f"{ctx.names.get(a) or _word(rng)}.{ctx.names.get(b) or _word(rng)}".lower() + _digits(rng, n + extra) + "@" + dom
        )
    if cls == "email" and (m := re.fullmatch(r"([^@]+)@(.+)", value)):
        local, dom = m.group(1), m.group(2)

        def mint_email(rng: random.Random, ctx: _Ctx, extra: int) -> str:
            out = re.sub(r"[a-z]+", lambda w: _word(rng).lower(), local)
            return re.sub(r"\d+", lambda d: _digits(rng, len(d.group()) + extra), out) + "@" + dom

        return mint_email
    if cls == "address1" and (m := STREET_SUFFIX.fullmatch(value)):
        n, suffix = len(m.group(1)), f" {m.group(3)}" if m.group(3) else ""
        return lambda rng, ctx, extra: f"{_digits(rng, n + extra)} {_word(rng)}{suffix}"
    if cls == "address2" and (m := re.fullmatch(r"(\D*?)(\d+)", value)):
        # Suite numbers are crowded (most 3-digit ones are taken): one digit more from the start.
        pre, n = m.group(1), len(m.group(2)) + ADDRESS2_WIDEN
        return lambda rng, ctx, extra: pre + _digits(rng, n + extra)
    if cls == "zip" and value.isdigit():
        n = len(value)
        return lambda rng, ctx, extra: "".join(rng.choices(_DIGITS, k=n))
    if cls == "last4":
        n = len(value) or 4
        return lambda rng, ctx, extra: "".join(rng.choices(_DIGITS, k=n))
    if cls == "flight" and (m := re.fullmatch(r"([A-Z]+)(\d+)", value)):
        pre, n = m.group(1), len(m.group(2))
        return lambda rng, ctx, extra: pre + "".join(rng.choices(_DIGITS, k=n + extra))
    if cls == "reservation":
        return lambda rng, ctx, extra: _shape(rng, value) + ("".join(rng.choices(_UPPER, k=extra)) if extra else "")
    return lambda rng, ctx, extra: _shape(rng, value) if extra == 0 else _shape(rng, value) + _word(rng).lower()


def _mint(cls: str, value: str, rng: random.Random, ctx: _Ctx, extra: int) -> str:
    """One fresh candidate for ``value`` of class ``cls``."""
    return _recipe(cls, value)(rng, ctx, extra)


@dataclass
class Originals:
    """Every original value of a domain, by class, plus an automaton over the substring classes."""

    by_class: dict[str, frozenset[str]]
    automaton: ahocorasick.Automaton
    words: frozenset[str]
    #: Original zips and card last-fours: fresh ids must not carry them as a digit group.
    short_digits: frozenset[str] = frozenset()
    #: Case-sensitive automaton over the names (matches are kept only at word boundaries).
    names_automaton: ahocorasick.Automaton | None = None

    def clashes(self, cand: str) -> bool:
        """True if a digit group of ``cand`` is an original zip or card last-four (``pove_kuvi_7334``)."""
        return any(g in self.short_digits for g in _DIGIT_RUN.findall(cand))

    def leaks(self, text: str) -> list[str]:
        """Original ids occurring as substrings of ``text`` (case-insensitive) and original
        names occurring in it as whole words."""
        found = [v for _, v in self.automaton.iter(text.casefold())] if self.automaton.kind else []
        if self.names_automaton is not None and self.names_automaton.kind:
            n = len(text)
            for end, w in self.names_automaton.iter(text):
                start = end - len(w) + 1
                if (start == 0 or not text[start - 1].isalpha()) and (end + 1 == n or not text[end + 1].isalpha()):
                    found.append(w)
        return found


@cache
def originals(domain: str) -> Originals:
    """The original values of ``domain`` (cached), with the leak automaton built once."""
    by_class = {k: frozenset(v) for k, v in load_world(domain).originals().items()}
    auto = ahocorasick.Automaton()
    for cls in SUBSTRING_CLASSES:
        for v in by_class.get(cls, ()):
            auto.add_word(v.casefold(), v)
    auto.make_automaton()
    # Zips and last-fours are short digit strings that collide with amounts and years by
    # chance; they are checked per task (the task user's own values) rather than globally.
    words = frozenset(by_class.get("name", ()))
    names = ahocorasick.Automaton()
    for w in words:
        names.add_word(w, w)
    names.make_automaton()
    return Originals(by_class, auto, words, frozenset(by_class.get("zip", ())) | frozenset(by_class.get("last4", ())), names)


def _rng(*parts: object) -> random.Random:
    return random.Random(int.from_bytes(hashlib.sha256("|".join(map(str, parts)).encode()).digest()[:8], "big"))


#: Classes whose fresh values carry free digit groups that must not spell an original zip/last-four.
_DIGIT_CLASH = frozenset({"user", "email"})

#: Mint order: names first (user ids and emails are derived from the fresh names).
_ORDER = (
    "name",
    "zip",
    "last4",
    "address1",
    "address2",
    "order",
    "product",
    "item",
    "payment",
    "tracking",
    "reservation",
    "flight",
    "user",
    "email",
)


@dataclass
class KeyMap:
    """The fresh id of every original value of one domain at one seed, both directions.

    Values not in the database (an address a task asks to move to, a wrong email the
    gold program tries first) are minted on first use from a stream seeded by ``(seed, scope)``,
    so they are deterministic and never collide with the database's fresh ids.
    """

    domain: str
    seed: int
    forward: dict[str, dict[str, str]]
    backward: dict[str, dict[str, str]]
    scope: str = ""
    _extra_rng: random.Random | None = field(default=None, repr=False)

    @property
    def key(self) -> str:
        return f"seed={self.seed}"

    @property
    def flat(self) -> dict[tuple[str, str], str]:
        """(class, original) -> fresh, for the database's values (built once; templates fill from it)."""
        f = self.__dict__.get("_flat")
        if f is None:
            f = {(cls, k): v for cls, fwd in self.forward.items() for k, v in fwd.items()}
            self.__dict__["_flat"] = f
        return f

    @classmethod
    def build(cls, domain: str, seed: int) -> KeyMap:
        return _build(domain, seed)

    def fwd(self, cls: str, value: str) -> str:
        table = self.forward.setdefault(cls, {})
        fresh = table.get(value)
        if fresh is None:
            fresh = self._extend(cls, value)
        return fresh

    def inv(self, cls: str, value: str) -> str | None:
        return self.backward.get(cls, {}).get(value)

    def scoped(self, scope: str) -> KeyMap:
        """A copy-on-write view for one task: extensions minted there stay there."""
        return _Scoped(self, scope)

    def _extend(self, cls: str, value: str) -> str:
        if self._extra_rng is None:
            self._extra_rng = _rng(self.domain, self.seed, "extend", self.scope)
        orig = originals(self.domain)
        taken_back = self.backward.setdefault(cls, {})
        ctx = _Ctx(self.forward.get("name", {}))
        for attempt in range(1000):
            cand = _mint(cls, value, self._extra_rng, ctx, attempt // 50)
            if (
                cand in taken_back
                or cand in orig.by_class.get(cls, ())
                or cand == value
                or orig.leaks(cand)
                or (cls in _DIGIT_CLASH and orig.clashes(cand))
            ):
                continue
            self.forward.setdefault(cls, {})[value] = cand
            taken_back[cand] = value
            self.__dict__.pop("_digest_cache", None)  # the map grew: its digest changes
            return cand
        raise RuntimeError(f"could not mint a fresh {cls} for {value!r}")  # a bug: the formats are wide


class _Scoped(KeyMap):
    """KeyMap view whose extensions live in their own dicts over a shared base map."""

    def __init__(self, base: KeyMap, scope: str) -> None:
        self.domain, self.seed, self.scope = base.domain, base.seed, scope
        self._base = base
        self._extra_rng = None
        self.forward = {}
        self.backward = {}

    @property
    def flat(self) -> dict[tuple[str, str], str]:
        return self._base.flat

    def fwd(self, cls: str, value: str) -> str:
        fresh = self._base.forward.get(cls, {}).get(value)
        if fresh is not None:
            return fresh
        own = self.forward.get(cls, {}).get(value)
        return own if own is not None else self._extend_scoped(cls, value)

    def inv(self, cls: str, value: str) -> str | None:
        hit = self._base.backward.get(cls, {}).get(value)
        return hit if hit is not None else self.backward.get(cls, {}).get(value)

    def _extend_scoped(self, cls: str, value: str) -> str:
        if self._extra_rng is None:
            self._extra_rng = _rng(self.domain, self.seed, "extend", self.scope)
        orig = originals(self.domain)
        base_back = self._base.backward.get(cls, {})
        ctx = _Ctx(self._base.forward.get("name", {}))
        for attempt in range(1000):
            cand = _mint(cls, value, self._extra_rng, ctx, attempt // 50)
            if (
                cand in base_back
                or cand in self.backward.get(cls, {})
                or cand in orig.by_class.get(cls, ())
                or cand == value
                or orig.leaks(cand)
                or (cls in _DIGIT_CLASH and orig.clashes(cand))
            ):
                continue
            self.forward.setdefault(cls, {})[value] = cand
            self.backward.setdefault(cls, {})[cand] = value
            return cand
        raise RuntimeError(f"could not mint a fresh {cls} for {value!r}")

    def extensions(self) -> dict[str, dict[str, str]]:
        return self.forward


@cache
def _recipes(domain: str) -> dict[str, list[tuple[str, Recipe]]]:
    orig = originals(domain)
    return {cls: [(v, _recipe(cls, v)) for v in sorted(orig.by_class.get(cls, ()))] for cls in _ORDER}


@cache
def _values(domain: str) -> dict[str, tuple[list[str], list[tuple[str, str]]]]:
    """Per class, the originals in mint order and their (class, value) keys (built once per domain)."""
    return {cls: ([v for v, _ in rs], [(cls, v) for v, _ in rs]) for cls, rs in _recipes(domain).items()}


def _build(domain: str, seed: int) -> KeyMap:
    orig = originals(domain)
    recipes = _recipes(domain)
    value_lists = _values(domain)
    flat: dict[tuple[str, str], str] = {}
    rng = _rng(domain, seed, "rekey")
    nrng = np.random.default_rng(rng.getrandbits(64))
    forward: dict[str, dict[str, str]] = {}
    backward: dict[str, dict[str, str]] = {}
    ctx = _Ctx({})
    for cls in _ORDER:
        fwd: dict[str, str] = {}
        back: dict[str, str] = {}
        own = orig.by_class.get(cls, frozenset())
        check = orig.automaton.kind and cls in SUBSTRING_CLASSES
        auto_iter = orig.automaton.iter
        values, keys = value_lists[cls]
        batch: list[str | None] = draw(cls, values, nrng, ctx.names)
        if check or cls in _DIGIT_CLASH:  # one pass over the whole batch marks leaking / clashing candidates
            texts = [c or "" for c in batch]
            starts = np.concatenate(([0], np.cumsum(np.fromiter(map(len, texts), dtype=np.int64, count=len(texts)) + 1)))[:-1].tolist()
            joined = "\n".join(texts)
            marked = []
            if check:
                marked += [end - len(word) + 1 for end, word in orig.automaton.iter(joined.casefold())]
            if cls in _DIGIT_CLASH and orig.short_digits.intersection(_DIGIT_RUN.findall(joined)):
                # a digit group equal to an original zip / last-four (Originals.clashes, batched)
                marked += [m.start() for m in _DIGIT_RUN.finditer(joined) if m.group() in orig.short_digits]
            for start in marked:
                batch[bisect.bisect_right(starts, start) - 1] = None
        if None not in batch and len(set(batch)) == len(batch) and own.isdisjoint(batch):
            # The common case: the whole vectorised batch is clean, accept it in one go.
            fwd = dict(zip(values, batch, strict=True))  # type: ignore[arg-type]
            back = dict(zip(batch, values, strict=True))  # type: ignore[arg-type]
            forward[cls], backward[cls] = fwd, back
            flat.update(zip(keys, batch, strict=True))  # type: ignore[arg-type]
            if cls == "name":
                ctx = _Ctx(fwd)
            continue
        for (v, recipe), first in zip(recipes[cls], batch, strict=True):
            if first is not None and first not in back and first not in own:
                fwd[v] = first
                back[first] = v
                continue
            for attempt in range(1, 10_000):
                # The vectorised draw was the first candidate; re-draws use the scalar recipe.
                cand = recipe(rng, ctx, attempt // 50)
                if cand in back or cand in own or (cls in _DIGIT_CLASH and orig.clashes(cand)):
                    continue
                if check and next(auto_iter(cand.casefold()), None) is not None:
                    continue
                fwd[v] = cand
                back[cand] = v
                break
            else:  # pragma: no cover - the formats have room for every class
                raise RuntimeError(f"could not mint a fresh {cls} for {v!r}")
        forward[cls], backward[cls] = fwd, back
        flat.update(zip(keys, fwd.values(), strict=True))  # fwd was filled in value order
        if cls == "name":
            ctx = _Ctx(fwd)
    km = KeyMap(domain, seed, forward, backward)
    km.__dict__["_flat"] = flat
    return km


def map_digest(km: KeyMap) -> str:
    """SHA-256 over the sorted map (the determinism audit compares these); cached on the map."""
    d = getattr(km, "_digest_cache", None)
    if d is None:
        d = hashlib.sha256(json.dumps(km.forward, sort_keys=True).encode()).hexdigest()
        km._digest_cache = d  # type: ignore[attr-defined]
    return d


def build_world_map(domain: str, seed: int) -> KeyMap:
    """:meth:`KeyMap.build` for ``domain`` at ``seed`` (validates the domain)."""
    return KeyMap.build(domain, seed)


def world_of(domain: str) -> World:
    return load_world(domain)
