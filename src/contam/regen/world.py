"""Typed τ-bench worlds, a copy-on-write state over them, and the canonical state hash.

A :class:`World` is the shipped database of one domain (read-only, loaded once). A
:class:`State` is one episode's mutable view of it: entities are copied (and, for a
re-keyed instance, translated into the fresh id space) only when a tool first touches
them, so a fresh instance costs a handful of entity copies rather than a deep copy of
the whole database (paper 003 §3: the replay oracle must be cheap enough to run on every
instance).

The state hash is canonical: two states built on the same initial world hash equal iff
every entity is equal. It hashes the initial world's key plus the sorted set of entities
that differ from their initial value, so it never has to serialise untouched entities.

>>> w = load_world("retail")
>>> s = State(w)
>>> s.get("orders", "#W2378156")["status"]
'delivered'
>>> State(w).state_hash() == s.state_hash()   # reading does not change the state
True
"""

from __future__ import annotations

import gzip
import hashlib
import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from functools import cache
from typing import Any, Protocol

import orjson

from contam.data import data_path
from contam.errors import ConfigError

DOMAINS = ("retail", "airline")

#: Tool semantics. ``tau-bench`` (the default) is τ-bench's own tool code, quirks included: an
#: agent that τ-bench passes, contam passes. ``fixed`` corrects what is arguably a bug there
#: (docs/fresh-instances.md lists each difference).
SEMANTICS = ("tau-bench", "fixed")
DEFAULT_SEMANTICS = "tau-bench"


def check_semantics(semantics: str) -> str:
    """``semantics`` if it is one of :data:`SEMANTICS`, else a ConfigError naming the choices."""
    if semantics not in SEMANTICS:
        raise ConfigError(f"unknown semantics {semantics!r}; expected one of {', '.join(SEMANTICS)}")
    return semantics


#: The tables of each domain, named as τ-bench names its data files.
TABLES: dict[str, tuple[str, ...]] = {
    "retail": ("users", "orders", "products"),
    "airline": ("users", "reservations", "flights"),
}

#: Which id class the key of each table belongs to.
TABLE_CLASS: dict[str, str] = {
    "users": "user",
    "orders": "order",
    "products": "product",
    "reservations": "reservation",
    "flights": "flight",
}

#: Field name -> id class. A string (or list of strings) under one of these keys is an
#: identifier (or personal datum) that re-keying renames. Anything else is inert content
#: (product names, options, cities, dates, statuses, prices) and is kept as is.
KEY_CLASS: dict[str, str] = {
    "order_id": "order",
    "orders": "order",
    "user_id": "user",
    "product_id": "product",
    "item_id": "item",
    "item_ids": "item",
    "new_item_ids": "item",
    "exchange_items": "item",
    "exchange_new_items": "item",
    "return_items": "item",
    "payment_method_id": "payment",
    "payment_id": "payment",
    "exchange_payment_method_id": "payment",
    "return_payment_method_id": "payment",
    "id": "payment",  # only payment-method records carry a bare ``id``
    "tracking_id": "tracking",
    "email": "email",
    "first_name": "name",
    "last_name": "name",
    "address1": "address1",
    "address2": "address2",
    "zip": "zip",
    "last_four": "last4",
    "reservation_id": "reservation",
    "reservations": "reservation",
    "flight_number": "flight",
}

#: Dicts whose *keys* are ids of a class (``variants`` keyed by item id, ...).
DICT_KEY_CLASS: dict[str, str] = {"variants": "item", "payment_methods": "payment"}


class IdMap(Protocol):
    """What a :class:`State` needs from a re-keying map (see :class:`contam.regen.rekey.KeyMap`)."""

    @property
    def key(self) -> str: ...  # read-only: KeyMap derives it from the seed

    def fwd(self, cls: str, value: str) -> str: ...

    def inv(self, cls: str, value: str) -> str | None: ...


@dataclass(frozen=True)
class World:
    """The shipped database of one τ-bench domain, read-only, with lookup indices."""

    domain: str
    tables: dict[str, dict[str, dict[str, Any]]]
    index: dict[str, dict[Any, Any]] = field(default_factory=dict)

    def originals(self) -> dict[str, set[str]]:
        """Every original value of every id class that occurs in the database."""
        out: dict[str, set[str]] = {}
        for table, rows in self.tables.items():
            out.setdefault(TABLE_CLASS[table], set()).update(rows)
            for row in rows.values():
                _collect(row, None, out)
        return out


def _collect(obj: Any, cls: str | None, out: dict[str, set[str]]) -> None:
    if isinstance(obj, dict):
        for k, v in obj.items():
            if k in DICT_KEY_CLASS and isinstance(v, dict):
                out.setdefault(DICT_KEY_CLASS[k], set()).update(v)
            _collect(v, KEY_CLASS.get(k), out)
    elif isinstance(obj, list):
        for v in obj:
            _collect(v, cls, out)
    elif isinstance(obj, str) and cls is not None:
        out.setdefault(cls, set()).add(obj)


@cache
def load_world(domain: str) -> World:
    """Load the shipped database of ``domain`` ("retail" or "airline"); cached per process."""
    if domain not in DOMAINS:
        raise ConfigError(f"unknown domain {domain!r}; expected one of {', '.join(DOMAINS)}")
    tables = {}
    for table in TABLES[domain]:
        with gzip.open(data_path(f"taubench/{domain}_{table}.json.gz"), "rt", encoding="utf-8") as fh:
            tables[table] = json.load(fh)
    index: dict[str, dict[Any, Any]] = {"email": {}, "name_zip": {}}
    for uid, u in tables["users"].items():
        index["email"][u["email"].lower()] = uid  # τ-bench matches emails case-insensitively
        key = (u["name"]["first_name"].lower(), u["name"]["last_name"].lower(), u["address"]["zip"])
        index["name_zip"][key] = uid
    if domain == "airline":
        route: dict[tuple[str, str], list[str]] = {}
        by_origin: dict[str, list[str]] = {}
        for fn, f in sorted(tables["flights"].items()):
            route.setdefault((f["origin"], f["destination"]), []).append(fn)
            by_origin.setdefault(f["origin"], []).append(fn)
        index["route"] = route
        index["by_origin"] = by_origin
    return World(domain, tables, index)


@cache
def load_tasks(domain: str) -> tuple[dict[str, Any], ...]:
    """The shipped τ-bench test tasks of ``domain`` (tuple of dicts, in task-index order)."""
    if domain not in DOMAINS:
        raise ConfigError(f"unknown domain {domain!r}; expected one of {', '.join(DOMAINS)}")
    with gzip.open(data_path(f"taubench/tasks_{domain}_test.jsonl.gz"), "rt", encoding="utf-8") as fh:
        return tuple(json.loads(line) for line in fh if line.strip())


def translate(obj: Any, idmap: IdMap | None, cls: str | None = None) -> Any:
    """A deep copy of ``obj`` with every id-bearing field renamed through ``idmap``.

    With ``idmap=None`` it is a plain deep copy (the shipped world).
    """
    if isinstance(obj, dict):
        out = {}
        for k, v in obj.items():
            kc = DICT_KEY_CLASS.get(k)
            if kc is not None and isinstance(v, dict):
                out[k] = {(idmap.fwd(kc, kk) if idmap else kk): translate(vv, idmap) for kk, vv in v.items()}
            else:
                out[k] = translate(v, idmap, KEY_CLASS.get(k))
        return out
    if isinstance(obj, list):
        return [translate(v, idmap, cls) for v in obj]
    if isinstance(obj, str) and cls is not None and idmap is not None and obj:
        return idmap.fwd(cls, obj)  # an empty field ("address2": "") stays empty
    return obj


#: Fallback encoders (built once: ``json.dumps`` with options constructs an encoder per call).
_COMPACT = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False).encode
_CANON = json.JSONEncoder(sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode


def dumps(obj: Any) -> str:
    """Compact JSON text. orjson writes the same text as ``json.dumps(separators=(",", ":"),
    ensure_ascii=False)`` on this data (checked entity by entity in the tests) about 10x faster;
    what it refuses (non-string keys, huge ints) goes to the standard encoder."""
    try:
        return orjson.dumps(obj).decode()
    except TypeError:
        return _COMPACT(obj)


def loads(text: str) -> Any:
    """Parse JSON text (orjson: the same values as ``json.loads`` for JSON that our encoders write)."""
    return orjson.loads(text)


_OPEN, _CLOSE = "\ue000", "\ue001"


@dataclass(frozen=True)
class IdTemplate:
    """An entity's JSON text with its id leaves cut out, to be filled per map.

    ``pieces`` interleave with ``slots`` (class, original value): text = p0 + fwd(s0) + p1 + ...
    """

    pieces: tuple[str, ...]
    slots: tuple[tuple[str, str], ...]

    def fill(self, idmap: IdMap | None) -> str:
        if idmap is None:
            vals: list[str | None] = [v for _, v in self.slots]
        else:
            flat = getattr(idmap, "flat", None)  # one dict lookup per slot when the map offers it
            if flat is not None:
                vals = list(map(flat.get, self.slots))
                if None in vals:
                    vals = [v if v is not None else idmap.fwd(*s) for v, s in zip(vals, self.slots, strict=True)]
            else:
                vals = [idmap.fwd(c, v) for c, v in self.slots]
        out: list[str | None] = [None] * (2 * len(vals) + 1)
        out[0::2] = self.pieces
        out[1::2] = vals
        return "".join(out)  # type: ignore[arg-type]


class _Recorder:
    """An IdMap that replaces each id by a numbered sentinel, recording what it replaced."""

    key = "template"

    def __init__(self) -> None:
        self.slots: list[tuple[str, str]] = []

    def fwd(self, cls: str, value: str) -> str:
        self.slots.append((cls, value))
        return f"{_OPEN}{len(self.slots) - 1}{_CLOSE}"

    def inv(self, cls: str, value: str) -> str | None:  # pragma: no cover - not used
        return None


_TEMPLATES: dict[tuple[str, str, str], IdTemplate] = {}


def make_template(entity: Any) -> IdTemplate:
    """A fill-in template of ``entity``: its JSON text with every id leaf cut out."""
    rec = _Recorder()
    text = dumps(translate(entity, rec))
    parts = text.split(_OPEN)
    pieces, order = [parts[0]], []
    for part in parts[1:]:
        num, rest = part.split(_CLOSE, 1)
        order.append(rec.slots[int(num)])
        pieces.append(rest)
    return IdTemplate(tuple(pieces), tuple(order))


def template(world: World, table: str, key: str) -> IdTemplate:
    """The (cached) fill-in template of one shipped entity."""
    slot = (world.domain, table, key)
    tpl = _TEMPLATES.get(slot)
    if tpl is None:
        tpl = make_template(world.tables[table][key])
        _TEMPLATES[slot] = tpl
    return tpl


def canon(obj: Any) -> str:
    """Canonical JSON text (sorted keys, no spaces): equal data gives equal text."""
    try:
        return orjson.dumps(obj, option=orjson.OPT_SORT_KEYS).decode()
    except TypeError:
        return _CANON(obj)


#: A patch edits an entity (already in the state's id space; the second argument renames a
#: shipped id: ``fresh(cls, value)``); branch selection uses it to resample catalog content
#: (``available`` flags) per instance.
Patch = Callable[[dict[str, Any], Callable[[str, str], str]], None]


class State:
    """One episode's mutable view of a world: copy-on-access, optionally re-keyed.

    ``get(table, id)`` returns the live (mutable) entity in this state's id space, or None.
    ``semantics`` selects how the tools behave (:data:`SEMANTICS`); a ``fixed`` state hashes
    apart from a ``tau-bench`` one, so a goal is only ever matched under the semantics it was
    computed with.
    """

    def __init__(
        self,
        world: World,
        idmap: IdMap | None = None,
        patches: dict[tuple[str, str], Patch] | None = None,
        patch_key: str = "",
        semantics: str = DEFAULT_SEMANTICS,
    ) -> None:
        self.world = world
        self.idmap = idmap
        self.patches = patches or {}
        self.semantics = check_semantics(semantics)
        #: True under ``--semantics fixed`` (the tools branch on it).
        self.fixed = semantics == "fixed"
        # The default keeps the key (and so every goal hash) it had before semantics existed.
        self.key = f"{world.domain}|{idmap.key if idmap else 'shipped'}|{patch_key}" + ("|fixed" if self.fixed else "")
        self._live: dict[tuple[str, str], dict[str, Any] | None] = {}
        self._initial: dict[tuple[str, str], str | None] = {}
        self._dirty: set[tuple[str, str]] = set()
        self._diff: list[tuple[str, str, str]] | None = None

    # -- id translation at the tool boundary -------------------------------------------
    def to_orig(self, cls: str, value: str) -> str | None:
        return value if self.idmap is None else self.idmap.inv(cls, value)

    def to_fresh(self, cls: str, value: str) -> str:
        return value if self.idmap is None else self.idmap.fwd(cls, value)

    # -- entity access -----------------------------------------------------------------
    def _load(self, table: str, key: str) -> str | None:
        """The initial JSON text of an entity (filled from its template once), or None."""
        slot = (table, key)
        text = self._initial.get(slot)
        if text is not None or slot in self._initial:
            return text
        orig = self.to_orig(TABLE_CLASS[table], key) if isinstance(key, str) else None
        if orig is None or self.world.tables[table].get(orig) is None:
            return None
        # Fill the entity's precomputed JSON template with this map's fresh ids.
        text = template(self.world, table, orig).fill(self.idmap)
        patch = self.patches.get((table, orig))
        if patch is not None:  # branch selection's catalog edit, applied in the fresh id space
            ent = loads(text)
            patch(ent, self.to_fresh)
            text = dumps(ent)
        self._initial[slot] = text
        return text

    def get(self, table: str, key: str) -> dict[str, Any] | None:
        slot = (table, key)
        if slot in self._live:
            return self._live[slot]
        text = self._load(table, key)
        if text is None:
            return None
        ent = loads(text)
        self._live[slot] = ent
        return ent

    def edit(self, table: str, key: str) -> dict[str, Any] | None:
        """Like :meth:`get`, for a tool about to change the entity (only edited ones are diffed)."""
        ent = self.get(table, key)
        if ent is not None:
            self._dirty.add((table, key))
            self._diff = None
        return ent

    def text(self, table: str, key: str) -> str | None:
        """The entity as compact JSON (the initial text, unparsed, while no tool has edited it)."""
        slot = (table, key)
        if slot in self._dirty:
            ent = self._live.get(slot)
            return dumps(ent) if ent is not None else None
        if slot in self._live:
            return self._initial.get(slot) or dumps(self._live[slot])
        return self._load(table, key)

    def put(self, table: str, key: str, entity: dict[str, Any]) -> None:
        """Insert a new entity (a booking); a key that exists is overwritten."""
        slot = (table, key)
        self._dirty.add(slot)
        self._diff = None
        if slot not in self._initial:
            existing = self.get(table, key)
            if existing is None:
                self._initial[slot] = None
        self._live[slot] = entity

    def exists(self, table: str, key: str) -> bool:
        return (table, key) in self._live or self._load(table, key) is not None

    def keys(self, table: str) -> Iterator[str]:
        """Every key of ``table`` in this state's id space (shipped order, then new ones)."""
        cls = TABLE_CLASS[table]
        seen = set()
        for orig in self.world.tables[table]:
            k = self.to_fresh(cls, orig)
            seen.add(k)
            yield k
        for t, k in list(self._live):
            if t == table and k not in seen and self._live[(t, k)] is not None:
                yield k

    # -- canonical hash ----------------------------------------------------------------
    def diff(self, full: bool = False) -> list[tuple[str, str, str]]:
        """Entities that differ from the initial world: sorted (table, key, canonical JSON).

        Only entities a tool edited are compared; ``full=True`` compares every entity this
        state has touched (the audit uses it to check that tools declare their edits).
        """
        if not full and self._diff is not None:
            return self._diff
        out = []
        for slot in list(self._live if full else self._dirty):
            ent = self._live[slot]
            init = self._initial.get(slot)
            # Dict equality ignores key order, so an entity edited back to its initial content is unchanged.
            if ent is not None and init is not None and ent == loads(init):
                continue
            if ent is None and init is None:
                continue
            out.append((slot[0], slot[1], canon(ent) if ent is not None else "null"))
        out.sort()
        if not full:
            self._diff = out
        return out

    def state_hash(self) -> str:
        """SHA-256 of the canonical final state (initial-world key + changed entities)."""
        h = hashlib.sha256(self.key.encode())
        for table, key, text in self.diff():
            h.update(b"\x00" + table.encode() + b"\x01" + key.encode() + b"\x02" + text.encode())
        return h.hexdigest()

    def materialize(self) -> dict[str, dict[str, dict[str, Any]]]:
        """The whole database of this state as plain data (slow: translates every entity).

        Each entity is parsed afresh from its current JSON text (a deep copy, without touching
        the state: nothing is loaded into it), which is several times faster than deep-copying."""
        return {t: {k: loads(self._live_text(t, k)) for k in self.keys(t)} for t in self.world.tables}

    def _live_text(self, table: str, key: str) -> str:
        """:meth:`text` of a key that :meth:`keys` listed (so the entity exists)."""
        text = self.text(table, key)
        if text is None:  # keys() yields only shipped or live entities
            raise RuntimeError(f"{table} {key} was listed but has no entity")
        return text


# -- τ-bench's own view of a database ------------------------------------------------------
def _tau_text(obj: Any) -> str:
    # Exactly ``json.dumps(obj, sort_keys=True)``: τ-bench's defaults (", " / ": ", ASCII escapes).
    return json.dumps(obj, sort_keys=True)


@cache
def _tau_initial(domain: str) -> dict[str, dict[str, str]]:
    """Each shipped entity as τ-bench-style sorted JSON text, by table (computed once per domain)."""
    world = load_world(domain)
    return {t: {k: _tau_text(row) for k, row in rows.items()} for t, rows in world.tables.items()}


def tau_db_sha256(state: State) -> str:
    """SHA-256 of ``json.dumps(db, sort_keys=True)`` where ``db`` is the whole database of ``state``
    as ``{table: {key: row}}`` -- the hash of a τ-bench episode's final data as computed from
    τ-bench's own tools (``golden_*.jsonl``). On the shipped world only the entities a tool touched
    are re-serialised; a re-keyed or patched world is materialised whole (slow: for checks)."""
    if state.idmap is not None or state.patches:
        return hashlib.sha256(_tau_text(state.materialize()).encode()).hexdigest()
    initial = _tau_initial(state.world.domain)
    parts = []
    for table in sorted(initial):
        texts = dict(initial[table])
        for t, k in state._dirty:
            if t == table:
                ent = state._live.get((t, k))
                if ent is None:
                    texts.pop(k, None)
                else:
                    texts[k] = _tau_text(ent)
        body = ", ".join(f"{_tau_text(k)}: {texts[k]}" for k in sorted(texts))
        parts.append(f"{_tau_text(table)}: {{{body}}}")
    return hashlib.sha256(("{" + ", ".join(parts) + "}").encode()).hexdigest()
