"""The embedded local engine: llama.cpp (xllamacpp) on loopback with small built-in models."""

from .catalog import BUILTIN_MODELS, BuiltinModel, LocalModelError, resolve_model_path
from .engine import LocalEngine, LocalEngineError, running_engines, stop_all_engines
from .model import LocalChatModel

__all__ = [
    "BUILTIN_MODELS",
    "BuiltinModel",
    "LocalChatModel",
    "LocalEngine",
    "LocalEngineError",
    "LocalModelError",
    "resolve_model_path",
    "running_engines",
    "stop_all_engines",
]
