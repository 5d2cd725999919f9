"""The embedded local engine: llama.cpp (xllamacpp) on loopback with small built-in models."""

from .catalog import BUILTIN_MODELS, BuiltinModel, LocalModelError, resolve_model_path
from .engine import (
    KEEP_ALIVE_ENV,
    LocalEngine,
    LocalEngineError,
    engines_dir,
    resident_engines,
    running_engines,
    stop_all_engines,
    stop_resident_engines,
)
from .grammar import call_schema, parse_constrained, tool_call_grammar
from .model import LocalChatModel
from .prefix_cache import PrefixCache, PrefixCacheEvent
from .tiers import TIERED, connect_local, local_escalation, local_tier_policy

__all__ = [
    "BUILTIN_MODELS",
    "KEEP_ALIVE_ENV",
    "TIERED",
    "BuiltinModel",
    "LocalChatModel",
    "LocalEngine",
    "LocalEngineError",
    "LocalModelError",
    "PrefixCache",
    "PrefixCacheEvent",
    "call_schema",
    "connect_local",
    "engines_dir",
    "local_escalation",
    "local_tier_policy",
    "parse_constrained",
    "resident_engines",
    "resolve_model_path",
    "running_engines",
    "stop_all_engines",
    "stop_resident_engines",
    "tool_call_grammar",
]
