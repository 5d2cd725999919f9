"""Write the event stream of a run as JSON lines, with secrets redacted.

``Agent(trace="run.jsonl")`` appends one JSON object per event. When
``opentelemetry-api`` is installed, runs and tool calls also become spans.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

from .events import (
    Event,
    RunFailed,
    RunFinished,
    RunStarted,
    ToolCallFinished,
    ToolCallStarted,
    event_to_dict,
)

REDACTED = "[REDACTED]"
_SECRET_KEY = re.compile(r"(api[_-]?key|token|secret|password|authorization|auth|credential)", re.I)
_SECRET_ENV = re.compile(r"(KEY|TOKEN|SECRET|PASSWORD|CREDENTIAL)", re.I)
_SECRET_TEXT = [
    re.compile(r"\bsk-[A-Za-z0-9_\-]{8,}"),
    re.compile(r"(?i)\bbearer\s+[A-Za-z0-9._\-]{8,}"),
    re.compile(r"\bsk-ant-[A-Za-z0-9_\-]{8,}"),
]


class Redactor:
    """Removes secrets from JSON-ready data: values under secret-looking keys,
    known token shapes, and the values of secret-looking environment variables."""

    def __init__(self, extra_secrets: list[str] | None = None):
        values = [v for k, v in os.environ.items() if _SECRET_ENV.search(k) and len(v) >= 8]
        values += [s for s in (extra_secrets or []) if s]
        self._literals = sorted(set(values), key=len, reverse=True)

    def text(self, value: str) -> str:
        """``value`` with every secret replaced."""
        for secret in self._literals:
            if secret in value:
                value = value.replace(secret, REDACTED)
        for pattern in _SECRET_TEXT:
            value = pattern.sub(REDACTED, value)
        return value

    def data(self, value: Any) -> Any:
        """A copy of JSON-ready ``value`` with secrets replaced."""
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, dict):
            return {
                k: (
                    REDACTED if isinstance(k, str) and _SECRET_KEY.search(k) and v else self.data(v)
                )
                for k, v in value.items()
            }
        if isinstance(value, list):
            return [self.data(v) for v in value]
        return value


class JsonlTracer:
    """Appends redacted events to a JSONL file."""

    def __init__(self, path: str | Path, redactor: Redactor | None = None):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.redactor = redactor or Redactor()
        self._file = self.path.open("a", encoding="utf-8")
        self._otel = _OTelBridge.create()

    def write(self, event: Event) -> None:
        """Record one event."""
        data = self.redactor.data(event_to_dict(event))
        self._file.write(json.dumps(data, ensure_ascii=False) + "\n")
        if self._otel is not None:
            self._otel.on_event(event, data)

    def close(self) -> None:
        """Flush and close the file."""
        self._file.close()


def read_trace(path: str | Path) -> list[dict[str, Any]]:
    """The events of a JSONL trace, as dictionaries."""
    with Path(path).open(encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


class _OTelBridge:
    """Spans for runs and tool calls when opentelemetry-api is installed."""

    def __init__(self, tracer: Any):
        self.tracer = tracer
        self.spans: dict[str, Any] = {}

    @classmethod
    def create(cls) -> _OTelBridge | None:
        try:
            from opentelemetry import trace
        except ImportError:
            return None
        return cls(trace.get_tracer("agentsdk"))

    def on_event(self, event: Event, data: dict[str, Any]) -> None:
        if isinstance(event, RunStarted):
            self.spans[event.run_id] = self.tracer.start_span(
                "agentsdk.run", attributes={"agentsdk.model": event.model}
            )
        elif isinstance(event, ToolCallStarted):
            self.spans[event.call_id] = self.tracer.start_span(f"tool {event.name}")
        elif isinstance(event, ToolCallFinished):
            span = self.spans.pop(event.call_id, None)
            if span is not None:
                span.set_attribute("agentsdk.is_error", event.is_error)
                span.end()
        elif isinstance(event, RunFinished | RunFailed):
            span = self.spans.pop(event.run_id, None)
            if span is not None:
                span.end()
