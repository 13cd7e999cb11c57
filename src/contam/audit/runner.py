"""Plan and run the steps of one audit, resumably, behind one progress display with an ETA.

Every step is a call into the library (:mod:`contam.audit.steps`: the scan, the decontaminated
copy, the variant set, each probe) writing into its own folder of the run, exactly what the
matching ``contam`` command would write there; each checkpoints its items, so a killed audit
started again in the same folder redoes only unfinished items. ``RUN/audit.json`` records the
config's fingerprint and the steps finished; a rerun with another config is refused unless
``--fresh``. A step's failure propagates as the library raised it (a :class:`ContamError`
subclass for anything a user can fix); what each step logged is in ``RUN/logs/STEP.log``.

Layout of a run folder::

    RUN/audit.toml            the config (rerun: contam audit --config RUN/audit.toml)
    RUN/audit.json            fingerprint, finished steps, seconds per step
    RUN/logs/STEP.log         what each step logged (``logging``, logger ``contam``)
    RUN/data/scan/            scan of the dataset, every level, every document (flags.jsonl)
    RUN/data/decontaminated.jsonl (+ .log.jsonl)
                              (a sharded dataset: RUN/data/scan/shards/*/clean.jsonl, each shard's)
    RUN/BENCH/reference/      the variant set (contam perturb), unless --reference was given
    RUN/BENCH/{zerocot,cliff,minkprob,paired}/   per-item records + summary.json
    RUN/verdict.json, report.html, summary.md, figures/
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import re
import shutil
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

from contam.audit import steps as do
from contam.audit.config import AuditConfig
from contam.errors import ConfigError, ContamError, InputError
from contam.interrupt import keeping
from contam.outputs import atomic_write, ensure_dir, write_json

STATE = "audit.json"
CONFIG = "audit.toml"


def slug(name: str) -> str:
    """A folder name for a benchmark spec (built-in name, file path or hf:NAME)."""
    base = Path(name).stem if ("/" in name or name.endswith((".jsonl", ".json", ".csv", ".gz"))) else name
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", base).strip("._") or "benchmark"


@dataclass
class Step:
    """One unit of work: ``fn(on_item)``, a library call writing into ``folder`` that calls
    ``on_item`` with each finished item's record."""

    name: str
    title: str
    folder: Path
    units: float
    fn: Callable[[Callable[[dict[str, Any]], None] | None], object]
    watch: Path | None = None  # the JSONL file of finished items (a resumed step's bar starts at its lines)
    per_line: float = 1.0  # units each finished item stands for
    benchmark: str = ""


@dataclass
class RunState:
    fingerprint: str
    done: dict[str, float] = field(default_factory=dict)  # step -> seconds it took
    started: float = field(default_factory=time.time)
    inputs: dict[str, list[int]] = field(default_factory=dict)  # input file -> [size, mtime_ns]

    @classmethod
    def load(cls, path: Path) -> RunState | None:
        if not path.exists():
            return None
        try:
            d = json.loads(path.read_text(encoding="utf-8"))
            return cls(d["fingerprint"], dict(d.get("done", {})), float(d.get("started", time.time())), dict(d.get("inputs", {})))
        except (OSError, ValueError, KeyError, TypeError):
            raise InputError("not a readable audit state; start over with --fresh", path=path) from None

    def save(self, path: Path) -> None:
        write_json(path, {"fingerprint": self.fingerprint, "done": self.done, "started": self.started, "inputs": self.inputs})


def run_folder(cfg: AuditConfig) -> Path:
    """``cfg.out``, checked: given, and a folder if it exists."""
    out = Path(cfg.out)
    if not cfg.out:
        raise ConfigError('give --out RUN_FOLDER (or out = "..." in the config file)')
    if out.exists() and not out.is_dir():
        raise ConfigError(f"{out}: exists and is not a folder")
    return out


def holds_another_audit(cfg: AuditConfig) -> bool:
    """Whether ``cfg.out`` holds an audit of another configuration, of inputs changed since, or a
    state that cannot be read (what :func:`prepare_run_folder` refuses without ``fresh``)."""
    state_path = run_folder(cfg) / STATE
    if not state_path.is_file():
        return False
    try:
        state = RunState.load(state_path)
    except ContamError:
        return True
    return state is not None and _stale(state, cfg)


def _stale(state: RunState, cfg: AuditConfig) -> bool:
    """Whether ``state`` was started with another configuration or on inputs changed since."""
    return state.fingerprint != cfg.fingerprint() or state.inputs != input_identity(cfg)


def prepare_run_folder(cfg: AuditConfig, fresh: bool) -> tuple[Path, RunState]:
    """Create or reopen ``cfg.out``: resume with the same config, refuse another one unless ``fresh``.

    A folder where no step finished (an audit that failed on its first step, or was stopped in
    it) holds nothing worth keeping: another config starts it afresh instead of being refused.
    """
    out = run_folder(cfg)
    state_path = out / STATE
    state = RunState.load(state_path) if not fresh else None
    if state is not None and not state.done and _stale(state, cfg):
        fresh, state = True, None
    if state is not None and state.fingerprint != cfg.fingerprint():
        what = ""
        with contextlib.suppress(ContamError):
            old = AuditConfig.from_file(out / CONFIG)
            what = " (changed: " + ", ".join(cfg.differences(old)) + ")"
        raise ConfigError(f"{out} holds an audit with another configuration{what}; use another --out, or --fresh to start over")
    now = input_identity(cfg)
    if state is not None:
        changed = [p for p, ident in state.inputs.items() if now.get(p) != ident]
        if changed:
            raise ConfigError(f"{out}: input(s) changed since this audit started: {', '.join(changed)}; use --fresh to audit them anew")
    if fresh and out.exists():
        _remove_audit_outputs(out)
    ensure_dir(out)
    if state is None:
        state = RunState(cfg.fingerprint(), inputs=now)
    with atomic_write(out / CONFIG) as fh:
        fh.write(cfg.to_toml())
    state.save(state_path)
    return out, state


def input_identity(cfg: AuditConfig) -> dict[str, list[int]]:
    """Size and modification time of every input that is a local file or folder: a resumed run
    must audit the same data it started on."""
    out: dict[str, list[int]] = {}
    for spec in (cfg.dataset, cfg.reference, cfg.control, cfg.thresholds, *cfg.benchmarks):
        if not spec:
            continue
        p = Path(spec)
        with contextlib.suppress(OSError):
            if p.is_file():
                st = p.stat()
                out[str(p)] = [st.st_size, st.st_mtime_ns]
    return out


#: What an audit writes at the top of its run folder (``--fresh`` removes these and the benchmark folders only).
_OUTPUTS = (STATE, CONFIG, "logs", "data", "figures", "verdict.json", "report.html", "report.md", "summary.md")
_PROBE_DIRS = ("reference", "zerocot", "cliff", "minkprob", "paired")


def _remove_audit_outputs(out: Path) -> None:
    """Delete what an earlier audit wrote in ``out``; a wrong --out never wipes unrelated files."""
    for p in out.iterdir():
        ours = p.name in _OUTPUTS or (p.is_dir() and any((p / d).is_dir() for d in _PROBE_DIRS))
        if not ours:
            continue
        if p.is_dir():
            shutil.rmtree(p)
        else:
            p.unlink()


def _n_items(spec: str, limit: int) -> int:
    from contam.data import load_benchmark

    n = len(load_benchmark(spec))
    return min(n, limit) if limit > 0 else n


def _count_lines(path: Path) -> int:
    try:
        with open(path, "rb") as fh:
            return sum(buf.count(b"\n") for buf in iter(lambda: fh.read(1 << 20), b""))
    except OSError:
        return 0


def plan(cfg: AuditConfig, out: Path) -> list[Step]:
    """Every step of the audit, in order (data side first: it is quick and needs no model)."""
    from contam.scan.shard_inputs import is_sharded

    steps: list[Step] = []
    n_by_bench = {b: _n_items(b, cfg.limit) for b in cfg.benchmarks}  # also validates every benchmark up front
    if cfg.dataset:
        ds = Path(cfg.dataset)
        if not str(ds).startswith("hf:") and not ds.exists():
            raise InputError("dataset not found", path=ds)
        if ds.is_file() and ds.stat().st_size == 0:
            raise InputError("the dataset is empty: no records to scan", path=ds)
        docs = _count_lines(ds) if ds.is_file() and ds.suffix in (".jsonl", ".txt") else 1000
        scan_dir = out / "data" / "scan"
        units = max(1.0, docs * 0.5 * len(cfg.levels.split(",")) if cfg.levels != "all" else docs * 1.5)
        sharded = is_sharded([str(cfg.dataset)])  # a folder of files: each shard's decontaminated copy is the scan's
        title = "data side: scan cascade, every level" + (", and each shard's decontaminated copy" if sharded else "")
        steps.append(Step("scan", title, scan_dir, units, partial(do.scan_dataset, cfg, scan_dir)))
        clean = out / "data" / ("decontaminated" + (".jsonl.gz" if ds.name.endswith(".gz") else ".jsonl"))
        if not sharded:
            steps.append(
                Step(
                    "decontaminate",
                    "data side: decontaminated copy",
                    clean.parent,
                    max(1.0, docs * 0.05),
                    partial(do.decontaminate_dataset, cfg, scan_dir, clean),
                )
            )
    if not cfg.model:
        return steps
    for name in ("model", "ref_model"):
        if getattr(cfg, name):
            cfg.spec_to_load(name)  # credentials not in memory: said before anything runs
    if cfg.api_key_env and cfg.api_key_env not in os.environ:
        raise ConfigError(f"environment variable {cfg.api_key_env} (named by --api-key-env) is not set")
    for b in cfg.benchmarks:
        n = n_by_bench[b]
        bdir = out / slug(b)
        ref = cfg.reference
        if ref is None:
            ref_dir = bdir / "reference"
            steps.append(
                Step(
                    f"{slug(b)}/perturb",
                    f"{b}: variant set ({cfg.per_item} per item)",
                    ref_dir,
                    max(1.0, n * 0.2),
                    partial(do.variant_set, cfg, b, n, ref_dir),
                    watch=ref_dir / "variants.jsonl",
                    per_line=0.2,
                    benchmark=b,
                )
            )
            ref = str(ref_dir)
        # name, title, progress units per finished record, records per item, step
        probes = (
            ("zerocot", "Zero-CoT Probe", 2.0 * (2 + len(cfg.truncation)), 1, do.zerocot),
            ("cliff", f"performance cliff (K={cfg.per_item})", 2.0 * (cfg.per_item + 1), 1, do.cliff),
            ("minkprob", "Min-K% family vs control", 0.25, 2, do.minkprob),  # a benchmark and a control record
        )
        for name, what, per, records, fn in probes:
            if name in cfg.probes:
                d = bdir / name
                steps.append(
                    Step(
                        f"{slug(b)}/{name}", f"{b}: {what}", d, n * per * records, partial(fn, cfg, b, n, ref, d), d / "items.jsonl", per, b
                    )
                )
        if cfg.ref_model:
            d = bdir / "paired"
            steps.append(
                Step(
                    f"{slug(b)}/paired",
                    f"{b}: paired verdict vs reference model",
                    d,
                    n * 1.0,
                    partial(do.paired, cfg, b, n, ref, d),
                    watch=d / "items.jsonl",
                    per_line=1.0,
                    benchmark=b,
                )
            )
    return steps


@contextlib.contextmanager
def _step_log(path: Path) -> Iterator[logging.Logger]:
    """What the library logs during a step (logger ``contam``, INFO and up) goes to ``path``; the
    steps' own progress bars are off: the audit shows one bar over the whole run."""
    ensure_dir(path.parent)
    logger = logging.getLogger("contam")
    handler = logging.FileHandler(path, encoding="utf-8")
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    saved_level, saved_env = logger.level, os.environ.get("CONTAM_PROGRESS")
    logger.addHandler(handler)
    if logger.getEffectiveLevel() > logging.INFO:
        logger.setLevel(logging.INFO)
    os.environ["CONTAM_PROGRESS"] = "0"
    try:
        yield logger
    finally:
        logger.removeHandler(handler)
        handler.close()
        logger.setLevel(saved_level)
        if saved_env is None:
            os.environ.pop("CONTAM_PROGRESS", None)
        else:
            os.environ["CONTAM_PROGRESS"] = saved_env


def _progress() -> Any:
    """The project's progress display (bars on a terminal, plain lines every ~30 s off one) with
    a percentage and an ETA, on a console of its own (the steps' consoles are redirected)."""
    from rich.console import Console
    from rich.progress import BarColumn, SpinnerColumn, TextColumn, TimeElapsedColumn, TimeRemainingColumn

    from contam.progress import make_progress

    return make_progress(
        SpinnerColumn(),
        TextColumn("[progress.description]{task.description}"),
        BarColumn(),
        TextColumn("{task.percentage:>3.0f}%"),
        TimeElapsedColumn(),
        TextColumn("ETA"),
        TimeRemainingColumn(),
        console=Console(stderr=True),
    )


def run_steps(steps: list[Step], out: Path, state: RunState, say: Callable[[str], None]) -> dict[str, float]:
    """Run every step not finished before; one progress bar over all of them with an ETA.

    A step's error propagates as raised (after a line in its log naming the step)."""
    from contam.progress import progress_enabled

    total = sum(s.units for s in steps)
    done_units = sum(s.units for s in steps if s.name in state.done)
    live = progress_enabled()
    kept = lambda: f"{len(state.done)} of {len(steps)} audit steps finished in {out}/"  # noqa: E731
    with _progress() as prog, keeping(kept):
        task = prog.add_task("audit", total=total, completed=done_units, unit="%")
        for i, s in enumerate(steps, 1):
            if s.name in state.done:
                continue
            prog.update(task, description=f"[{i}/{len(steps)}] {s.title}")
            if not live:
                say(f"[{i}/{len(steps)}] {s.title} ...")
            finished = [_count_lines(s.watch) if s.watch is not None else 0]  # a resumed step's records count too

            def on_item(_record: Any, step: Step = s, base: float = done_units, finished: list[int] = finished) -> None:
                finished[0] += 1
                prog.update(task, completed=base + min(step.units, finished[0] * step.per_line))

            log = out / "logs" / (s.name.replace("/", "__") + ".log")
            t0 = time.perf_counter()
            with _step_log(log) as logger:
                logger.info("step %s: %s", s.name, s.title)
                try:
                    result = s.fn(on_item)
                except (ContamError, OSError) as e:
                    logger.error("step %s failed: %s", s.name, e)
                    say(f"[{i}/{len(steps)}] {s.title}: failed (log: {log})")
                    raise
                secs = time.perf_counter() - t0
                logger.info("step %s: done in %.1f s", s.name, secs)
            state.done[s.name] = round(secs, 2)
            state.save(out / STATE)
            done_units += s.units
            prog.update(task, completed=done_units)
            skipped = result.get("skipped") if isinstance(result, dict) else None
            if skipped:  # a probe the model cannot run (contam.audit.skips): said even with a live bar
                say(f"[{i}/{len(steps)}] {s.title}: skipped: {skipped}")
            elif not live:
                say(f"[{i}/{len(steps)}] {s.title}: done in {secs:.1f} s")
    return dict(state.done)
