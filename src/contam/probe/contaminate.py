"""Controlled contamination: fine-tune a model on chosen benchmark items with known exposure.

This is how the model-side probes are validated (paper 004 §4 fine-tunes "specially
contaminated models"; Oren et al. 2023 inject test sets 1-100 times): we *make* a model
contaminated on purpose, on a known subset of a benchmark, in a known form and a known number
of times, then check that every probe tells those items from unseen ones.

Training data per epoch: every seen item once, in one form -- ``verbatim`` (the item as a leak
shows it: question then solution, exactly the text the log-prob probes score), ``paraphrase``
(same problem and answer, other words; from a user JSONL file), or ``isomorphic`` (an audited
instance from :mod:`contam.perturb` with other numbers: the *structure* leaks, the items do
not) -- shuffled with ``filler_ratio`` clean real paragraphs per item (fresh ones each epoch,
so filler is seen once). Full fine-tuning in float32 on CPU by default; LoRA through ``peft``
as an option (merged into the weights before saving, so the output is a plain model folder).

The output folder holds ``model.safetensors``, the tokenizer and ``manifest.json`` naming each
seen item, its form and its exposure count (plus snapshots ``epoch-K/`` for ``save_epochs``;
with a constant learning rate after warm-up the K-epoch snapshot is the model a K-epoch run
would produce, so one run serves an exposure sweep).

>>> cfg = ContaminateConfig(benchmark="gsm8k", subset=(0, 8), epochs=3)    # doctest: +SKIP
>>> manifest = Contaminator(cfg).run("smollm2", "models/gsm8k-c3")        # doctest: +SKIP
>>> manifest.seen[0].id, manifest.seen[0].exposures                       # doctest: +SKIP
('gsm8k/test/0', 3)
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import random
import shutil
import tempfile
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, ClassVar

from contam.constraints import Constraints, Each, Interval, Options, validate
from contam.data import Item, load_benchmark
from contam.errors import ConfigError, InputError, OutputError
from contam.outputs import ensure_dir, write_json
from contam.progress import make_progress
from contam.records import Record

MODES = ("verbatim", "paraphrase", "isomorphic")
TEMPLATES = ("text", "chat", "zerocot")
MANIFEST = "manifest.json"
PARTIAL = ".partial"
SCHEMA = 1


@dataclass(frozen=True)
class ContaminateConfig:
    """What to leak, how often and how to train.

    ``subset``: ``(start, stop)`` slice of the benchmark whose items are seen. ``mode``: the
    form they are seen in. ``epochs``: exposures per item. ``filler_ratio``: clean documents
    per contaminated one (Oren et al. mix test sets into much larger clean data; 1.0 keeps CPU
    runs short). ``template``: ``text`` (a raw document, as a web leak or pre-training data) or
    ``chat`` (user question, assistant solution, as SFT data) or ``zerocot`` (the Zero-CoT Probe's
    own chat prompt, system prompt included, answered with ``The final answer is: \\[ \\boxed{ANSWER} \\]``:
    the memorised answer in exactly the form the probe forces, the case where it must fire). ``lr`` 1e-4 full fine-tune
    (2e-4 with LoRA) memorizes a 135M model's seen items within a few epochs.
    ``isomorphic_seed`` picks the perturbed instance that is trained on; keep it different from
    the variant set's seed used at evaluation (0) so the evaluation variants stay unseen.
    """

    benchmark: str = "gsm8k"
    subset: tuple[int, int] = (0, 100)
    mode: str = "verbatim"
    epochs: int = 3
    filler_ratio: float = 1.0
    filler: str = "webtext"
    template: str = "text"
    paraphrases: str | None = None
    isomorphic_seed: int = 1000
    lr: float = 1e-4
    batch_size: int = 4
    max_length: int = 256
    warmup_steps: int = 4
    weight_decay: float = 0.0
    lora: bool = False
    lora_r: int = 16
    lora_alpha: int = 32
    seed: int = 0
    save_epochs: tuple[int, ...] = ()

    _constraints: ClassVar[Constraints] = {
        "subset": Each(Interval(int, 0, None)),
        "mode": Options(*MODES),
        "epochs": Interval(int, 1, None),
        "filler_ratio": Interval(float, 0, None),
        "template": Options(*TEMPLATES),
        "isomorphic_seed": Interval(int, 0, None),
        "lr": Interval(float, 0, None, closed="neither"),
        "batch_size": Interval(int, 1, None),
        "max_length": Interval(int, 16, None),
        "warmup_steps": Interval(int, 0, None),
        "weight_decay": Interval(float, 0, None),
        "lora_r": Interval(int, 1, None),
        "lora_alpha": Interval(int, 1, None),
        "seed": Interval(int, 0, None),
        "save_epochs": Each(Interval(int, 1, None)),
    }

    def __post_init__(self) -> None:
        validate(self)
        start, stop = self.subset
        if stop <= start:
            raise ConfigError(f"subset must be START:STOP with 0 <= START < STOP, got {start}:{stop}")
        if self.mode == "paraphrase" and not self.paraphrases:
            raise ConfigError("paraphrase mode needs a paraphrase file (--paraphrases FILE.jsonl with id and question per line)")
        if any(e < 1 or e > self.epochs for e in self.save_epochs):
            raise ConfigError(f"save_epochs must lie in 1..{self.epochs}, got {list(self.save_epochs)}")


def parse_subset(text: str) -> tuple[int, int]:
    """``"0:100"`` -> ``(0, 100)`` (``":50"`` starts at 0)."""
    a, sep, b = text.partition(":")
    try:
        if not sep:
            raise ValueError
        return (int(a) if a.strip() else 0, int(b))
    except ValueError:
        raise ConfigError(f"subset must look like START:STOP (e.g. 0:100), got {text!r}") from None


@dataclass(frozen=True)
class SeenItem(Record):
    """One contaminated item: its id, the form it was trained in and how many times."""

    id: str
    form: str
    exposures: int
    text_sha256: str
    variant_id: str = ""


@dataclass(frozen=True)
class ContaminationManifest(Record):
    """Everything needed to evaluate the contaminated model: what was seen, how, and the cost."""

    schema: int
    base_model: str
    base_identity: str
    benchmark: str
    subset: tuple[int, int]
    mode: str
    epochs: int
    seen: tuple[SeenItem, ...]
    skipped: dict[str, str]
    config: dict[str, Any]
    n_filler_docs: int
    train_tokens: int
    train_seconds: float
    seconds_per_100_items_epoch: float
    final_loss: dict[str, float] = field(default_factory=dict)
    loss_curve: tuple[float, ...] = ()
    #: Process CPU time of the training loop: on a shared machine wall time says little.
    train_cpu_seconds: float = 0.0
    created: str = ""

    @property
    def seen_ids(self) -> list[str]:
        return [s.id for s in self.seen]


def read_manifest(folder: str | os.PathLike[str]) -> ContaminationManifest:
    """The manifest of a contaminated-model folder (clear error when it is not one)."""
    path = Path(folder) / MANIFEST
    if not path.is_file():
        raise InputError(f"no {MANIFEST} here: not a model written by `contam contaminate`", path=path)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        data["subset"] = tuple(data["subset"])
        data["seen"] = tuple(SeenItem.from_dict(s) for s in data["seen"])
        data["loss_curve"] = tuple(data.get("loss_curve", ()))
        return ContaminationManifest.from_dict(data)
    except (json.JSONDecodeError, KeyError, TypeError) as e:
        raise InputError(f"not a valid contamination manifest ({type(e).__name__}: {e})", path=path) from None


def load_paraphrases(path: str | os.PathLike[str]) -> dict[str, Item]:
    """Paraphrases from JSONL: ``id`` (the original item id) and ``question`` per line,
    optionally ``solution`` (else the original solution is kept) -- the first line per id wins."""
    p = Path(path)
    if not p.is_file():
        raise InputError("paraphrase file does not exist", path=p)
    out: dict[str, Item] = {}
    with open(p, encoding="utf-8") as fh:
        for n, line in enumerate(fh, 1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except json.JSONDecodeError as e:
                raise InputError(f"not valid JSON ({e.msg})", path=p, line=n) from None
            if not isinstance(row, dict):
                raise InputError("each line must be a JSON object", path=p, line=n)
            key = row.get("id", row.get("original_id"))
            if not isinstance(key, str) or not key:
                raise InputError("missing item id", path=p, line=n, field="id")
            q = row.get("question", row.get("paraphrase"))
            if not isinstance(q, str) or not q.strip():
                raise InputError("missing paraphrased question", path=p, line=n, field="question")
            out.setdefault(key, Item(id=key, question=q.strip(), solution=str(row.get("solution") or "")))
    return out


def training_forms(items: Sequence[Item], cfg: ContaminateConfig) -> tuple[list[tuple[Item, Item, str]], dict[str, str]]:
    """``(original, trained form, variant id)`` per seen item, and skipped ids with the reason."""
    skipped: dict[str, str] = {}
    if cfg.mode == "verbatim":
        return [(it, it, "") for it in items], skipped
    forms: list[tuple[Item, Item, str]] = []
    if cfg.mode == "paraphrase":
        para = load_paraphrases(cfg.paraphrases or "")
        for it in items:
            p = para.get(it.id)
            if p is None:
                skipped[it.id] = "no paraphrase in the file"
                continue
            forms.append(
                (
                    it,
                    Item(
                        id=it.id,
                        question=p.question,
                        answer=it.answer,
                        solution=p.solution or it.solution,
                        choices=it.choices,
                        benchmark=it.benchmark,
                    ),
                    "",
                )
            )
        return forms, skipped
    from contam.perturb import make_variant_set

    by_id = {v.original_id: v for v in make_variant_set(items, variants=1, seed=cfg.isomorphic_seed)}
    for it in items:
        v = by_id.get(it.id)
        if v is None:
            skipped[it.id] = "no audited isomorphic instance (item could not be templated)"
            continue
        forms.append(
            (
                it,
                Item(id=it.id, question=v.question, answer=v.answer, solution=v.solution, choices=v.choices, benchmark=it.benchmark),
                v.variant_id,
            )
        )
    return forms, skipped


def filler_texts(cfg: ContaminateConfig, n: int, rng: random.Random, exclude: set[str]) -> list[str]:
    """``n`` clean documents: real paragraphs (``webtext``) or items of another benchmark / file."""
    if n <= 0:
        return []
    if cfg.filler == "webtext":
        from contam.data.webtext import paragraphs

        pool = [p for p in paragraphs() if p not in exclude]
    else:
        pool = [it.text for it in load_benchmark(cfg.filler) if it.text not in exclude]
    if not pool:
        raise ConfigError(f"filler source {cfg.filler!r} has no usable text")
    if n <= len(pool):
        return rng.sample(pool, n)
    return [rng.choice(pool) for _ in range(n)]


def render(item: Item, template: str, lm: Any) -> str:
    """The document text of a trained item: ``item.text`` as a leak shows it, or a chat turn
    (``chat``: the solution; ``zerocot``: the final answer straight after the probe's prefill)."""
    if template == "chat":
        return lm.format_chat([{"role": "user", "content": item.question}]) + (item.solution or item.answer)
    if template == "zerocot":
        from contam.probe.zerocot import ZeroCoTConfig

        z = ZeroCoTConfig()
        messages = [{"role": "system", "content": z.system_prompt}, {"role": "user", "content": item.question}]
        return lm.format_chat(messages, prefill=z.force_prefill) + f"{item.answer.strip()}}} \\]"
    return item.text


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


class Contaminator:
    """Fine-tunes a model on a benchmark subset (:class:`ContaminateConfig`) and writes it with a manifest."""

    def __init__(self, config: ContaminateConfig | None = None) -> None:
        self.config = config or ContaminateConfig()

    def run(self, base: str, out: str | os.PathLike[str], *, force: bool = False) -> ContaminationManifest:
        """Train from ``base`` (``smollm2``, ``hf:PATH`` or a folder) and write ``out``.

        An ``out`` that already holds a finished model with the same configuration is returned
        as is (no retraining); a different finished model there needs ``force``.
        """
        import torch

        from contam.models.hf import HFModel

        cfg = self.config
        out = Path(out)
        if (out / MANIFEST).is_file():
            old = read_manifest(out)
            if old.config == _config_dict(cfg) and old.base_model == base:
                return old
            if not force:
                raise OutputError(f"{out} already holds a contaminated model with another configuration; use --force to replace it")
        elif out.exists() and any(out.iterdir()) and not force and not (out / PARTIAL).exists():
            raise OutputError(f"{out} exists and is not empty; choose a new folder or use --force")

        items = load_benchmark(cfg.benchmark)
        start, stop = cfg.subset
        if start >= len(items):
            raise ConfigError(f"subset {start}:{stop} is past the end of {cfg.benchmark} ({len(items)} items)")
        seen = items[start:stop]
        forms, skipped = training_forms(seen, cfg)
        if not forms:
            raise ConfigError(f"no item of {cfg.benchmark}[{start}:{stop}] has a {cfg.mode} form to train on")

        random.seed(cfg.seed)
        torch.manual_seed(cfg.seed)
        lm = HFModel(base.removeprefix("hf:"), spec=base, dtype="float32", device="cpu" if not torch.cuda.is_available() else None)
        tok, model = lm.tokenizer, lm.model
        item_docs = [render(form, cfg.template, lm) for _, form, _ in forms]
        exclude = {it.text for it in items}
        n_filler = round(cfg.filler_ratio * len(forms))
        rng = random.Random(cfg.seed)
        eos = tok.eos_token_id if tok.eos_token_id is not None else lm._pad_id
        start_id = lm._start_id

        def encode(text: str) -> list[int]:
            # The same context the probes score with: the start token, then the text.
            return ([start_id, *tok(text, add_special_tokens=False)["input_ids"], eos])[: cfg.max_length]

        item_ids = [encode(d) for d in item_docs]
        if cfg.lora:
            model = self._wrap_lora(model)
        params = [p for p in model.parameters() if p.requires_grad]
        opt = torch.optim.AdamW(params, lr=cfg.lr, weight_decay=cfg.weight_decay)
        sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda step: min(1.0, (step + 1) / max(1, cfg.warmup_steps)))
        model.train()
        losses: list[float] = []
        tokens = 0
        # Snapshots land in out/epoch-K as soon as they are done (each renamed into place whole), so
        # they can be evaluated while training goes on; manifest.json in out is written last and
        # marks the run finished.
        ensure_dir(out)
        if force:
            (out / MANIFEST).unlink(missing_ok=True)
        (out / PARTIAL).write_text("a `contam contaminate` run is writing here; rerunning it restarts the run\n")
        t0, c0 = time.perf_counter(), time.process_time()
        with make_progress() as prog:
            steps_per_epoch = math.ceil((len(item_ids) + n_filler) / cfg.batch_size)
            task = prog.add_task(f"fine-tuning ({cfg.mode}, {len(item_ids)} items)", total=cfg.epochs * steps_per_epoch)
            for epoch in range(1, cfg.epochs + 1):
                filler = [encode(t) for t in filler_texts(cfg, n_filler, rng, exclude)]
                docs = item_ids + filler
                order = list(range(len(docs)))
                rng.shuffle(order)
                for s in range(0, len(order), cfg.batch_size):
                    batch = [docs[i] for i in order[s : s + cfg.batch_size]]
                    loss = self._step(model, batch, lm._pad_id)
                    loss.backward()
                    torch.nn.utils.clip_grad_norm_(params, 1.0)
                    opt.step()
                    sched.step()
                    opt.zero_grad(set_to_none=True)
                    losses.append(float(loss.detach()))
                    tokens += sum(len(b) for b in batch)
                    prog.advance(task)
                if epoch in cfg.save_epochs and epoch != cfg.epochs:
                    elapsed = (time.perf_counter() - t0, time.process_time() - c0)
                    self._save(
                        model, tok, out / f"epoch-{epoch}", base, lm, forms, skipped, epoch, n_filler * epoch, tokens, elapsed, losses
                    )
        elapsed = (time.perf_counter() - t0, time.process_time() - c0)
        manifest = self._save(model, tok, out, base, lm, forms, skipped, cfg.epochs, n_filler * cfg.epochs, tokens, elapsed, losses)
        (out / PARTIAL).unlink(missing_ok=True)
        return manifest

    def _wrap_lora(self, model: Any) -> Any:
        try:
            from peft import LoraConfig, get_peft_model
        except ImportError:
            raise ConfigError("LoRA needs peft (pip install 'contam[peft]')") from None
        cfg = self.config
        lora = LoraConfig(r=cfg.lora_r, lora_alpha=cfg.lora_alpha, lora_dropout=0.0, target_modules="all-linear", task_type="CAUSAL_LM")
        return get_peft_model(model, lora)

    @staticmethod
    def _step(model: Any, batch: list[list[int]], pad_id: int) -> Any:
        """Mean next-token loss over the real (unpadded) tokens of a right-padded batch."""
        import torch

        width = max(len(b) for b in batch)
        ids = torch.full((len(batch), width), pad_id, dtype=torch.long)
        mask = torch.zeros((len(batch), width), dtype=torch.long)
        for r, b in enumerate(batch):
            ids[r, : len(b)] = torch.tensor(b)
            mask[r, : len(b)] = 1
        labels = ids.masked_fill(mask == 0, -100)
        return model(input_ids=ids.to(model.device), attention_mask=mask.to(model.device), labels=labels.to(model.device)).loss

    def _save(
        self,
        model: Any,
        tok: Any,
        folder: Path,
        base: str,
        lm: Any,
        forms: list[tuple[Item, Item, str]],
        skipped: dict[str, str],
        epochs: int,
        n_filler: int,
        tokens: int,
        elapsed: tuple[float, float],
        losses: list[float],
    ) -> ContaminationManifest:
        cfg = self.config
        folder.parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix=f".{folder.name}.", dir=folder if folder.is_dir() else folder.parent))
        to_save = model
        if cfg.lora:  # a merged copy: the saved folder is a plain model any backend loads
            import copy

            to_save = copy.deepcopy(model).merge_and_unload()
        try:
            to_save.save_pretrained(str(tmp), safe_serialization=True)
            tok.save_pretrained(str(tmp))
            folder.mkdir(exist_ok=True)
            for f in tmp.iterdir():  # whole files renamed into place: a reader never sees half a weights file
                os.replace(f, folder / f.name)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
        seen = tuple(SeenItem(orig.id, cfg.mode, epochs, _sha(render(form, cfg.template, lm)), vid) for orig, form, vid in forms)
        seconds, cpu = elapsed
        per100 = seconds / max(1, epochs) / max(1, len(forms)) * 100
        manifest = ContaminationManifest(
            schema=SCHEMA,
            base_model=base,
            base_identity=lm.identity,
            benchmark=cfg.benchmark,
            subset=cfg.subset,
            mode=cfg.mode,
            epochs=epochs,
            seen=seen,
            skipped=skipped,
            config=_config_dict(cfg),
            n_filler_docs=n_filler,
            train_tokens=tokens,
            train_seconds=round(seconds, 2),
            seconds_per_100_items_epoch=round(per100, 2),
            final_loss={"last_epoch_mean": float(sum(losses[-10:]) / max(1, len(losses[-10:])))},
            loss_curve=tuple(round(x, 4) for x in losses),
            train_cpu_seconds=round(cpu, 2),
            created=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        )
        write_json(folder / MANIFEST, manifest.to_dict())
        return manifest


def _config_dict(cfg: ContaminateConfig) -> dict[str, Any]:
    d = asdict(cfg)
    d["subset"] = list(cfg.subset)
    d["save_epochs"] = list(cfg.save_epochs)
    return d
