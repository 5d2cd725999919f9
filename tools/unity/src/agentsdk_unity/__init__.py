"""agentsdk-unity: drive a live Unity Editor through the agentsdk bridge package."""

from .bridge import UnityBridge
from .csharp import CSharpCheck, CSharpCompilerMissingError, CSharpDiagnostic, check_csharp
from .errors import BridgeAuthError, BridgeUnavailableError, UnityBridgeError
from .settings import BridgeSettings, BridgeStatus
from .toolkit import ScriptWriteReport, UnityToolkit

__all__ = [
    "BridgeAuthError",
    "BridgeSettings",
    "BridgeStatus",
    "BridgeUnavailableError",
    "CSharpCheck",
    "CSharpCompilerMissingError",
    "CSharpDiagnostic",
    "ScriptWriteReport",
    "UnityBridge",
    "UnityBridgeError",
    "UnityToolkit",
    "check_csharp",
]
