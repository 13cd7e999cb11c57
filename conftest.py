"""Root pytest set-up, shared by tests/ and the doctests of src/contam (--doctest-modules):
offline hub, quiet progress bars, an empty response cache. tests/conftest.py adds the rest."""

from __future__ import annotations

import os
import tempfile

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
os.environ.setdefault("CONTAM_PROGRESS", "0")
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
os.environ.setdefault("CONTAM_CACHE", os.path.join(tempfile.mkdtemp(prefix="contam-doctest-cache-"), "responses.sqlite"))
