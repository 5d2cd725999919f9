"""The objects the loop builds without re-validating are the ones validation would build."""

from __future__ import annotations

import pytest
from agentsdk.testing import FunctionModel, ScriptedModel
from agentsdk.tools import to_parts

from agentsdk import (
    Agent,
    Message,
    ModelRequest,
    ModelResponse,
    TextPart,
    Tiers,
    ToolCallPart,
    Usage,
    tool,
)

pytestmark = pytest.mark.anyio


@tool
async def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@pytest.mark.parametrize("value", ["hi", 5, -12, True, 1.5, None])
def test_tool_results_are_the_parts_validation_makes(value: object) -> None:
    (part,) = to_parts(value)
    made = TextPart(text=part.text)
    assert part == made and repr(part) == repr(made)
    assert part.model_fields_set == made.model_fields_set
    assert part.model_dump_json() == made.model_dump_json()


def test_adding_usage_gives_a_plain_usage() -> None:
    total = Usage(input_tokens=1, requests=1) + Usage(output_tokens=2, cache_read_tokens=3)
    assert total == Usage(
        input_tokens=1, output_tokens=2, cache_read_tokens=3, cache_write_tokens=0, requests=1
    )
    assert total.model_fields_set == set(Usage.model_fields)
    total.requests += 1  # still an ordinary, mutable model
    assert total.requests == 2


async def test_messages_and_requests_of_a_run_round_trip() -> None:
    model = ScriptedModel([ToolCallPart(name="add", arguments={"a": 2, "b": 3}), "5"])
    result = await Agent(model, "You add.", tools=[add]).run("2+3?")
    for message in result.messages:
        assert Message.model_validate_json(message.model_dump_json()) == message
        assert message.model_fields_set == {"role", "parts"}
    for request in model.requests:
        assert ModelRequest.model_validate(request.model_dump()) == request
    tool_result = result.messages[3].tool_results[0]
    assert tool_result.model_fields_set == {"call_id", "name", "parts", "is_error"}
    assert repr(tool_result).startswith("ToolResultPart(kind='tool_result', call_id=")


async def test_usage_is_summed_per_model() -> None:
    def answer(request: ModelRequest) -> ModelResponse:
        turn = len(request.messages) // 2
        if turn < 3:
            part = ToolCallPart(name="add", arguments={"a": turn, "b": 1})
            return ModelResponse(parts=[part], usage=Usage(input_tokens=10, requests=1))
        return ModelResponse(parts=[TextPart(text="done")], usage=Usage(output_tokens=7))

    fast, standard = FunctionModel(answer, name="fast"), FunctionModel(answer, name="std")
    tiers = Tiers(
        fast=fast, standard=standard, policy=lambda info: "fast" if info.turn == 1 else "standard"
    )
    result = await Agent(tiers, tools=[add]).run("go")
    assert result.output == "done"
    assert result.usage_by_model == {
        "fast": Usage(input_tokens=10, requests=1),
        "std": Usage(input_tokens=20, output_tokens=7, requests=3),
    }
    assert result.usage == Usage(input_tokens=30, output_tokens=7, requests=4)
    assert result.usage is not result.usage_by_model["std"]
