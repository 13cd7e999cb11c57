"""Root pytest set-up, shared by tests/ and the doctests of src/contam (--doctest-modules):
offline hub, quiet progress bars, an empty response cache, and under pytest-xdist (``make test``
runs ``-n 2``) one core's worth of threads per worker. tests/conftest.py adds the rest."""

from __future__ import annotations

import os
import tempfile

import pytest

from contam.pool import usable_cores  # light: no torch, no numpy

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
os.environ.setdefault("CONTAM_PROGRESS", "0")
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
os.environ.setdefault("CONTAM_CACHE", os.path.join(tempfile.mkdtemp(prefix="contam-doctest-cache-"), "responses.sqlite"))


def _worker_threads() -> int | None:
    """Under pytest-xdist, the cores of this machine shared out among the workers (at least one
    each); ``None`` in a plain run. xdist sets these variables before any conftest is imported,
    so the limits below are in place before torch, OpenMP or llama.cpp first read them."""
    count = os.environ.get("PYTEST_XDIST_WORKER_COUNT", "")
    if not os.environ.get("PYTEST_XDIST_WORKER") or not count.isdigit() or int(count) < 1:
        return None
    return max(1, usable_cores() // int(count))


# Two workers on two cores, each running torch's or llama.cpp's default of one thread per core,
# would put four busy threads on two cores; llama.cpp's threads meet at a barrier after every
# layer, so one descheduled thread stalls the other. Each worker keeps to its share instead.
# (Subprocesses a test starts inherit the same limits.) An explicit setting wins.
_threads = _worker_threads()
if _threads is not None:
    for _var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS", "CONTAM_THREADS"):
        os.environ.setdefault(_var, str(_threads))


# The test files that took longest in a plain run on 2 cores (pytest --durations), longest first.
# `make test` hands whole files to its two workers (--dist loadfile: a file's module fixtures, e.g. a
# fine-tuned checkpoint, are built once) in collection order (--no-loadscope-reorder); these go
# first so that no long file starts last while the other worker sits idle. Only the order changes.
_LONG_FILES = (
    "tests/test_probe_paired.py",
    "tests/test_contaminate.py",
    "tests/test_fuzz_inputs.py",
    "tests/test_cli_scan.py",
    "tests/test_paired_ref_model.py",
    "tests/test_semantic_dcq.py",
    "tests/test_models_hf.py",
    "tests/test_prefix_kv.py",
    "tests/test_zerocot.py",
    "tests/test_probe_gen.py",
    "tests/test_perturb_judge.py",
    "tests/test_scan_shards.py",
    "tests/test_docs.py",
    "tests/test_input_kind_named.py",
    "tests/test_reasoning.py",
    "tests/test_scenarios.py",
)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if _threads is None:
        return  # a plain run keeps pytest's own order
    rank = {name: k for k, name in enumerate(_LONG_FILES)}
    root = config.rootpath
    items.sort(key=lambda item: rank.get(item.path.relative_to(root).as_posix() if item.path.is_relative_to(root) else "", len(rank)))
