"""agentsdk-anthropic: Claude models through the Anthropic Messages API.

>>> from agentsdk import Agent
>>> agent = Agent(model="anthropic:claude-sonnet-4-5")   # reads ANTHROPIC_API_KEY
"""

from __future__ import annotations

from agentsdk.retry import RetryPolicy

from ._model import ANTHROPIC_PROFILE, API_VERSION, DEFAULT_BASE_URL, AnthropicModel

__all__ = [
    "ANTHROPIC_PROFILE",
    "API_VERSION",
    "DEFAULT_BASE_URL",
    "AnthropicModel",
    "RetryPolicy",
    "connect",
]


def connect(model_string: str) -> AnthropicModel:
    """Entry point for ``agentsdk.models``: ``"anthropic:<model>[@<base url>]"``.

    ``anthropic:claude-sonnet-4-5`` talks to api.anthropic.com with ``$ANTHROPIC_API_KEY``;
    ``anthropic:claude-sonnet-4-5@http://127.0.0.1:8080`` points at a compatible server.
    """
    scheme, sep, rest = model_string.partition(":")
    if not sep or scheme != "anthropic" or not rest:
        raise ValueError(f"expected 'anthropic:<model>', got {model_string!r}")
    model, at, base_url = rest.partition("@")
    if at and base_url.startswith(("http://", "https://")):
        return AnthropicModel(model, base_url=base_url)
    return AnthropicModel(rest)
