"""Token traces on the real engine: the ids it evaluated and sampled, with logprobs."""

from __future__ import annotations

import json

import pytest
from agentsdk.tools import ToolSpec
from agentsdk_openai import LocalEngine, connect

from agentsdk import Message, ModelRequest, ModelResponse, ModelSettings

pytestmark = [pytest.mark.anyio, pytest.mark.slow]

ADD = ToolSpec(
    name="add",
    description="Add two numbers.",
    parameters={
        "type": "object",
        "properties": {"a": {"type": "number"}, "b": {"type": "number"}},
        "required": ["a", "b"],
    },
)
EOS = "<|im_end|>"


def _request(prompt: str, *, record: bool, choice: str = "auto") -> ModelRequest:
    return ModelRequest(
        messages=[Message.system("You are a calculator."), Message.user(prompt)],
        tools=[ADD],
        settings=ModelSettings(
            temperature=0, max_tokens=48, tool_choice=choice, record_tokens=record
        ),
    )


async def test_a_traced_tool_call_decodes_to_what_was_evaluated_and_sampled(
    qwen_engine: LocalEngine,
) -> None:
    model = connect("local:qwen2.5-coder-0.5b")
    traced = await model.request(_request("Add 2 and 40.", record=True))
    plain = await model.request(_request("Add 2 and 40.", record=False))
    trace = traced.token_trace
    assert trace is not None and plain.token_trace is None

    prompt = await model.detokenize(trace.prompt_ids)  # type: ignore[attr-defined]
    assert prompt.startswith("<|im_start|>system\nYou are a calculator.")
    assert '"name": "add"' in prompt and "Add 2 and 40." in prompt
    assert prompt.endswith("<|im_start|>assistant\n")
    # The chat endpoint, left to render and count the same request itself, agrees.
    assert len(trace.prompt_ids) == plain.usage.input_tokens == traced.usage.input_tokens

    response = await model.detokenize(trace.response_ids)  # type: ignore[attr-defined]
    assert response.endswith(EOS)  # the engine's own end of turn is part of what it sampled
    sampled = json.loads(response.removesuffix(EOS))
    (call,) = traced.tool_calls
    assert (
        sampled
        == {"name": call.name, "arguments": call.arguments}
        == {
            "name": "add",
            "arguments": {"a": 2, "b": 40},
        }
    )
    assert [(c.name, c.arguments) for c in plain.tool_calls] == [(call.name, call.arguments)]

    assert trace.response_logprobs is not None
    assert len(trace.response_logprobs) == len(trace.response_ids) == traced.usage.output_tokens
    assert all(p <= 0.0 for p in trace.response_logprobs)
    assert sum(trace.response_logprobs) < 0.0  # not all certain: real numbers, not zeros
    await model.aclose()


async def test_a_traced_text_answer_and_a_streamed_one(qwen_engine: LocalEngine) -> None:
    model = connect("local:qwen2.5-coder-0.5b")
    request = _request("Say the word hello and nothing else.", record=True, choice="none")
    items = [i async for i in model.stream(request)]
    await model.aclose()
    final = items[-1]
    assert isinstance(final, ModelResponse) and final.token_trace is not None
    trace = final.token_trace
    text = await model.detokenize(trace.response_ids)  # type: ignore[attr-defined]
    assert text.removesuffix(EOS) == final.text and final.text.strip()
    assert final.tool_calls == []
    prompt = await model.detokenize(trace.prompt_ids)  # type: ignore[attr-defined]
    assert prompt.endswith(
        "Say the word hello and nothing else.<|im_end|>\n<|im_start|>assistant\n"
    )
    assert trace.response_logprobs is not None
    assert len(trace.response_logprobs) == len(trace.response_ids)
    assert all(p <= 0.0 for p in trace.response_logprobs)
