"""agentsdk-unity: drive a live Unity Editor through the agentsdk bridge package."""

from .bridge import UnityBridge
from .csharp import (
    UNITY_LANGUAGE_VERSION,
    CSharpCheck,
    CSharpCompilerMissingError,
    CSharpDiagnostic,
    NewerSyntax,
    check_csharp,
)
from .errors import (
    BridgeAuthError,
    BridgeTooManyConnectionsError,
    BridgeUnavailableError,
    UnityBridgeError,
)
from .settings import BridgeSettings, BridgeStatus
from .toolkit import TOOL_GROUPS, ScriptWriteReport, UnityToolkit

__all__ = [
    "TOOL_GROUPS",
    "UNITY_LANGUAGE_VERSION",
    "BridgeAuthError",
    "BridgeSettings",
    "BridgeStatus",
    "BridgeTooManyConnectionsError",
    "BridgeUnavailableError",
    "CSharpCheck",
    "CSharpCompilerMissingError",
    "CSharpDiagnostic",
    "NewerSyntax",
    "ScriptWriteReport",
    "UnityBridge",
    "UnityBridgeError",
    "UnityToolkit",
    "check_csharp",
]
