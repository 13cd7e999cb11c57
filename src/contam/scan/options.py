"""The settings of one scan in one record, :class:`ScanOptions`, built once (by the command line,
the audit or a caller) and passed whole to :func:`~contam.scan.job.run_scan`,
:func:`~contam.scan.records.scan_records`, :func:`~contam.scan.shards.run_sharded` and the Ray
engine, which each read the fields they use.

The record holds the settings as given; :meth:`ScanOptions.resolved` is what runs (the levels
checked and ``all`` expanded, the token level's threshold taken from ``thresholds``). What a run
writes down about its settings has one method each, in the shape run folders of earlier versions
hold, so they still resume and merge: :meth:`~ScanOptions.run_key` (a checkpoint's key),
:meth:`~ScanOptions.manifest_settings` (a one-file scan's manifest) and
:meth:`~ScanOptions.shard_settings` (a sharded run's manifest and shard fingerprint).

>>> opts = ScanOptions(levels=("all",), keep_all=True)
>>> opts.resolved().levels, opts.manifest_settings()["levels"]
(('token', 'semantic', 'reasoning'), ['all'])
>>> ScanOptions(engine="spark")
Traceback (most recent call last):
...
contam.errors.ConfigError: --engine 'spark': choose local or ray
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from contam.constraints import Constraints, Interval, NoneOr, Options, validate
from contam.errors import ConfigError
from contam.scan.flags import LEVELS
from contam.scan.ngram import NGramConfig
from contam.scan.windows import MAX_WINDOWS

if TYPE_CHECKING:  # the cascade's module loads the embedders' code: imported where thresholds are read
    from contam.scan.hierarchy import Thresholds

__all__ = ["CLEAN_MODES", "ENGINES", "ON_BAD_SHARD", "ScanOptions", "check_levels", "load_thresholds", "parse_levels"]

#: Who scans the shards: processes on this machine, or Ray Data.
ENGINES = ("local", "ray")
#: What a sharded run does with a corrupt or bad shard: stop (exit 2), or name it and go on.
ON_BAD_SHARD = ("fail", "skip")
#: The decontaminated copy a sharded run may write of each shard.
CLEAN_MODES = ("drop", "mask")


@dataclass(frozen=True)
class ScanOptions:
    """Every setting of a scan (``contam scan``'s options but the corpus, the benchmarks, the
    output folder and the task's shard selection).

    What is scanned for: ``config`` (the token level's n-grams, :class:`NGramConfig`),
    ``levels`` (``token``, ``semantic``, ``reasoning`` or ``all``), ``thresholds`` (a
    :class:`~contam.scan.hierarchy.Thresholds`, e.g. from :func:`load_thresholds`; its ``token``
    replaces ``config.threshold``), ``embedder`` (the semantic level's embedder spec) and
    ``semantic_windows`` (windows of a long document the semantic level reads,
    :mod:`contam.scan.windows`; 1: its first 512 characters only).
    What is read and written: ``text_field``, ``id_field`` (default ``id``, else the line
    number), ``skip_bad`` (count and skip bad lines instead of stopping), ``keep_all`` (write
    every document's result, not only flagged ones). How it runs: ``workers`` (0: every core),
    ``engine`` and ``ray_address`` (sharded runs). A sharded run's ``on_bad_shard`` (``fail`` or
    ``skip``), and its decontaminated copy of each shard: ``clean`` (``drop``, ``mask`` or none)
    with ``mask`` replacing masked spans.

    >>> ScanOptions(config=NGramConfig.llama2(), workers=2).config.n
    8
    """

    config: NGramConfig = field(default_factory=NGramConfig)
    text_field: str = "text"
    id_field: str | None = None
    skip_bad: bool = False
    keep_all: bool = False
    levels: tuple[str, ...] = ("token",)
    workers: int = 0
    thresholds: Thresholds | None = None
    embedder: str = "minilm"
    semantic_windows: int = MAX_WINDOWS
    on_bad_shard: str = "fail"
    clean: str | None = None
    mask: str = "[CONTAMINATED]"
    engine: str = "local"
    ray_address: str = "auto"

    _constraints: ClassVar[Constraints] = {
        "workers": Interval(int, 0, None),  # 0: every core (small corpora run in-process)
        "semantic_windows": Interval(int, 1, None),
        "on_bad_shard": Options(*ON_BAD_SHARD),
        "engine": Options(*ENGINES),
        "clean": NoneOr(Options(*CLEAN_MODES)),
    }
    _flags: ClassVar[dict[str, str]] = {"workers": "--workers", "semantic_windows": "--semantic-windows"}
    #: The words these checks have always used on the command line.
    _messages: ClassVar[dict[str, str]] = {
        "on_bad_shard": "--on-bad-shard {value!r}: choose fail or skip",
        "engine": "--engine {value!r}: choose local or ray",
        "clean": "unknown mode {value!r}: choose drop or mask",
    }

    def __post_init__(self) -> None:
        if isinstance(self.levels, list):  # a list from a caller: a tuple like the default
            object.__setattr__(self, "levels", tuple(self.levels))
        validate(self)
        check_levels(self.levels)

    @classmethod
    def build(cls, options: ScanOptions | None = None, **settings: Any) -> ScanOptions:
        """``options`` with ``settings`` (any of its fields by name) replaced, or new options from
        ``settings``: how the functions that take a record also take its fields as keywords.
        ``config=None`` is the default config.

        >>> ScanOptions.build(ScanOptions(workers=2), keep_all=True).workers
        2
        """
        if "config" in settings and settings["config"] is None:
            del settings["config"]
        if options is None:
            return cls(**settings)
        return replace(options, **settings) if settings else options

    def resolved(self) -> ScanOptions:
        """What runs: the levels checked, deduplicated and ``all`` expanded, and with
        ``thresholds`` their ``token`` as the n-gram threshold (clamped to (0, 1])."""
        config = self.config
        if self.thresholds is not None:
            config = replace(config, threshold=max(min(float(self.thresholds.token), 1.0), 1e-6))
        return replace(self, config=config, levels=check_levels(self.levels))

    @property
    def token_only(self) -> bool:
        """Whether only the token level runs (the one that checkpoints, and needs no embedder)."""
        return check_levels(self.levels) == ("token",)

    def _thresholds_dict(self) -> dict[str, Any] | None:
        return self.thresholds.to_dict() if self.thresholds is not None else None

    def run_key(self) -> dict[str, Any]:
        """The settings in a checkpoint's key (``.scan-state.json``, see :func:`~contam.scan.job.run_scan`):
        a checkpoint resumes only under the same ones. Not ``workers``: how many cores ran it
        changes no result."""
        o = self.resolved()
        rest = [o.text_field, o.id_field, o.skip_bad, o.keep_all, o._thresholds_dict(), o.embedder if not o.token_only else None]
        return {"config": json.loads(json.dumps(asdict(o.config))), "levels": list(o.levels), "options": json.loads(json.dumps(rest))}

    def manifest_settings(self) -> dict[str, Any]:
        """The ``settings`` a one-file scan's ``manifest.json`` records: these options as given."""
        return {
            "config": asdict(self.config), "text_field": self.text_field, "id_field": self.id_field, "skip_bad": self.skip_bad,
            "keep_all": self.keep_all, "levels": list(self.levels), "thresholds": self._thresholds_dict(), "embedder": self.embedder,
        }  # fmt: skip

    def shard_settings(self) -> dict[str, Any]:
        """The ``settings`` a sharded run's ``manifest.json`` records, and (less ``thresholds``)
        what its shards' fingerprint hashes: the resolved options that change an output shard."""
        o = self.resolved()
        return {
            "config": asdict(o.config), "text_field": o.text_field, "id_field": o.id_field, "skip_bad": o.skip_bad,
            "keep_all": o.keep_all, "levels": list(o.levels), "embedder": o.embedder, "on_bad_shard": o.on_bad_shard,
            "clean": o.clean, "mask": o.mask, "thresholds": o._thresholds_dict(),
        }  # fmt: skip


def check_levels(levels: Sequence[str]) -> tuple[str, ...]:
    """The levels to run: ``all`` expanded, duplicates dropped; an unknown one is a ConfigError.

    >>> check_levels(("semantic", "token", "semantic"))
    ('semantic', 'token')
    """
    wanted = tuple(LEVELS) if "all" in levels else tuple(dict.fromkeys(levels))
    bad = [lv for lv in wanted if lv not in LEVELS]
    if bad or not wanted:
        raise ConfigError(f"unknown level(s) {bad}: choose from {', '.join(LEVELS)} or all")
    return wanted


def parse_levels(text: str) -> tuple[str, ...]:
    """``--levels`` as typed, comma-separated.

    >>> parse_levels("token, semantic")
    ('token', 'semantic')
    """
    return tuple(x.strip() for x in text.split(",") if x.strip())


def load_thresholds(path: str | os.PathLike[str] | None, benchmarks: Sequence[str], token: float | None = None) -> Thresholds | None:
    """The calibrated thresholds in ``path`` (the ``thresholds.json`` of ``contam eval-detectors``)
    for the one benchmark scanned; ``token`` (``--threshold``) still wins for the token level.
    No ``path``: None (each level's default)."""
    if not path:
        return None
    from contam.scan.hierarchy import Thresholds

    names = [Path(b).stem if Path(b).suffix else b for b in benchmarks]
    t = Thresholds.load(Path(path), names[0] if len(names) == 1 else None)
    return replace(t, token=token) if token is not None else t
