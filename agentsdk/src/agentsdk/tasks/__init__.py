"""Verifiable tasks: a prompt, toolkits, a rubric of checks on the world the tools
changed, and a reference solution; suites of them shipped by toolkits; and the
quality checks that keep a suite honest; training samples from an eval's token traces.

    from agentsdk.tasks import Task, Suite, Check, call, run_task, check_suite
"""

from .quality import DEGENERATE, QualityReport, TaskQuality, check_suite, check_task
from .reference import INJECTION, ReferenceMissing, ReferenceModel, injection_tool
from .rollout import REFERENCE, Rollout, ToolkitPool, TurnRecord, run_task
from .task import Check, CheckResult, CheckValue, Step, Suite, Task, ToolkitSpec, Verdict, call
from .trajectories import TRAINING_SCHEMA, ExportReport, TrainingSample, export_trajectories
from .verify import VerifierError, verify
from .world import World

__all__ = [
    "DEGENERATE",
    "INJECTION",
    "REFERENCE",
    "TRAINING_SCHEMA",
    "Check",
    "CheckResult",
    "CheckValue",
    "ExportReport",
    "QualityReport",
    "ReferenceMissing",
    "ReferenceModel",
    "Rollout",
    "Step",
    "Suite",
    "Task",
    "TaskQuality",
    "ToolkitPool",
    "ToolkitSpec",
    "TrainingSample",
    "TurnRecord",
    "Verdict",
    "VerifierError",
    "World",
    "call",
    "check_suite",
    "check_task",
    "export_trajectories",
    "injection_tool",
    "run_task",
    "verify",
]
