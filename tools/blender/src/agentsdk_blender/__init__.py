"""agentsdk-blender: a bpy worker process, typed scene tools, renders, asset validation
and a live-Blender bridge for agentsdk.

Names are imported lazily so that the engine-side modules (``engine``, ``framing``,
``addon``) stay importable inside a stock Blender, which has no pydantic or agentsdk.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

_EXPORTS = {
    "BlenderWorker": "worker",
    "BlenderError": "worker",
    "CommandFailed": "worker",
    "SceneLostError": "worker",
    "WorkerRestartedError": "worker",
    "ProtocolMismatchError": "worker",
    "BlenderConnection": "worker",
    "BlenderBridge": "bridge",
    "BridgeAuthError": "bridge",
    "BlenderToolkit": "toolkit",
    "validate_asset": "validation",
    "AssetSpec": "validation",
    "AssetReport": "validation",
    "PROTOCOL_VERSION": "framing",
}

__all__ = [
    "PROTOCOL_VERSION",
    "AssetReport",
    "AssetSpec",
    "BlenderBridge",
    "BlenderConnection",
    "BlenderError",
    "BlenderToolkit",
    "BlenderWorker",
    "BridgeAuthError",
    "CommandFailed",
    "ProtocolMismatchError",
    "SceneLostError",
    "WorkerRestartedError",
    "validate_asset",
]

if TYPE_CHECKING:
    from .bridge import BlenderBridge, BridgeAuthError
    from .framing import PROTOCOL_VERSION
    from .toolkit import BlenderToolkit
    from .validation import AssetReport, AssetSpec, validate_asset
    from .worker import (
        BlenderConnection,
        BlenderError,
        BlenderWorker,
        CommandFailed,
        ProtocolMismatchError,
        SceneLostError,
        WorkerRestartedError,
    )


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'agentsdk_blender' has no attribute {name!r}")
    return getattr(importlib.import_module(f".{module}", __name__), name)
