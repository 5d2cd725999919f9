"""The embedded local engine: llama.cpp (xllamacpp) on loopback with small built-in models."""

from .catalog import BUILTIN_MODELS, BuiltinModel, LocalModelError, resolve_model_path
from .engine import LocalEngine, LocalEngineError, running_engines, stop_all_engines
from .grammar import call_schema, parse_constrained, tool_call_grammar
from .model import LocalChatModel
from .prefix_cache import PrefixCache, PrefixCacheEvent
from .tiers import TIERED, connect_local, local_escalation, local_tier_policy

__all__ = [
    "BUILTIN_MODELS",
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
    "local_escalation",
    "local_tier_policy",
    "parse_constrained",
    "resolve_model_path",
    "running_engines",
    "stop_all_engines",
    "tool_call_grammar",
]
