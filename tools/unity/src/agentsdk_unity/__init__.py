"""agentsdk-unity: drive a live Unity Editor through the agentsdk bridge package."""

from .bridge import UnityBridge
from .csharp import CSharpCheck, CSharpCompilerMissingError, CSharpDiagnostic, check_csharp
from .errors import BridgeAuthError, BridgeUnavailableError, UnityBridgeError
from .settings import BridgeSettings, BridgeStatus

__all__ = [
    "BridgeAuthError",
    "BridgeSettings",
    "BridgeStatus",
    "BridgeUnavailableError",
    "CSharpCheck",
    "CSharpCompilerMissingError",
    "CSharpDiagnostic",
    "UnityBridge",
    "UnityBridgeError",
    "check_csharp",
]
