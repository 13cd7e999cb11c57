"""Shared test set-up: offline hub, quiet progress bars, a private response cache."""

from __future__ import annotations

import os
import tempfile

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
os.environ.setdefault("CONTAM_PROGRESS", "0")
# llama.cpp's OpenMP threads spin while idle by default, which starves the other core.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
# Each test session gets an empty model-response cache, so the real model runs every time
# instead of answering from a cache filled by an earlier run on this machine.
os.environ["CONTAM_CACHE"] = os.path.join(tempfile.mkdtemp(prefix="contam-test-cache-"), "responses.sqlite")
