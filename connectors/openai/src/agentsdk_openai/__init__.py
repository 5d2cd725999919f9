"""agentsdk-openai: any OpenAI-compatible Chat Completions server, plus the embedded
llama.cpp engine that serves small models offline (``local:default``)."""

from .connect import connect
from .local import BUILTIN_MODELS, LocalChatModel, LocalEngine, LocalEngineError, LocalModelError
from .model import OpenAIChatModel
from .profiles import ENGINE_PROFILES, EngineProfile, engine_profile
from .prompted import parse_tool_calls, tool_prompt
from .retry import RetryPolicy

__all__ = [
    "BUILTIN_MODELS",
    "ENGINE_PROFILES",
    "EngineProfile",
    "LocalChatModel",
    "LocalEngine",
    "LocalEngineError",
    "LocalModelError",
    "OpenAIChatModel",
    "RetryPolicy",
    "connect",
    "engine_profile",
    "parse_tool_calls",
    "tool_prompt",
]
