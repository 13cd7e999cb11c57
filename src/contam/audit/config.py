"""What one audit runs: every option in one dataclass, read from the command line or ``audit.toml``.

The config is written back into the run folder (``RUN/audit.toml``) so the run can be repeated
with ``contam audit --config RUN/audit.toml``; its fingerprint (every field that changes a
result) decides whether a rerun in the same folder resumes or is refused.

Credentials written into a model URL (``openai:http://user:key@host/v1#m``) never leave memory:
``model`` and ``ref_model`` hold the spec redacted (``http://***@host``), so ``audit.toml``, the
fingerprint, ``verdict.json`` and the report see only that; :meth:`AuditConfig.spec_to_load`
gives the spec as typed, for the HTTP client alone.

>>> c = AuditConfig(benchmarks=("gsm8k",), model="openai:http://me:sk-1@host:8000/v1#m", out="r")
>>> c.model, "sk-1" in c.to_toml() + repr(c) + c.fingerprint()
('openai:http://***@host:8000/v1#m', False)
>>> c.spec_to_load("model")
'openai:http://me:sk-1@host:8000/v1#m'

>>> c = AuditConfig(benchmarks=("gsm8k",), model="smollm2", out="runs/a1")
>>> AuditConfig.from_toml_text(c.to_toml()) == c
True
"""

from __future__ import annotations

import hashlib
import json
import tomllib
import warnings
from dataclasses import asdict, dataclass, field, fields, replace
from pathlib import Path
from typing import Any, ClassVar

from contam.constraints import Constraints, Each, Interval, NoneOr, Options, validate
from contam.errors import ConfigError, InputError
from contam.textsafe import redact_url

#: Verdict words, weakest first (``--fail-on`` names one of the last two).
FAIL_ON = ("contaminated", "suspect")

#: Fields that do not change any result: they may differ between a run and its resumption.
_NOT_FINGERPRINTED = frozenset({"out", "fail_on", "allow_inconclusive", "title", "api_key_env"})
#: Fields never written to TOML or a record (``given_specs`` may hold credentials).
_NOT_SAVED = frozenset({"variants", "given_specs"})
#: Fields hashed under an older name (a rename must not refuse to resume an earlier run).
_HASHED_AS = {"per_item": "variants"}


@dataclass(frozen=True)
class AuditConfig:
    """Every option of ``contam audit`` (defaults: the probes' own, paper 001/004 settings, with a
    shorter CoT budget so a default audit of the embedded model finishes in minutes).

    ``min_items`` is the least number of items a probe needs before its verdict may say *clean*
    or *contaminated*; below it a verdict is lowered (see :mod:`contam.audit.verdict`).
    """

    benchmarks: tuple[str, ...] = ()
    out: str = ""
    dataset: str | None = None
    model: str | None = None
    ref_model: str | None = None
    control: str | None = None
    reference: str | None = None
    limit: int = 50
    levels: str = "all"
    text_field: str = "text"
    thresholds: str | None = None
    embedder: str = "minilm"
    decontaminate_mode: str = "drop"
    per_item: int = 5
    max_cot_tokens: int = 256
    truncation: tuple[float, ...] = (0.0, 0.25, 0.5, 0.75, 1.0)
    resamples: int = 2000
    probes: tuple[str, ...] = ("zerocot", "cliff", "minkprob")
    min_items: int = 20
    alpha: float = 0.05
    seed: int = 0
    calibration: str | None = None
    fail_on: str | None = None
    allow_inconclusive: bool = False
    title: str = "contam audit"
    #: For ``openai:`` models: the environment variable holding the API key (default
    #: ``OPENAI_API_KEY``). Only the name is stored; it changes no result (not hashed).
    api_key_env: str | None = None
    #: Deprecated Python spelling of ``per_item`` (``variants`` names a variant set everywhere
    #: else): it sets ``per_item`` when that is left at its default; read, it always equals
    #: ``per_item``. Not written to TOML, not compared, not hashed.
    variants: int = field(default=0, compare=False, repr=False)
    #: ``model`` and ``ref_model`` as typed where they hold credentials, by field name: the only
    #: copy of a ``user:key@`` in a URL, read by :meth:`spec_to_load` for the HTTP client. Not
    #: written to TOML, not compared, hashed or shown.
    given_specs: tuple[tuple[str, str], ...] = field(default=(), compare=False, repr=False)

    _constraints: ClassVar[Constraints] = {
        "limit": Interval(int, 0, None),  # 0: every item
        "decontaminate_mode": Options("drop", "mask"),
        "per_item": Interval(int, 1, None),
        "variants": Interval(int, 0, None),  # 0: not given
        "max_cot_tokens": Interval(int, 1, None),
        "truncation": Each(Interval(float, 0, 1)),
        "resamples": Interval(int, 1, None),
        "probes": Each(Options("zerocot", "cliff", "minkprob")),
        "min_items": Interval(int, 0, None),
        "alpha": Interval(float, 0, 1, closed="neither"),
        "seed": Interval(int, 0, None),
        "fail_on": NoneOr(Options(*FAIL_ON)),
    }
    #: The command-line option of each field a user types (``contam audit --help``).
    _flags: ClassVar[dict[str, str]] = {
        "limit": "--limit",
        "per_item": "--per-item",
        "max_cot_tokens": "--max-cot-tokens",
        "probes": "--probes",
        "min_items": "--min-items",
        "seed": "--seed",
        "fail_on": "--fail-on",
    }

    def __post_init__(self) -> None:
        if not self.benchmarks:
            raise ConfigError("give at least one --benchmark (-b gsm8k)")
        if not self.dataset and not self.model:
            raise ConfigError("nothing to audit: give --dataset FILE (data side), --model SPEC (model side), or both")
        if self.ref_model and not self.model:
            raise ConfigError("--ref-model needs --model (the paired verdict compares the two)")
        if self.api_key_env and not any(str(m).startswith("openai:") for m in (self.model, self.ref_model)):
            raise ConfigError("--api-key-env only applies to openai: models (--model openai:BASE_URL#MODEL)")
        self._redact_specs()
        validate(self)
        # The old spelling counts only where per_item was left at its default (so a copy made by
        # dataclasses.replace, whose `variants` is the old per_item, keeps the new per_item).
        if self.variants and self.per_item == _PER_ITEM_DEFAULT:
            object.__setattr__(self, "per_item", self.variants)
        object.__setattr__(self, "variants", self.per_item)

    def _redact_specs(self) -> None:
        """``model`` and ``ref_model`` redacted; the specs as typed kept in ``given_specs`` only."""
        given = dict(self.given_specs)
        for name in ("model", "ref_model"):
            spec = getattr(self, name)
            if spec and (shown := redact_url(spec)) != spec:
                given[name] = spec
                object.__setattr__(self, name, shown)
            elif not spec or redact_url(given.get(name, "")) != spec:  # another spec than the one kept
                given.pop(name, None)
        object.__setattr__(self, "given_specs", tuple(sorted(given.items())))

    def spec_to_load(self, name: str) -> str:
        """The spec of ``name`` (``"model"`` or ``"ref_model"``) as typed, credentials included:
        for loading the model only, never for writing or showing. A redacted spec whose
        credentials are not in memory (read back from ``audit.toml``) is an error saying what to do."""
        shown = str(getattr(self, name) or "")
        full = dict(self.given_specs).get(name, shown)
        if "://***@" in full:
            flag = "--model" if name == "model" else "--ref-model"
            raise ConfigError(
                f"{flag} {shown!r}: the credentials of its URL are not saved (audit.toml holds '***'); give {flag} again "
                "with them, or put the key in an environment variable (--api-key-env NAME)"
            )
        return full

    # ---- identity -------------------------------------------------------------------------
    def fingerprint(self) -> str:
        """A hash of every field that changes a result (not ``out``, the gate, ``title``)."""
        # per_item is hashed under its old name, so runs started before the rename still resume.
        d = {_HASHED_AS.get(k, k): v for k, v in self.to_dict().items() if k not in _NOT_FINGERPRINTED}
        return hashlib.sha256(json.dumps(d, sort_keys=True).encode()).hexdigest()[:16]

    def differences(self, other: AuditConfig) -> list[str]:
        """Names of the fingerprinted fields whose values differ from ``other``'s."""
        a, b = self.to_dict(), other.to_dict()
        return [k for k in a if k not in _NOT_FINGERPRINTED and a[k] != b[k]]

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        return {k: list(v) if isinstance(v, tuple) else v for k, v in d.items() if k not in _NOT_SAVED}

    # ---- TOML -----------------------------------------------------------------------------
    def to_toml(self) -> str:
        """The config as TOML (``None`` fields are left out: TOML has no null)."""
        lines = ["# contam audit configuration: rerun with `contam audit --config THIS_FILE`"]
        for k, v in self.to_dict().items():
            if v is None:
                continue
            lines.append(f"{k} = {_toml_value(v)}")
        return "\n".join(lines) + "\n"

    @classmethod
    def from_toml_text(cls, text: str, path: str = "<toml>", **over: Any) -> AuditConfig:
        """Parse TOML; ``over`` (e.g. command-line options; ``None`` values ignored) wins over the file."""
        try:
            raw = tomllib.loads(text)
        except tomllib.TOMLDecodeError as e:
            raise InputError(f"not valid TOML: {e}", path=path) from None
        return cls.from_mapping(raw, path, **over)

    @classmethod
    def from_file(cls, path: str | Path, **over: Any) -> AuditConfig:
        p = Path(path)
        try:
            text = p.read_text(encoding="utf-8")
        except FileNotFoundError:
            raise ConfigError(f"{p}: config file not found") from None
        except (OSError, UnicodeDecodeError) as e:
            raise InputError(f"cannot read: {e}", path=p) from None
        return cls.from_toml_text(text, str(p), **over)

    @classmethod
    def from_mapping(cls, raw: dict[str, Any], path: str = "<config>", **over: Any) -> AuditConfig:
        """Build from a parsed mapping; unknown keys and wrong types name the file and field."""
        if "benchmark" in raw and "benchmarks" not in raw:  # the singular is what people type
            raw = {**raw, "benchmarks": raw["benchmark"]}
            raw.pop("benchmark")
        if "variants" in raw:
            raw = _variants_key(dict(raw), path)
        unknown = sorted(set(raw) - set(_DEFAULTS))
        if unknown:
            raise InputError(f"unknown key(s) {', '.join(unknown)} (known: {', '.join(_DEFAULTS)})", path=path)
        kw = {k: _coerce(k, v, _DEFAULTS[k], path) for k, v in raw.items()}
        kw.update({k: v for k, v in over.items() if v is not None})
        return cls(**kw)

    def merged(self, **over: Any) -> AuditConfig:
        """A copy with the given fields replaced (``None`` values are ignored)."""
        return replace(self, **{"variants": 0, **{k: v for k, v in over.items() if v is not None}})


def _variants_key(raw: dict[str, Any], path: str) -> dict[str, Any]:
    """``variants`` means a variant set, as ``--variants PATH`` does: a string is the set (the
    ``reference`` field); a number is the old spelling of ``per_item``, read with a warning."""
    v = raw.pop("variants")
    if isinstance(v, str):
        if raw.get("reference") not in (None, v):
            raise InputError("give the variant set once: `variants` or `reference`", path=path, field="variants")
        raw["reference"] = v
        return raw
    if "per_item" in raw and raw["per_item"] != v:
        raise InputError("`variants = N` is the old name of `per_item`; give only `per_item`", path=path, field="variants")
    warnings.warn(
        f"{path}: `variants = {v!r}` is the old name of `per_item = {v!r}` (variants per item); "
        "`variants` now names a variant set, as --variants does",
        FutureWarning,
        stacklevel=3,
    )
    raw["per_item"] = v
    return raw


def _toml_value(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int | float):
        return repr(v)
    if isinstance(v, list):
        return "[" + ", ".join(_toml_value(x) for x in v) + "]"
    return json.dumps(str(v), ensure_ascii=False)  # a JSON string is a valid TOML basic string


def _coerce(name: str, v: Any, default: Any, path: str) -> Any:
    """Check a TOML value against the field's default type (TOML has no tuples or nulls)."""
    if isinstance(default, tuple):
        if isinstance(v, str):
            v = [v]
        if not isinstance(v, list):
            raise InputError(f"expected a list, got {type(v).__name__}", path=path, field=name)
        return tuple(v)
    if isinstance(default, bool):
        if not isinstance(v, bool):
            raise InputError(f"expected true or false, got {v!r}", path=path, field=name)
        return v
    if isinstance(default, int):
        if not isinstance(v, int) or isinstance(v, bool):
            raise InputError(f"expected an integer, got {v!r}", path=path, field=name)
        return v
    if isinstance(default, float):
        if not isinstance(v, int | float) or isinstance(v, bool):
            raise InputError(f"expected a number, got {v!r}", path=path, field=name)
        return float(v)
    if not isinstance(v, str):
        raise InputError(f"expected a string, got {v!r}", path=path, field=name)
    return v


#: Field -> default, with ``""`` for the optional strings (what a TOML value is checked against).
_DEFAULTS: dict[str, Any] = {f.name: "" if f.default is None else f.default for f in fields(AuditConfig) if f.name not in _NOT_SAVED}
_PER_ITEM_DEFAULT = _DEFAULTS["per_item"]
