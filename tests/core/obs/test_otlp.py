"""Spans and metrics sent with the real OTLP/HTTP exporter to a receiver on 127.0.0.1,
configured the standard way (``OTEL_EXPORTER_OTLP_*`` environment variables)."""

from __future__ import annotations

import pytest
from agentsdk.testing import ScriptedModel
from conftest import install_providers, remove_providers
from otlp_receiver import OTLPReceiver, attributes

from agentsdk import Agent, ModelResponse, TextPart, ToolCallPart, Usage, tool

pytestmark = pytest.mark.anyio


async def test_spans_and_metrics_reach_an_otlp_endpoint(monkeypatch: pytest.MonkeyPatch) -> None:
    from opentelemetry.exporter.otlp.proto.http.metric_exporter import OTLPMetricExporter
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    from opentelemetry.sdk.metrics import MeterProvider
    from opentelemetry.sdk.metrics.export import PeriodicExportingMetricReader
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor

    @tool
    def add(a: int, b: int) -> int:
        """Add two numbers."""
        return a + b

    usage = Usage(input_tokens=321, output_tokens=12, requests=1)
    model = ScriptedModel(
        [
            ModelResponse(
                parts=[ToolCallPart(name="add", arguments={"a": 2, "b": 3}, id="call_1")],
                usage=usage,
                model_name="anthropic:claude-haiku-4-5",
                finish_reason="tool_use",
            ),
            ModelResponse(
                parts=[TextPart(text="5")],
                usage=usage,
                model_name="anthropic:claude-haiku-4-5",
                finish_reason="end_turn",
            ),
        ],
        name="anthropic:claude-haiku-4-5",
    )
    with OTLPReceiver(token="collector-token") as rx:
        monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", rx.endpoint)
        monkeypatch.setenv("OTEL_EXPORTER_OTLP_HEADERS", "Authorization=Bearer collector-token")
        resource = Resource.create({"service.name": "adder"})
        tracer_provider = TracerProvider(resource=resource)
        tracer_provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
        reader = PeriodicExportingMetricReader(
            OTLPMetricExporter(), export_interval_millis=3_600_000
        )
        meter_provider = MeterProvider(resource=resource, metric_readers=[reader])
        install_providers(tracer_provider, meter_provider)
        try:
            result = await Agent(model, tools=[add]).run("2 + 3?")
            assert tracer_provider.force_flush(30_000) and meter_provider.force_flush(30_000)
        finally:
            remove_providers()
            tracer_provider.shutdown()
            meter_provider.shutdown()
        spans = rx.spans()
        assert rx.rejected == 0
    assert result.output == "5"
    names = sorted(s.name for s in spans)
    assert names == [
        "chat claude-haiku-4-5",
        "chat claude-haiku-4-5",
        "execute_tool add",
        "invoke_agent agent",
    ]
    run = next(s for s in spans if s.name.startswith("invoke_agent"))
    assert {s.trace_id for s in spans} == {run.trace_id}
    assert all(s.parent_span_id == run.span_id for s in spans if s is not run)
    chat = attributes(next(s for s in spans if s.name.startswith("chat")))
    assert chat["gen_ai.provider.name"] == "anthropic"
    assert chat["gen_ai.usage.input_tokens"] == 321 and chat["gen_ai.usage.output_tokens"] == 12
    assert chat["agentsdk.cost_usd"] == pytest.approx((321 * 1.00 + 12 * 5.00) / 1e6)
    tool_span = attributes(next(s for s in spans if s.name.startswith("execute_tool")))
    assert tool_span["gen_ai.tool.call.id"] == "call_1"
    assert {
        "gen_ai.client.token.usage",
        "gen_ai.client.operation.duration",
        "gen_ai.execute_tool.duration",
        "gen_ai.invoke_agent.duration",
    } <= rx.metric_names()


async def test_a_receiver_that_refuses_the_token_gets_nothing_and_the_run_still_works(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor

    with OTLPReceiver(token="the-right-one") as rx:
        exporter = OTLPSpanExporter(
            endpoint=f"{rx.endpoint}/v1/traces", headers={"Authorization": "Bearer wrong"}
        )
        provider = TracerProvider()
        provider.add_span_processor(SimpleSpanProcessor(exporter))
        install_providers(provider, None)
        try:
            result = await Agent(ScriptedModel(["fine"])).run("hi")
        finally:
            remove_providers()
            provider.shutdown()
        assert result.output == "fine"
        assert rx.spans() == [] and rx.rejected >= 1
