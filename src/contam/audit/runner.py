"""Plan and run the steps of one audit, resumably, behind one progress display with an ETA.

Every step is one of contam's own commands (the same argv a user would type) writing into its
own folder of the run; each of those commands checkpoints its items, so a killed audit started
again in the same folder redoes only unfinished items. ``RUN/audit.json`` records the config's
fingerprint and the steps finished; a rerun with another config is refused unless ``--fresh``.

Layout of a run folder::

    RUN/audit.toml            the config (rerun: contam audit --config RUN/audit.toml)
    RUN/audit.json            fingerprint, finished steps, seconds per step
    RUN/logs/STEP.log         what each step printed
    RUN/data/scan/            scan of the dataset, every level, every document (flags.jsonl)
    RUN/data/decontaminated.jsonl (+ .log.jsonl)
    RUN/BENCH/reference/      the variant set (contam perturb), unless --reference was given
    RUN/BENCH/{zerocot,cliff,minkprob,paired}/   per-item records + summary.json
    RUN/verdict.json, report.html, summary.md, figures/
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from contam.audit.config import AuditConfig
from contam.errors import ConfigError, ContamError, InputError
from contam.outputs import atomic_write, ensure_dir, write_json

STATE = "audit.json"
CONFIG = "audit.toml"


def slug(name: str) -> str:
    """A folder name for a benchmark spec (built-in name, file path or hf:NAME)."""
    base = Path(name).stem if ("/" in name or name.endswith((".jsonl", ".json", ".csv", ".gz"))) else name
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", base).strip("._") or "benchmark"


@dataclass
class Step:
    """One unit of work: a contam command (``argv``) or an in-process function (``fn``)."""

    name: str
    title: str
    folder: Path
    units: float
    argv: list[str] | None = None
    fn: Callable[[], None] | None = None
    watch: Path | None = None  # a JSONL file whose lines are finished items (for the progress bar)
    per_line: float = 1.0  # units each line of ``watch`` stands for
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


def prepare_run_folder(cfg: AuditConfig, fresh: bool) -> tuple[Path, RunState]:
    """Create or reopen ``cfg.out``: resume with the same config, refuse another one unless ``fresh``.

    A folder where no step finished (an audit that failed on its first step, or was stopped in
    it) holds nothing worth keeping: another config starts it afresh instead of being refused.
    """
    out = run_folder(cfg)
    state_path = out / STATE
    state = RunState.load(state_path) if not fresh else None
    if state is not None and not state.done and (state.fingerprint != cfg.fingerprint() or state.inputs != input_identity(cfg)):
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
        argv = [
            "scan",
            *[a for b in cfg.benchmarks for a in ("-b", b)],
            "--corpus",
            str(ds),
            "--out",
            str(scan_dir),
            "--levels",
            cfg.levels,
            "--all",
            "--text-field",
            cfg.text_field,
            "--embedder",
            cfg.embedder,
        ]
        if cfg.thresholds:
            argv += ["--thresholds", cfg.thresholds]
        steps.append(
            Step(
                "scan",
                "data side: scan cascade, every level",
                scan_dir,
                units=max(1.0, docs * 0.5 * len(cfg.levels.split(",")) if cfg.levels != "all" else docs * 1.5),
                argv=argv,
            )
        )
        clean = out / "data" / ("decontaminated" + (".jsonl.gz" if ds.name.endswith(".gz") else ".jsonl"))
        steps.append(
            Step(
                "decontaminate",
                "data side: decontaminated copy",
                clean.parent,
                units=max(1.0, docs * 0.05),
                argv=[
                    "decontaminate",
                    "--corpus",
                    str(ds),
                    "--scan",
                    str(scan_dir),
                    "--out",
                    str(clean),
                    "--mode",
                    cfg.decontaminate_mode,
                    "--text-field",
                    cfg.text_field,
                ],
            )
        )
    if not cfg.model:
        return steps
    for b in cfg.benchmarks:
        n = n_by_bench[b]
        bdir = out / slug(b)
        lim = ["-n", str(n)]
        ref = cfg.reference
        if ref is None:
            ref_dir = bdir / "reference"
            steps.append(
                Step(
                    f"{slug(b)}/perturb",
                    f"{b}: variant set ({cfg.variants} per item)",
                    ref_dir,
                    units=max(1.0, n * 0.2),
                    argv=[
                        "perturb",
                        "-b",
                        b,
                        "--variants",
                        str(cfg.variants),
                        "--seed",
                        str(cfg.seed),
                        "--limit",
                        str(n),
                        "--out",
                        str(ref_dir),
                    ],
                    watch=ref_dir / "variants.jsonl",
                    per_line=0.2,
                    benchmark=b,
                )
            )
            ref = str(ref_dir)
        common = ["-m", cfg.model, "-b", b, *lim, "--seed", str(cfg.seed)]
        trunc = ",".join(f"{x:g}" for x in cfg.truncation)
        if "zerocot" in cfg.probes:
            d = bdir / "zerocot"
            per = 2.0 * (2 + len(cfg.truncation))
            steps.append(
                Step(
                    f"{slug(b)}/zerocot",
                    f"{b}: Zero-CoT Probe",
                    d,
                    units=n * per,
                    per_line=per,
                    watch=d / "items.jsonl",
                    benchmark=b,
                    argv=[
                        "probe",
                        "zerocot",
                        *common,
                        "--variants",
                        ref,
                        "--max-cot-tokens",
                        str(cfg.max_cot_tokens),
                        "--truncation",
                        trunc,
                        "--resamples",
                        str(cfg.resamples),
                        "--out",
                        str(d),
                    ],
                )
            )
        if "cliff" in cfg.probes:
            d = bdir / "cliff"
            per = 2.0 * (cfg.variants + 1)
            steps.append(
                Step(
                    f"{slug(b)}/cliff",
                    f"{b}: performance cliff (K={cfg.variants})",
                    d,
                    units=n * per,
                    per_line=per,
                    watch=d / "items.jsonl",
                    benchmark=b,
                    argv=[
                        "probe",
                        "cliff",
                        *common,
                        "--variants",
                        ref,
                        "--k",
                        str(cfg.variants),
                        "--max-new-tokens",
                        str(cfg.max_cot_tokens),
                        "--alpha",
                        str(cfg.alpha),
                        "--out",
                        str(d),
                    ],
                )
            )
        if "minkprob" in cfg.probes:
            d = bdir / "minkprob"
            argv = ["probe", "minkprob", *common, "--control", cfg.control or ref, "--out", str(d)]
            if cfg.ref_model:
                argv += ["--ref-model", cfg.ref_model]
            steps.append(
                Step(
                    f"{slug(b)}/minkprob",
                    f"{b}: Min-K% family vs control",
                    d,
                    units=n * 0.5,
                    per_line=0.25,
                    watch=d / "items.jsonl",
                    benchmark=b,
                    argv=argv,
                )
            )
        if cfg.ref_model:
            from contam.audit.paired import run_paired

            d = bdir / "paired"
            steps.append(
                Step(
                    f"{slug(b)}/paired",
                    f"{b}: paired verdict vs reference model",
                    d,
                    units=n * 1.0,
                    per_line=1.0,
                    watch=d / "items.jsonl",
                    benchmark=b,
                    fn=_bind(run_paired, cfg.model, cfg.ref_model, b, ref, n, d, cfg.alpha),
                )
            )
    return steps


def _bind(fn: Callable[..., Any], *args: Any) -> Callable[[], None]:
    def call() -> None:
        fn(*args)

    return call


@contextlib.contextmanager
def _captured(log: Path) -> Iterator[None]:
    """Send what the commands print (tables, warnings) to ``log`` and turn their own bars off:
    the audit shows one bar over the whole run."""
    from contam.cli import common

    ensure_dir(log.parent)
    # The private ``_file`` (None = "whatever sys.stdout/stderr is at print time"): the public
    # property would pin the stream of the moment and break later redirections (pytest, pipes).
    saved = (common.console._file, common.err_console._file, os.environ.get("CONTAM_PROGRESS"))
    with open(log, "a", encoding="utf-8") as fh:
        common.console.file = fh
        common.err_console.file = fh
        os.environ["CONTAM_PROGRESS"] = "0"
        try:
            yield
        finally:
            common.console._file, common.err_console._file = saved[:2]
            if saved[2] is None:
                os.environ.pop("CONTAM_PROGRESS", None)
            else:
                os.environ["CONTAM_PROGRESS"] = saved[2]


def _progress(enabled: bool) -> Any:
    """The project's bar columns on a console of its own (the steps' consoles are redirected)."""
    from rich.console import Console
    from rich.progress import BarColumn, Progress, SpinnerColumn, TextColumn, TimeElapsedColumn, TimeRemainingColumn

    return Progress(
        SpinnerColumn(),
        TextColumn("[progress.description]{task.description}"),
        BarColumn(),
        TextColumn("{task.percentage:>3.0f}%"),
        TimeElapsedColumn(),
        TextColumn("ETA"),
        TimeRemainingColumn(),
        console=Console(stderr=True),
        disable=not enabled,
    )


def _last_error(log: Path) -> str:
    try:
        lines = [ln.strip() for ln in log.read_text(encoding="utf-8").splitlines() if ln.strip()]
    except OSError:
        return ""
    err = [ln for ln in lines if ln.startswith("error:")]
    return (err[-1] if err else lines[-1] if lines else "")[:400]


def run_steps(steps: list[Step], out: Path, state: RunState, say: Callable[[str], None]) -> dict[str, float]:
    """Run every step not finished before; one progress bar over all of them with an ETA."""
    from contam.cli.main import main
    from contam.progress import progress_enabled

    total = sum(s.units for s in steps)
    done_units = sum(s.units for s in steps if s.name in state.done)
    live = progress_enabled()
    with _progress(live) as prog:
        task = prog.add_task("audit", total=total, completed=done_units)
        for i, s in enumerate(steps, 1):
            if s.name in state.done:
                continue
            prog.update(task, description=f"[{i}/{len(steps)}] {s.title}")
            if not live:
                say(f"[{i}/{len(steps)}] {s.title} ...")
            stop = threading.Event()
            base = done_units

            def poll(step: Step = s, base: float = base, stop: threading.Event = stop) -> None:
                while not stop.wait(0.5):
                    if step.watch is not None:
                        prog.update(task, completed=base + min(step.units, _count_lines(step.watch) * step.per_line))

            th = threading.Thread(target=poll, daemon=True)
            th.start()
            t0 = time.perf_counter()
            log = out / "logs" / (s.name.replace("/", "__") + ".log")
            try:
                with _captured(log):
                    if s.fn is not None:
                        s.fn()
                        rc = 0
                    else:
                        rc = main(list(s.argv or []))
            finally:
                stop.set()
                th.join()
            if rc == 130:
                raise KeyboardInterrupt
            if rc != 0:
                msg = _last_error(log)
                raise ContamError(f"step {s.name} failed (exit {rc}): {msg.removeprefix('error: ')} (log: {log})")
            secs = time.perf_counter() - t0
            state.done[s.name] = round(secs, 2)
            state.save(out / STATE)
            done_units += s.units
            prog.update(task, completed=done_units)
            if not live:
                say(f"[{i}/{len(steps)}] {s.title}: done in {secs:.1f} s")
    return dict(state.done)
