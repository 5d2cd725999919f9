"""agentsdk: an async agent runtime with typed tools, a small loop, models in
tiers, and pictures from the tools back to the model.

The names most programs need::

    from agentsdk import Agent, tool, Toolkit, Image
"""

from .agent import Agent
from .artifacts import ArtifactStore
from .errors import (
    AgentError,
    MaxTurnsExceeded,
    OutputValidationError,
    PluginNotFound,
    RunTimeout,
    ToolRetriesExceeded,
    UnexpectedModelBehavior,
)
from .loopguard import LoopDetected, LoopGuard
from .messages import Image, ImagePart, Message, TextPart, ToolCallPart, ToolResultPart, Usage
from .models import (
    ContentFilteredError,
    EmptyResponseError,
    FallbackModel,
    MalformedResponseError,
    Model,
    ModelAuthError,
    ModelError,
    ModelProfile,
    ModelRequest,
    ModelResponse,
    ModelSettings,
    ResponseTruncatedError,
    StreamDelta,
    Tiers,
    TokenTrace,
    TurnInfo,
)
from .result import RunResult
from .retry import RetryPolicy
from .tools import (
    Tool,
    ToolContext,
    ToolError,
    Toolkit,
    ToolOutcome,
    ToolSpec,
    Unchanged,
    tool,
)

__version__ = "0.1.0"

__all__ = [
    "Agent",
    "AgentError",
    "ArtifactStore",
    "ContentFilteredError",
    "EmptyResponseError",
    "FallbackModel",
    "Image",
    "ImagePart",
    "LoopDetected",
    "LoopGuard",
    "MalformedResponseError",
    "MaxTurnsExceeded",
    "Message",
    "Model",
    "ModelAuthError",
    "ModelError",
    "ModelProfile",
    "ModelRequest",
    "ModelResponse",
    "ModelSettings",
    "OutputValidationError",
    "PluginNotFound",
    "ResponseTruncatedError",
    "RetryPolicy",
    "RunResult",
    "RunTimeout",
    "StreamDelta",
    "TextPart",
    "Tiers",
    "TokenTrace",
    "Tool",
    "ToolCallPart",
    "ToolContext",
    "ToolError",
    "ToolOutcome",
    "ToolResultPart",
    "ToolRetriesExceeded",
    "ToolSpec",
    "Toolkit",
    "TurnInfo",
    "Unchanged",
    "UnexpectedModelBehavior",
    "Usage",
    "tool",
]
