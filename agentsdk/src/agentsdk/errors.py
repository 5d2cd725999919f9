"""Exceptions a user of the agent sees."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:  # pragma: no cover
    from .result import RunResult


class AgentError(Exception):
    """Base class of run failures; ``result`` holds what the run had so far."""

    def __init__(self, message: str, result: RunResult | None = None):
        super().__init__(message)
        self.result = result


class MaxTurnsExceeded(AgentError):
    """The run reached ``max_turns`` without a final answer."""


class ToolRetriesExceeded(AgentError):
    """The model kept giving a tool invalid arguments past its retry budget."""


class OutputValidationError(AgentError):
    """The final answer did not match ``output_type`` after the allowed retries."""


class UnexpectedModelBehavior(AgentError):
    """The model did something the loop cannot work with."""


class RunTimeout(AgentError, TimeoutError):
    """The run took longer than the agent's ``timeout``."""


class PluginNotFound(LookupError):
    """No installed plugin has that name."""
