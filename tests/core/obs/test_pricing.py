"""The price table: hosted models priced, local ones free, unknown ones said so,
overrides by code and by file, and the cost on RunResult."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from agentsdk.pricing import (
    PRICE_SOURCES,
    PRICES_AS_OF,
    Price,
    cost_of,
    price_for,
    reset_prices,
    set_price,
    turn_cost,
)
from agentsdk.testing import ScriptedModel

from agentsdk import Agent, ModelResponse, TextPart, ToolCallPart, Usage, tool

pytestmark = pytest.mark.anyio


@pytest.fixture(autouse=True)
def fresh_table(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.delenv("AGENTSDK_PRICES", raising=False)
    reset_prices()
    yield
    reset_prices()


def test_a_hosted_model_costs_what_its_vendor_charges() -> None:
    # 1M input of which 200k read from the cache, 100k output, at $2 / $0.50 / $8 per M
    usage = Usage(input_tokens=1_000_000, cache_read_tokens=200_000, output_tokens=100_000)
    assert turn_cost("openai:gpt-4.1", usage) == pytest.approx(0.8 * 2 + 0.2 * 0.5 + 0.1 * 8)
    # Anthropic charges 1.25x input for cache writes: 100k fresh, 50k written, 850k read
    usage = Usage(
        input_tokens=1_000_000,
        cache_read_tokens=850_000,
        cache_write_tokens=50_000,
        output_tokens=10_000,
    )
    assert turn_cost("anthropic:claude-sonnet-4-5", usage) == pytest.approx(
        0.1 * 3 + 0.05 * 3.75 + 0.85 * 0.30 + 0.01 * 15
    )


def test_served_names_with_dates_take_their_longest_prefix() -> None:
    assert price_for("openai:gpt-4.1-2025-04-14") == price_for("openai:gpt-4.1")
    assert price_for("openai:gpt-4.1-mini-2025-04-14") == price_for("openai:gpt-4.1-mini")
    assert price_for("openai:gpt-4.1-mini") != price_for("openai:gpt-4.1")
    assert price_for("anthropic:claude-sonnet-4-5-20250929") == price_for(
        "anthropic:claude-sonnet-4-5"
    )


def test_local_models_are_free_and_unknown_hosted_ones_are_not_guessed() -> None:
    usage = Usage(input_tokens=5000, output_tokens=500)
    for name in ("local:default", "vllm:Qwen/Qwen3-8B", "ollama:qwen3", "llamacpp:x", "scripted"):
        assert turn_cost(name, usage) == 0.0, name
    assert price_for("openai:gpt-9-ultra") is None
    cost = cost_of({"openai:gpt-9-ultra": usage, "openai:gpt-4o-mini": usage})
    assert cost.unpriced == ["openai:gpt-9-ultra"] and not cost.known
    assert cost.usd == pytest.approx((5000 * 0.15 + 500 * 0.60) / 1e6)
    assert "no price for openai:gpt-9-ultra" in str(cost)


def test_the_table_says_when_and_where_its_prices_are_from() -> None:
    assert PRICES_AS_OF[:4].isdigit() and set(PRICE_SOURCES) >= {"openai", "anthropic"}


def test_prices_can_be_overridden_in_code_and_by_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    usage = Usage(input_tokens=2_000_000, output_tokens=1_000_000)
    set_price("openai:gpt-4.1", {"input": 1.0, "output": 2.0})
    assert turn_cost("openai:gpt-4.1", usage) == pytest.approx(4.0)
    reset_prices()
    table = tmp_path / "prices.json"
    table.write_text(json.dumps({"vllm:my-rented-gpu": {"input": 0.5, "output": 0.5}}))
    monkeypatch.setenv("AGENTSDK_PRICES", str(table))
    assert turn_cost("vllm:my-rented-gpu", usage) == pytest.approx(1.5)
    assert price_for("vllm:other") == Price(input=0, output=0)


def test_a_bad_price_file_is_a_clear_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    table = tmp_path / "prices.json"
    table.write_text(json.dumps({"openai:gpt-4.1": {"input": -1, "output": 2}}))
    monkeypatch.setenv("AGENTSDK_PRICES", str(table))
    with pytest.raises(ValueError, match="is not a price table"):
        price_for("openai:gpt-4.1")
    monkeypatch.setenv("AGENTSDK_PRICES", str(tmp_path / "missing.json"))
    with pytest.raises(ValueError, match="cannot be read"):
        price_for("openai:gpt-4.1")


async def test_run_result_reports_the_cost_of_every_model_it_used() -> None:
    @tool
    def lookup(q: str) -> str:
        """Look something up."""
        return "42"

    def turn(parts: list[TextPart | ToolCallPart], model: str, i: int, o: int) -> ModelResponse:
        usage = Usage(input_tokens=i, output_tokens=o, requests=1)
        return ModelResponse(parts=parts, usage=usage, model_name=model)

    model = ScriptedModel(
        [
            turn([ToolCallPart(name="lookup", arguments={"q": "x"})], "openai:gpt-4o", 1000, 50),
            turn([TextPart(text="42")], "openai:gpt-4o-mini", 1200, 5),
        ]
    )
    result = await Agent(model, tools=[lookup]).run("what is x?")
    expected_4o = (1000 * 2.50 + 50 * 10.00) / 1e6
    expected_mini = (1200 * 0.15 + 5 * 0.60) / 1e6
    assert result.cost.by_model == pytest.approx(
        {"openai:gpt-4o": expected_4o, "openai:gpt-4o-mini": expected_mini}
    )
    assert result.cost.usd == pytest.approx(expected_4o + expected_mini)
