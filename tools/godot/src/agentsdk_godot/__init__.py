"""agentsdk-godot: build, run and look at Godot games from an agent.

Godot 3 (3.2+) is exercised for real; Godot 4 support is written from its documented
command line and file format (see README).
"""

from agentsdk_godot.bridge import PROTOCOL_VERSION, BridgeError, GameSession, Handshake
from agentsdk_godot.diagnostics import Diagnostic, StackFrame, parse_diagnostics
from agentsdk_godot.display import DisplayError, VirtualDisplay
from agentsdk_godot.engine import (
    EngineRun,
    GodotEngine,
    GodotNotFoundError,
    HarnessJob,
    ImportReport,
    NodeInfo,
)
from agentsdk_godot.measure import NodeBounds, SceneMeasurements, ViewInfo
from agentsdk_godot.project import GodotProject, ProjectPathError
from agentsdk_godot.reports import RunReport, SceneChange, ScriptCheck, blank_frame
from agentsdk_godot.resource_text import ResourceText, Section, parse_resource_text
from agentsdk_godot.scene import (
    ExtResourceEntry,
    NodeEntry,
    SceneError,
    SceneFile,
    SubResourceEntry,
)
from agentsdk_godot.toolkit import TOOL_GROUPS, GodotToolkit, Look
from agentsdk_godot.variant import (
    Constructor,
    ExtResource,
    GodotObject,
    StringName,
    SubResource,
    Variant,
    VariantSyntaxError,
    format_variant,
    parse_variant,
)
from agentsdk_godot.versions import GodotDialect, GodotVersion, dialect_for, parse_version
from agentsdk_godot.visibility import read_report

__all__ = [
    "PROTOCOL_VERSION",
    "TOOL_GROUPS",
    "BridgeError",
    "Constructor",
    "Diagnostic",
    "DisplayError",
    "EngineRun",
    "ExtResource",
    "ExtResourceEntry",
    "GameSession",
    "GodotDialect",
    "GodotEngine",
    "GodotNotFoundError",
    "GodotObject",
    "GodotProject",
    "GodotToolkit",
    "GodotVersion",
    "Handshake",
    "HarnessJob",
    "ImportReport",
    "Look",
    "NodeBounds",
    "NodeEntry",
    "NodeInfo",
    "ProjectPathError",
    "ResourceText",
    "RunReport",
    "SceneChange",
    "SceneError",
    "SceneFile",
    "SceneMeasurements",
    "ScriptCheck",
    "Section",
    "StackFrame",
    "StringName",
    "SubResource",
    "SubResourceEntry",
    "Variant",
    "VariantSyntaxError",
    "ViewInfo",
    "VirtualDisplay",
    "blank_frame",
    "dialect_for",
    "format_variant",
    "parse_diagnostics",
    "parse_resource_text",
    "parse_variant",
    "parse_version",
    "read_report",
]
