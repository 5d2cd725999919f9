"""OpenTelemetry spans and metrics in the GenAI semantic conventions, made from
a run's events.

Nothing here sends anything anywhere: spans and metrics go to the tracer and meter
providers the application configured (``opentelemetry-sdk`` with an exporter of
its choosing). Without ``opentelemetry-api``, or without a configured provider,
runs pay nothing.

Per run: an ``invoke_agent {agent}`` span (a child of the span active around
``run()``/``stream()``), a ``chat {model}`` child per model request and an
``execute_tool {tool}`` child per tool call. A resumed run continues the trace of
the run it resumes (its saved W3C trace context). Message and argument content is
recorded only when ``OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT`` is
``true`` (or ``SPAN_ONLY`` / ``SPAN_AND_EVENT``), and is redacted like the JSONL trace.
"""

from __future__ import annotations

import functools
import json
import logging
import os
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .events import (
    Event,
    ImageProduced,
    ModelRequestStarted,
    RunFailed,
    RunFinished,
    RunPaused,
    RunStarted,
    TextDelta,
    ToolCallFinished,
    ToolCallStarted,
    TurnFinished,
)
from .pricing import cost_of, turn_cost

if TYPE_CHECKING:  # pragma: no cover
    from .agent import Agent
    from .loop import RunConfig

__all__ = ["CONTENT_ENV", "CONTEXT_FILE", "GenAIObserver", "capture_content"]

CONTENT_ENV = "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"
"""The standard switch for recording prompts, answers and tool arguments on spans."""
CONTEXT_FILE = ".otel-context.json"
"""Where a resumable run keeps its trace context, in its artifacts folder."""

_log = logging.getLogger("agentsdk.otel")
_TOKEN_BUCKETS = [4.0**i for i in range(14)]  # 1 .. 67M, as the conventions advise
_SECONDS_BUCKETS = [0.01 * 2**i for i in range(14)]  # 10 ms .. 82 s


def capture_content() -> bool:
    """True when the user opted in to content on spans (``CONTENT_ENV``)."""
    value = os.environ.get(CONTENT_ENV, "").strip().lower()
    return value in ("1", "true", "yes", "span_only", "span_and_event")


@functools.cache
def _api() -> Any:
    """The ``opentelemetry`` API modules, or ``None`` when not installed."""
    try:
        from opentelemetry import context, metrics, trace
        from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator
    except ImportError:
        return None
    # W3C trace context, whatever propagators the application set globally
    return (trace, metrics, context, TraceContextTextMapPropagator())


def _provider_name(scheme: str) -> str:
    # the conventions' well-known names where they differ from our schemes
    return {"dashscope": "alibaba.dashscope"}.get(scheme, scheme)


def _split_model(name: str) -> tuple[str | None, str]:
    scheme, sep, rest = name.partition(":")
    return (scheme, rest) if sep and rest else (None, name)


class _Instruments:
    def __init__(self, meter: Any):
        def hist(name: str, unit: str, description: str, buckets: list[float]) -> Any:
            try:
                return meter.create_histogram(
                    name, unit=unit, description=description,
                    explicit_bucket_boundaries_advisory=buckets,
                )  # fmt: skip
            except TypeError:  # an API older than the advisory argument
                return meter.create_histogram(name, unit=unit, description=description)

        self.tokens = hist(
            "gen_ai.client.token.usage", "{token}", "Tokens used per model request", _TOKEN_BUCKETS
        )
        self.chat = hist(
            "gen_ai.client.operation.duration", "s", "Model request duration", _SECONDS_BUCKETS
        )
        self.agent = hist(
            "gen_ai.invoke_agent.duration", "s", "Agent run duration", _SECONDS_BUCKETS
        )
        self.tool = hist(
            "gen_ai.execute_tool.duration", "s", "Tool call duration", _SECONDS_BUCKETS
        )


_instruments: dict[int, _Instruments] = {}


class _Chat:
    """The open ``chat`` span of the current turn."""

    def __init__(self, span: Any, start: int, attrs: dict[str, Any]):
        self.span = span
        self.start = start
        self.end: int | None = None  # when the answer arrived (the first event after it)
        self.attrs = attrs
        self.text: list[str] = []
        self.calls: list[dict[str, Any]] = []


class GenAIObserver:
    """Turns one run's events into GenAI spans and metrics."""

    def __init__(self, agent: Agent, cfg: RunConfig, tracer: Any, instruments: Any):
        from .tracing import Redactor

        self.api = _api()
        self.tracer = tracer
        self.instruments: _Instruments | None = instruments
        self.agent_name = agent.name
        self.instructions = agent.instructions
        self.resumable = agent.store is not None
        self.cfg = cfg  # read as the run goes: its tools and settings may change
        self.folder = Path(cfg.artifacts.dir)
        self.content = capture_content()
        self.redactor = Redactor()
        self.run: Any = None
        self.run_ctx: Any = None
        self.run_start = 0.0
        self.model_attrs: dict[str, Any] = {}
        self.chat: _Chat | None = None
        self.tools: dict[str, tuple[Any, int, dict[str, Any]]] = {}
        self.closed = False

    @classmethod
    def for_run(cls, agent: Agent, cfg: RunConfig) -> GenAIObserver | None:
        """An observer when OpenTelemetry is installed and a tracer or meter provider
        is configured; else ``None`` (nothing is recorded, nothing costs)."""
        api = _api()
        if api is None:
            return None
        trace, metrics, _, _ = api
        tracer_provider = trace.get_tracer_provider()
        meter_provider = metrics.get_meter_provider()
        tracing = not isinstance(tracer_provider, trace.ProxyTracerProvider)
        metering = type(meter_provider).__name__ not in ("_ProxyMeterProvider", "NoOpMeterProvider")
        if not (tracing or metering):
            return None
        from . import __version__

        tracer = tracer_provider.get_tracer("agentsdk", __version__) if tracing else None
        instruments = None
        if metering:
            key = id(meter_provider)
            if key not in _instruments:
                _instruments[key] = _Instruments(meter_provider.get_meter("agentsdk", __version__))
            instruments = _instruments[key]
        return cls(agent, cfg, tracer, instruments)

    # -- the observer protocol -------------------------------------------------------

    def write(self, event: Event) -> None:
        """Update the spans for one event (never raises into the run)."""
        try:
            self._on(event)
        except Exception:  # telemetry must not break a run
            _log.exception("agentsdk: OpenTelemetry observer failed on %s", type(event).__name__)

    def close(self) -> None:
        """End whatever is still open (a run cancelled without a last event)."""
        if not self.closed:
            try:
                self._finish_all("cancelled", "the run ended without a final event")
            except Exception:
                _log.exception("agentsdk: OpenTelemetry observer failed to close")

    # -- events ----------------------------------------------------------------------

    def _on(self, event: Event) -> None:
        if isinstance(event, TextDelta):
            if self.chat is not None and self.content:
                self.chat.text.append(event.text)
            return
        chat = self.chat
        if chat is not None and chat.end is None and not isinstance(event, ModelRequestStarted):
            chat.end = time.time_ns()  # the model answered just before this event
        if isinstance(event, RunStarted):
            self._run_started(event)
        elif isinstance(event, ModelRequestStarted):
            self._chat_started(event)
        elif isinstance(event, ToolCallStarted):
            self._tool_started(event)
        elif isinstance(event, ImageProduced):
            entry = self.tools.get(event.call_id)
            if entry is not None:
                entry[0].add_event(
                    "agentsdk.image", {"path": event.path, "media_type": event.media_type}
                )
        elif isinstance(event, ToolCallFinished):
            self._tool_finished(event)
        elif isinstance(event, TurnFinished):
            self._chat_finished(event)
        elif isinstance(event, RunPaused):
            self._end_chat()
            self._save_context()
            if self.run is not None:
                self.run.set_attribute("agentsdk.status", "awaiting_approval")
            self._end_run(None)
        elif isinstance(event, RunFinished):
            self._end_chat()
            if self.run is not None:
                usage = event.usage
                self.run.set_attribute("gen_ai.usage.input_tokens", usage.input_tokens)
                self.run.set_attribute("gen_ai.usage.output_tokens", usage.output_tokens)
                if event.result is not None:
                    self.run.set_attribute(
                        "agentsdk.cost_usd", cost_of(event.result.usage_by_model).usd
                    )
                if self.content:
                    text = (
                        event.output
                        if isinstance(event.output, str)
                        else json.dumps(self.redactor.data(_jsonable(event.output)))
                    )
                    self.run.set_attribute(
                        "gen_ai.output.messages", _messages("assistant", self.redactor.text(text))
                    )
            self._end_run(None)
        elif isinstance(event, RunFailed):
            self._finish_all(event.error_type, event.message)

    def _run_started(self, event: RunStarted) -> None:
        trace, _, context, _ = self.api
        scheme, model = _split_model(event.model)
        self.model_attrs = {"gen_ai.request.model": model}
        if scheme is not None:
            self.model_attrs["gen_ai.provider.name"] = _provider_name(scheme)
        self.run_start = time.perf_counter()
        if self.tracer is None:
            return
        parent = context.get_current()
        links = []
        if event.resumed:
            saved = self._load_context()
            if saved is not None:
                current = trace.get_current_span(parent).get_span_context()
                if current.is_valid:  # the caller's span, linked: the run keeps its own trace
                    links.append(trace.Link(current))
                parent = saved
        attrs: dict[str, Any] = {
            "gen_ai.operation.name": "invoke_agent",
            "gen_ai.agent.name": event.agent,
            "gen_ai.conversation.id": event.run_id,
            "agentsdk.run_id": event.run_id,
            "agentsdk.resumed": event.resumed,
            **self.model_attrs,
        }
        if self.content:
            if self.instructions:
                attrs["gen_ai.system_instructions"] = json.dumps(
                    [{"type": "text", "content": self.redactor.text(self.instructions)}]
                )
            if event.prompt:
                attrs["gen_ai.input.messages"] = _messages("user", self.redactor.text(event.prompt))
        self.run = self.tracer.start_span(
            f"invoke_agent {event.agent}",
            context=parent,
            kind=trace.SpanKind.INTERNAL,
            attributes=attrs,
            links=links,
        )
        self.run_ctx = trace.set_span_in_context(self.run, parent)
        if self.resumable and not event.resumed:
            self._save_context()

    def _chat_started(self, event: ModelRequestStarted) -> None:
        self._end_chat()
        scheme, model = _split_model(event.model)
        attrs: dict[str, Any] = {
            "gen_ai.operation.name": "chat",
            "gen_ai.request.model": model,
            "agentsdk.turn": event.turn,
        }
        if scheme is not None:
            attrs["gen_ai.provider.name"] = _provider_name(scheme)
        if event.tier is not None:
            attrs["agentsdk.tier"] = event.tier
        s = self.cfg.settings
        for key, value in (
            ("gen_ai.request.temperature", s.temperature),
            ("gen_ai.request.max_tokens", s.max_tokens),
            ("gen_ai.request.seed", s.seed),
        ):
            if value is not None:
                attrs[key] = value
        start = time.time_ns()
        span = None
        if self.tracer is not None:
            span = self.tracer.start_span(
                f"chat {model}",
                context=self.run_ctx,
                kind=self.api[0].SpanKind.CLIENT,
                attributes=attrs,
                start_time=start,
            )
        self.chat = _Chat(span, start, attrs)

    def _chat_finished(self, event: TurnFinished) -> None:
        chat, self.chat = self.chat, None
        if chat is None:
            return
        end = chat.end or time.time_ns()
        _, served = _split_model(event.model)
        usage = event.usage
        attrs = {
            "gen_ai.response.model": served,
            "gen_ai.usage.input_tokens": usage.input_tokens,
            "gen_ai.usage.output_tokens": usage.output_tokens,
        }
        if usage.cache_read_tokens:
            attrs["gen_ai.usage.cache_read.input_tokens"] = usage.cache_read_tokens
        if usage.cache_write_tokens:
            attrs["gen_ai.usage.cache_creation.input_tokens"] = usage.cache_write_tokens
        if event.finish_reason:
            attrs["gen_ai.response.finish_reasons"] = [event.finish_reason]
        cost = turn_cost(event.model, usage)
        if cost is not None:
            attrs["agentsdk.cost_usd"] = cost
        if chat.span is not None:
            chat.span.set_attributes(attrs)
            if self.content and (chat.text or chat.calls):
                parts: list[dict[str, Any]] = []
                if chat.text:
                    parts.append(
                        {"type": "text", "content": self.redactor.text("".join(chat.text))}
                    )
                parts.extend(chat.calls)
                message = {
                    "role": "assistant",
                    "parts": parts,
                    "finish_reason": event.finish_reason or "",
                }
                chat.span.set_attribute("gen_ai.output.messages", json.dumps([message]))
            chat.span.end(end_time=end)
        if self.instruments is not None:
            metric_attrs = {
                "gen_ai.operation.name": "chat",
                "gen_ai.request.model": chat.attrs["gen_ai.request.model"],
                "gen_ai.response.model": served,
            }
            if "gen_ai.provider.name" in chat.attrs:
                metric_attrs["gen_ai.provider.name"] = chat.attrs["gen_ai.provider.name"]
            self.instruments.chat.record((end - chat.start) / 1e9, metric_attrs)
            self.instruments.tokens.record(
                usage.input_tokens, {**metric_attrs, "gen_ai.token.type": "input"}
            )
            self.instruments.tokens.record(
                usage.output_tokens, {**metric_attrs, "gen_ai.token.type": "output"}
            )

    def _end_chat(self, error: tuple[str, str] | None = None) -> None:
        chat, self.chat = self.chat, None
        if chat is None or chat.span is None:
            return
        if error is not None:
            self._error(chat.span, *error)
        chat.span.end(end_time=chat.end or time.time_ns())

    def _tool_started(self, event: ToolCallStarted) -> None:
        if self.chat is not None and self.content:
            self.chat.calls.append(
                {"type": "tool_call", "id": event.call_id, "name": event.name,
                 "arguments": self.redactor.data(_jsonable(event.arguments))}
            )  # fmt: skip
        attrs: dict[str, Any] = {
            "gen_ai.operation.name": "execute_tool",
            "gen_ai.tool.name": event.name,
            "gen_ai.tool.call.id": event.call_id,
            "gen_ai.tool.type": "function",
            "agentsdk.turn": event.turn,
        }
        tool = self.cfg.tools.get(event.name)
        description = tool.description if tool is not None else None
        if description:
            attrs["gen_ai.tool.description"] = description.split("\n\n")[0][:500]
        if self.content:
            attrs["gen_ai.tool.call.arguments"] = json.dumps(
                self.redactor.data(_jsonable(event.arguments)), ensure_ascii=False
            )
        start = time.time_ns()
        span = None
        if self.tracer is not None:
            span = self.tracer.start_span(
                f"execute_tool {event.name}",
                context=self.run_ctx,
                kind=self.api[0].SpanKind.INTERNAL,
                attributes=attrs,
                start_time=start,
            )
        self.tools[event.call_id] = (span, start, attrs)

    def _tool_finished(self, event: ToolCallFinished) -> None:
        entry = self.tools.pop(event.call_id, None)
        if entry is None:
            return
        span, start, _ = entry
        # the call's own clock: the events of a turn's calls come after all of them ran
        end = start + int(event.duration * 1e9)
        if span is not None:
            span.set_attribute("agentsdk.duration_s", event.duration)
            if self.content:
                span.set_attribute(
                    "gen_ai.tool.call.result", self.redactor.text(event.text or event.preview)
                )
            if event.is_error:
                self._error(span, "tool_error", self.redactor.text(event.preview))
            span.end(end_time=end)
        if self.instruments is not None:
            attrs = {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": event.name}
            if event.is_error:
                attrs["error.type"] = "tool_error"
            self.instruments.tool.record(event.duration, attrs)

    def _finish_all(self, error_type: str, message: str) -> None:
        for call_id in list(self.tools):
            span, _, _ = self.tools.pop(call_id)
            if span is not None:
                self._error(span, error_type, message)
                span.end()
        self._end_chat((error_type, message))
        if self.run is not None:
            self._error(self.run, error_type, message)
        self._end_run(error_type)

    def _end_run(self, error_type: str | None) -> None:
        if self.closed:
            return
        self.closed = True
        if self.run is not None:
            self.run.end()
        if self.instruments is not None:
            attrs = {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": self.agent_name}
            attrs.update(self.model_attrs)
            if error_type is not None:
                attrs["error.type"] = error_type
            self.instruments.agent.record(time.perf_counter() - self.run_start, attrs)

    def _error(self, span: Any, error_type: str, message: str) -> None:
        trace = self.api[0]
        span.set_attribute("error.type", error_type)
        span.set_status(trace.Status(trace.StatusCode.ERROR, self.redactor.text(message)[:500]))

    # -- resumed runs ----------------------------------------------------------------

    def _save_context(self) -> None:
        if self.run_ctx is None:
            return
        carrier: dict[str, str] = {}
        self.api[3].inject(carrier, context=self.run_ctx)
        if carrier:
            self.folder.mkdir(parents=True, exist_ok=True)
            (self.folder / CONTEXT_FILE).write_text(json.dumps(carrier), encoding="utf-8")

    def _load_context(self) -> Any:
        try:
            carrier = json.loads((self.folder / CONTEXT_FILE).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        if not isinstance(carrier, dict):
            return None
        ctx = self.api[3].extract({str(k): str(v) for k, v in carrier.items()})
        span = self.api[0].get_current_span(ctx)
        return ctx if span.get_span_context().is_valid else None


def _messages(role: str, text: str) -> str:
    return json.dumps(
        [{"role": role, "parts": [{"type": "text", "content": text}]}], ensure_ascii=False
    )


def _jsonable(value: Any) -> Any:
    from pydantic_core import to_jsonable_python

    return to_jsonable_python(value, fallback=str)
