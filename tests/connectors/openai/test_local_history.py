"""Superseded "hint:" lines are left out of what a local model is shown: unit rules, and the
prompt the real engine renders from a request."""

from __future__ import annotations

import json

import pytest
from agentsdk_openai import LocalEngine, connect
from agentsdk_openai.local.history import without_superseded_hints

from agentsdk import Message, ModelRequest, TextPart, ToolCallPart, ToolResultPart, ToolSpec

HINT = 'hint: box is cut off on the right (56% outside the frame): call fit_view(names=["box"])'
FIRST = f"added box.\nbox: 2%, right, red, cut off 56% (right)\n{HINT}"
FRAMED = "camera moved to frame box.\nbox: 38%, centre, red"


def _call(n: int, name: str) -> Message:
    return Message(role="assistant", parts=[ToolCallPart(id=f"c{n}", name=name, arguments={})])


def _result(n: int, name: str, *texts: str) -> Message:
    parts = [TextPart(text=t) for t in texts]
    return Message(role="tool", parts=[ToolResultPart(call_id=f"c{n}", name=name, parts=parts)])


def _history(*results: str) -> list[Message]:
    messages = [Message.user("Add a red box and frame it.")]
    for n, text in enumerate(results):
        messages += [_call(n, "fit_view"), _result(n, "fit_view", text, "[image saved at x.png]")]
    return messages


def test_an_older_hint_is_dropped_and_the_newest_kept() -> None:
    shown = without_superseded_hints(_history(FIRST, FRAMED))
    first = shown[2].tool_results[0]
    assert "hint:" not in first.text
    assert "cut off 56% (right)" in first.text  # only the hint line goes
    assert first.parts[1] == TextPart(text="[image saved at x.png]")
    assert shown[4] == _history(FIRST, FRAMED)[4]
    # The newest result's own hint is what the model must act on.
    newest = without_superseded_hints(_history(FRAMED, FIRST))
    assert HINT in newest[4].tool_results[0].text


def test_nothing_to_drop_returns_the_same_list() -> None:
    for messages in (_history(), _history(FIRST), _history(FRAMED, FRAMED)):
        assert without_superseded_hints(messages) is messages
    # "hint:" inside a line is not a hint line.
    quoted = _history("label text: 'hint: none'", FRAMED)
    assert without_superseded_hints(quoted) is quoted


@pytest.mark.anyio
async def test_the_engine_is_shown_the_newest_hint_only(qwen_engine: LocalEngine) -> None:
    model = connect("local:qwen2.5-coder-0.5b")
    tools = [
        ToolSpec(
            name="fit_view",
            description="Frame objects.",
            parameters={"type": "object", "properties": {}},
        )
    ]
    for history, hinted in ((_history(FIRST, FRAMED), False), (_history(FRAMED, FIRST), True)):
        request = ModelRequest(messages=history, tools=tools)
        for constrained in (True, False):
            body = json.loads(model.chat_body(request, constrained=constrained, stream=False))
            rendered = await model.post_engine("/apply-template", body)  # type: ignore[attr-defined]
            prompt = rendered["prompt"]
            assert prompt.count("cut off 56% (right)") == 1
            assert (HINT in prompt) is hinted
            assert ("The result has a hint" in prompt) is hinted
            assert '\n{"name": "fit_view"' in prompt  # the tool list starts its own line
