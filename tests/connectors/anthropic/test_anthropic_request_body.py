"""What AnthropicModel puts on the wire for each feature."""

from __future__ import annotations

import base64

import pytest
from agentsdk.tools import ToolSpec
from agentsdk_anthropic import AnthropicModel
from anthropic_recordings import SECRET_KEY, FakeAnthropic, MakeModel, json_reply, message_body

from agentsdk import (
    ImagePart,
    Message,
    ModelRequest,
    ModelSettings,
    TextPart,
    ToolCallPart,
    ToolResultPart,
)

PNG = b"\x89PNG\r\n\x1a\n-fake-png-bytes-for-wire-tests"
WEATHER = ToolSpec(
    name="get_weather",
    description="Current weather for a city.",
    parameters={"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
)
PNG_BLOCK = {
    "type": "image",
    "source": {"type": "base64", "media_type": "image/png", "data": base64.b64encode(PNG).decode()},
}
"""How PNG travels: an inline base64 image block."""
OK = json_reply(200, message_body([{"type": "text", "text": "ok"}]))


def _request(messages: list[Message], **kwargs: object) -> ModelRequest:
    return ModelRequest(messages=messages, **kwargs)


@pytest.mark.anyio
async def test_system_user_text_and_image_headers_and_default_max_tokens(
    make_model: MakeModel,
) -> None:
    model, fake = make_model(OK)
    await model.request(
        _request(
            [
                Message.system("You are terse."),
                Message(role="user", parts=[TextPart(text="What is this?"), ImagePart(data=PNG)]),
            ]
        )
    )
    sent = fake.requests[0]
    assert sent.method == "POST" and sent.url.path == "/v1/messages"
    assert sent.headers["x-api-key"] == SECRET_KEY
    assert sent.headers["anthropic-version"] == "2023-06-01"
    body = fake.body()
    assert body == {
        "model": "claude-sonnet-4-5",
        "max_tokens": 8192,
        "system": [{"type": "text", "text": "You are terse."}],
        "messages": [
            {
                "role": "user",
                "content": [
                    {"type": "text", "text": "What is this?"},
                    PNG_BLOCK,
                ],
            }
        ],
    }


@pytest.mark.anyio
async def test_tools_are_declared_with_input_schema(make_model: MakeModel) -> None:
    model, fake = make_model(OK)
    await model.request(_request([Message.user("Weather in Paris?")], tools=[WEATHER]))
    body = fake.body()
    assert body["tools"] == [
        {
            "name": "get_weather",
            "description": "Current weather for a city.",
            "input_schema": WEATHER.parameters,
        }
    ]
    assert body["tool_choice"] == {"type": "auto"}


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("choice", "parallel", "wire"),
    [
        ("auto", None, {"type": "auto"}),
        ("required", None, {"type": "any"}),
        ("none", None, {"type": "none"}),
        ("get_weather", None, {"type": "tool", "name": "get_weather"}),
        ("required", False, {"type": "any", "disable_parallel_tool_use": True}),
    ],
)
async def test_tool_choice_mapping(
    make_model: MakeModel, choice: str, parallel: bool | None, wire: dict[str, object]
) -> None:
    model, fake = make_model(OK)
    settings = ModelSettings(tool_choice=choice, parallel_tool_calls=parallel)
    await model.request(_request([Message.user("hi")], tools=[WEATHER], settings=settings))
    assert fake.body()["tool_choice"] == wire


@pytest.mark.anyio
async def test_no_tools_means_no_tool_choice(make_model: MakeModel) -> None:
    model, fake = make_model(OK)
    await model.request(
        _request([Message.user("hi")], settings=ModelSettings(tool_choice="required"))
    )
    assert "tools" not in fake.body() and "tool_choice" not in fake.body()


@pytest.mark.anyio
async def test_tool_history_groups_results_into_one_user_turn_with_images_inside(
    make_model: MakeModel,
) -> None:
    model, fake = make_model(OK)
    calls = [
        ToolCallPart(id="toolu_A", name="get_weather", arguments={"city": "Paris"}),
        ToolCallPart(id="toolu_B", name="render", arguments={}),
    ]
    history = [
        Message.user("Paris weather, and draw it"),
        Message(role="assistant", parts=[TextPart(text="On it."), *calls]),
        Message(
            role="tool",
            parts=[
                ToolResultPart(call_id="toolu_A", name="get_weather", parts=[TextPart(text="18C")])
            ],
        ),
        Message(
            role="tool",
            parts=[
                ToolResultPart(
                    call_id="toolu_B",
                    name="render",
                    parts=[TextPart(text="blank frame"), ImagePart(data=PNG)],
                    is_error=True,
                )
            ],
        ),
        Message.user("Be brief."),
    ]
    await model.request(_request(history, tools=[WEATHER]))
    messages = fake.body()["messages"]
    assert [m["role"] for m in messages] == ["user", "assistant", "user"]
    assert messages[1]["content"] == [
        {"type": "text", "text": "On it."},
        {"type": "tool_use", "id": "toolu_A", "name": "get_weather", "input": {"city": "Paris"}},
        {"type": "tool_use", "id": "toolu_B", "name": "render", "input": {}},
    ]
    assert messages[2]["content"] == [
        {
            "type": "tool_result",
            "tool_use_id": "toolu_A",
            "content": [{"type": "text", "text": "18C"}],
        },
        {
            "type": "tool_result",
            "tool_use_id": "toolu_B",
            "content": [{"type": "text", "text": "blank frame"}, PNG_BLOCK],
            "is_error": True,
        },
        {"type": "text", "text": "Be brief."},
    ]


@pytest.mark.anyio
async def test_tool_ids_are_made_safe_consistently(make_model: MakeModel) -> None:
    model, fake = make_model(OK)
    history = [
        Message.user("go"),
        Message(
            role="assistant", parts=[ToolCallPart(id="fc.1:x", name="get_weather", arguments={})]
        ),
        Message(
            role="tool", parts=[ToolResultPart(call_id="fc.1:x", name="get_weather", parts=[])]
        ),
    ]
    await model.request(_request(history, tools=[WEATHER]))
    messages = fake.body()["messages"]
    assert messages[1]["content"][0]["id"] == "fc_1_x"
    assert messages[2]["content"][0] == {"type": "tool_result", "tool_use_id": "fc_1_x"}


@pytest.mark.anyio
async def test_settings_temperature_max_tokens_and_extra(make_model: MakeModel) -> None:
    model, fake = make_model(OK)
    settings = ModelSettings(
        temperature=0.2, max_tokens=300, seed=4, extra={"top_k": 5, "stop_sequences": ["END"]}
    )
    await model.request(_request([Message.user("hi")], settings=settings))
    body = fake.body()
    assert (body["temperature"], body["max_tokens"], body["top_k"]) == (0.2, 300, 5)
    assert body["stop_sequences"] == ["END"]
    assert "seed" not in body  # the Messages API has no seed


SCHEMA = {
    "type": "object",
    "properties": {"city": {"type": "string"}, "temp_c": {"type": "number"}},
    "required": ["city", "temp_c"],
}


@pytest.mark.anyio
async def test_output_schema_forces_the_output_tool_and_returns_its_input_as_json_text(
    make_model: MakeModel,
) -> None:
    reply = message_body(
        [
            {
                "type": "tool_use",
                "id": "toolu_out",
                "name": "Forecast",
                "input": {"city": "Oslo", "temp_c": 3},
            }
        ],
        stop_reason="tool_use",
    )
    model, fake = make_model(json_reply(200, reply))
    response = await model.request(
        _request([Message.user("Oslo?")], output_schema=SCHEMA, output_name="Forecast")
    )
    body = fake.body()
    assert body["tools"][-1]["name"] == "Forecast"
    assert body["tools"][-1]["input_schema"] == SCHEMA
    assert body["tool_choice"] == {"type": "tool", "name": "Forecast"}
    assert response.tool_calls == []
    assert response.text == '{"city": "Oslo", "temp_c": 3}'
    assert response.finish_reason == "stop"


@pytest.mark.anyio
async def test_output_schema_with_tools_requires_some_tool(make_model: MakeModel) -> None:
    model, fake = make_model(OK)
    await model.request(_request([Message.user("Oslo?")], tools=[WEATHER], output_schema=SCHEMA))
    body = fake.body()
    assert [t["name"] for t in body["tools"]] == ["get_weather", "final_result"]
    assert body["tool_choice"] == {"type": "any"}


@pytest.mark.anyio
async def test_output_schema_with_tools_off_sends_no_output_tool(
    make_model: MakeModel,
) -> None:
    model, fake = make_model(OK)
    await model.request(
        _request(
            [Message.system("Be exact. Reply with JSON."), Message.user("Oslo?")],
            tools=[WEATHER],
            output_schema=SCHEMA,
            settings=ModelSettings(tool_choice="none"),
        )
    )
    body = fake.body()
    assert [t["name"] for t in body["tools"]] == ["get_weather"]
    assert body["tool_choice"] == {"type": "none"}
    assert body["system"] == [{"type": "text", "text": "Be exact. Reply with JSON."}]


@pytest.mark.anyio
async def test_unsupported_image_format_becomes_a_note_not_a_400(make_model: MakeModel) -> None:
    model, fake = make_model(OK)
    bmp = ImagePart(data=b"BM-fake", media_type="image/bmp", label="plot.bmp")
    await model.request(_request([Message(role="user", parts=[TextPart(text="look"), bmp])]))
    content = fake.body()["messages"][0]["content"]
    assert content[1] == {
        "type": "text",
        "text": "[image plot.bmp (image/bmp) not shown: unsupported format]",
    }


@pytest.mark.anyio
async def test_claude_3_models_default_to_4096_output_tokens(make_model: MakeModel) -> None:
    model, _ = make_model()
    assert model.default_max_tokens == 8192
    old = AnthropicModel("claude-3-haiku-20240307", api_key="k")
    assert old.default_max_tokens == 4096
    assert AnthropicModel("claude-3-5-haiku-latest", api_key="k").default_max_tokens == 8192
    await old.aclose()


@pytest.mark.anyio
async def test_extra_headers_are_sent(make_model: MakeModel) -> None:
    model, fake = make_model(OK, headers={"anthropic-beta": "some-feature-2025-01-01"})
    await model.request(_request([Message.user("hi")]))
    sent = fake.requests[0].headers
    assert sent["anthropic-beta"] == "some-feature-2025-01-01"
    assert sent["x-api-key"] == SECRET_KEY


@pytest.mark.anyio
async def test_a_key_read_with_its_newline_is_sent_without_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", f"{SECRET_KEY}\n")
    fake = FakeAnthropic([OK])
    model = AnthropicModel("claude-sonnet-4-5", transport=fake.transport)
    try:
        await model.request(_request([Message.user("hi")]))
    finally:
        await model.aclose()
    assert fake.requests[0].headers["x-api-key"] == SECRET_KEY
