"""The model `--local` serves: the file given with --model-file, else the default model, found in
the cache directory (checked once against its sha256) or downloaded there (local/download.py).

A file's checksum is computed once (a 1.1 GB file takes seconds); a marker beside it records the
size and modification time it was checked at, so later starts cost a stat.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from nanohermes.errors import LocalModelError

GGUF_MAGIC = b"GGUF"  # the first four bytes of every GGUF file: anything else is not a model llama.cpp reads
HASH_PIECE = 4 * 1024 * 1024  # bytes hashed per read: large reads, little memory


@dataclass(frozen=True)
class ModelSpec:
    name: str  # as the user is told, and the model id the server answers to
    filename: str
    url: str
    sha256: str
    size: int  # bytes: the progress bar's total when a server does not say, and a partial file's limit
    trained_context: int  # the most tokens the model was trained for: a larger window only degrades it


# Qwen2.5-Coder-1.5B-Instruct, 4-bit (q4_k_m): the smallest model that does multi-step tool use here
# (the 0.5B falls apart after one tool call); ~2 GB of RAM at an 8,192-token window. The checksum
# and size are those of the file on Hugging Face (the local-llm kit's setup.sh checks the same).
DEFAULT_MODEL = ModelSpec(
    name="qwen2.5-coder-1.5b-instruct",
    filename="qwen2.5-coder-1.5b-instruct-q4_k_m.gguf",
    url="https://huggingface.co/Qwen/Qwen2.5-Coder-1.5B-Instruct-GGUF/resolve/main/qwen2.5-coder-1.5b-instruct-q4_k_m.gguf",
    sha256="cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
    size=1_117_320_768,
    trained_context=32_768,
)


def cache_dir() -> Path:
    """Where downloaded models live: $XDG_CACHE_HOME/nanohermes/models, else ~/.cache/nanohermes/models."""
    root = os.environ.get("XDG_CACHE_HOME")
    return (Path(root).expanduser() if root else Path.home() / ".cache") / "nanohermes" / "models"


def model_file(path: Path) -> Path:
    """A model file the user named (--model-file): resolved, readable and a GGUF file, else a
    LocalModelError saying which (a server given a wrong file dies with less helpful words)."""
    path = path.expanduser()
    try:
        with open(path, "rb") as f:
            magic = f.read(len(GGUF_MAGIC))
    except IsADirectoryError:
        raise LocalModelError(f"--model-file {path} is a directory; give the .gguf file itself.") from None
    except OSError as exc:
        raise LocalModelError(f"--model-file {path}: {exc.strerror}.") from None
    if magic != GGUF_MAGIC:
        raise LocalModelError(
            f"--model-file {path} is not a GGUF model file (it does not start with {GGUF_MAGIC.decode()}); "
            "llama.cpp serves .gguf files, e.g. a q4_k_m quantisation from Hugging Face."
        )
    return path.resolve()


def cached_model(spec: ModelSpec, folder: Path, fetch: Callable[[ModelSpec, Path], None], say) -> Path:
    """The spec's file in `folder`, checked against its sha256 (once), downloaded by `fetch(spec,
    target)` when it is not there. A file there that does not match is deleted, and said."""
    target = folder / spec.filename
    if _checked_before(target, spec):
        return target
    if target.exists():
        if _matches(target, spec):
            return target
        say(f"{target} did not match its checksum: deleted, downloading it again")
        target.unlink()
    fetch(spec, target)
    if not _matches(target, spec):
        target.unlink(missing_ok=True)
        raise LocalModelError(
            f"The downloaded {spec.filename} did not match its sha256 ({spec.sha256}): it was deleted. "
            "Run again to download it anew, or download it yourself and pass --model-file PATH."
        )
    return target


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        while piece := f.read(HASH_PIECE):
            digest.update(piece)
    return digest.hexdigest()


def _marker(path: Path) -> Path:
    return path.with_name(path.name + ".checked")


def _stamp(path: Path) -> dict:
    st = path.stat()
    return {"size": st.st_size, "mtime_ns": st.st_mtime_ns}


def _checked_before(path: Path, spec: ModelSpec) -> bool:
    """Whether the file was checked against this sha256 and has not changed since."""
    try:
        recorded = json.loads(_marker(path).read_text(encoding="utf-8"))
        return recorded == {"sha256": spec.sha256, **_stamp(path)}
    except (OSError, ValueError):
        return False


def _matches(path: Path, spec: ModelSpec) -> bool:
    """Hash the file; a match is recorded beside it, so the next start need not hash again."""
    if path.stat().st_size != spec.size or sha256_of(path) != spec.sha256:
        _marker(path).unlink(missing_ok=True)
        return False
    try:
        _marker(path).write_text(json.dumps({"sha256": spec.sha256, **_stamp(path)}), encoding="utf-8")
    except OSError:  # a read-only cache: checked again next time, no harm
        pass
    return True
