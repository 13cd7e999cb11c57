"""Probes an audit cannot run on its model: recorded with the reason instead of failing the audit.

A model behind an API may generate but not score given text (llama.cpp's server: its echoed
prompt log-probs are shifted by one token). The audit then runs the probes that only generate
(the Zero-CoT Probe in instruction mode, the performance cliff) and skips the ones that need
log-probs of the benchmark text (Min-K%, the paired verdict): the step writes ``skipped.json``
in its folder, and the verdict names every skipped probe with its reason (a probe that was not
run neither agrees nor disagrees, so it does not lower the verdict; it is said on the card, in
``summary.md``, in ``verdict.json`` and on the terminal).

>>> SkippedProbe("minkprob", "the model cannot score given text").line()
'minkprob not run: the model cannot score given text'
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from contam.outputs import ensure_dir, write_json
from contam.records import Record
from contam.textsafe import redact_url

log = logging.getLogger(__name__)

#: The file a skipped step leaves in its folder.
SKIPPED = "skipped.json"

#: What each probe that scores text needs, said after the model's own reason.
NEEDS = {
    "minkprob": "Min-K% needs the log-probs of the benchmark text",
    "paired": "the paired verdict needs the log-probs of both texts under both models",
}


@dataclass(frozen=True)
class SkippedProbe(Record):
    """A model-side probe (or part of one) the audit did not run, and why."""

    probe: str
    reason: str

    def line(self) -> str:
        return f"{self.probe} not run: {self.reason}"


def scoring_refusal(spec: str, api_key_env: str | None = None) -> str | None:
    """Why the model of ``spec`` cannot score given text, or ``None`` when it can."""
    from contam.probe.runs import load_model

    model = load_model(spec, api_key_env=api_key_env)
    if model.supports_scoring:
        return None
    own = getattr(model, "scoring_refusal", None)
    if callable(own):
        return str(own())
    return f"model {redact_url(spec)} cannot score given text (supports_scoring=False); score with a local model (smollm2, llamacpp:PATH, hf:PATH)"


def skip_unless_scoring(probe: str, out: Path, *specs: str | None, api_key_env: str | None = None) -> dict[str, Any] | None:
    """When a model of ``specs`` cannot score text: ``out/skipped.json`` written and its content
    returned (the step is done, with nothing measured); else ``None`` and any earlier skip removed."""
    for spec in specs:
        if not spec:
            continue
        why = scoring_refusal(spec, api_key_env)
        if why is not None:
            rec = {"probe": probe, "model": redact_url(spec), "skipped": f"{NEEDS.get(probe, 'it needs log-probs')}, and {why}"}
            write_json(ensure_dir(out) / SKIPPED, rec)
            log.warning("%s skipped: %s", probe, rec["skipped"])
            return rec
    (out / SKIPPED).unlink(missing_ok=True)
    return None


def read_skip(folder: Path) -> SkippedProbe | None:
    """The skip a step recorded in ``folder``, or ``None`` (also for an unreadable file)."""
    try:
        d = json.loads((folder / SKIPPED).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(d, dict) or not d.get("skipped"):
        return None
    return SkippedProbe(str(d.get("probe") or folder.name), str(d["skipped"]))
