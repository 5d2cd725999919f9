"""How each framework (and each raw-HTTP floor) runs the scripted task against the fake server.

A client factory takes the server's base URL (``http://127.0.0.1:PORT/v1``) and returns an
``HttpClient``: ``run(turns, stream)`` does one whole run and returns the final text. The model
name ``bench-t<turns>`` tells the server how many tool calls to ask for before it answers.
Each framework talks to the server through its own OpenAI-compatible client with that
client's default settings, as a user would.
"""

from __future__ import annotations

import json
import os
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from _overhead_inprocess import add

ADD_SCHEMA = {
    "type": "function",
    "function": {
        "name": "add",
        "description": "Add two integers.",
        "parameters": {
            "type": "object",
            "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
            "required": ["a", "b"],
        },
    },
}
PROMPT = "Add the numbers with the add tool, one call per turn."


@dataclass
class HttpClient:
    """One framework wired to the server: a run function and what to close afterwards."""

    run: Callable[[int, bool], Awaitable[str]]
    close: Callable[[], Awaitable[None]]
    transport: str


def model_name(turns: int) -> str:
    """The model name that scripts the fake server for ``turns`` tool calls."""
    return f"bench-t{turns}"


# --- raw floors: one POST per turn, no framework --------------------------------------------


class _RawPoster:
    """The smallest OpenAI-compatible exchange over some HTTP client library."""

    def __init__(self, base_url: str, variant: str) -> None:
        self.url = f"{base_url}/chat/completions"
        self.variant = variant
        self.headers = {"content-type": "application/json", "authorization": "Bearer bench"}
        self.client: Any = None

    def _open(self) -> Any:
        if self.variant == "aiohttp":
            import aiohttp

            return aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=0))
        module_name = "httpx2" if self.variant.startswith("httpx2") else "httpx"
        httpx = __import__(module_name)
        unlimited = httpx.Limits(max_connections=None, max_keepalive_connections=None)
        if self.variant in ("httpx", "httpx2"):
            return httpx.AsyncClient(timeout=600)
        if self.variant in ("httpx-unlimited", "httpx2-unlimited"):
            return httpx.AsyncClient(timeout=600, limits=unlimited)
        if self.variant == "httpx-h2":
            return httpx.AsyncClient(timeout=600, http1=False, http2=True)
        if self.variant == "httpx-aiohttp":
            import aiohttp
            from httpx_aiohttp import AiohttpTransport

            session = aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=0))
            return httpx.AsyncClient(timeout=600, transport=AiohttpTransport(client=session))
        raise ValueError(f"unknown floor variant {self.variant}")

    async def exchange(self, payload: dict[str, Any], stream: bool) -> dict[str, Any]:
        """POST one request; return the assistant message (rebuilt from chunks when streaming)."""
        if self.client is None:
            self.client = self._open()
        body = json.dumps(payload).encode()
        if self.variant == "aiohttp":
            async with self.client.post(self.url, data=body, headers=self.headers) as response:
                response.raise_for_status()
                raw = await response.read()
        else:
            response = await self.client.post(self.url, content=body, headers=self.headers)
            response.raise_for_status()
            raw = response.content
        if not stream:
            message: dict[str, Any] = json.loads(raw)["choices"][0]["message"]
            return message
        return _message_from_sse(raw)

    async def close(self) -> None:
        if self.client is not None:
            await self.client.close() if self.variant == "aiohttp" else await self.client.aclose()


def _message_from_sse(raw: bytes) -> dict[str, Any]:
    text: list[str] = []
    calls: dict[int, dict[str, Any]] = {}
    for line in raw.split(b"\n"):
        if not line.startswith(b"data: ") or line == b"data: [DONE]":
            continue
        for choice in json.loads(line[6:])["choices"]:
            delta = choice["delta"]
            text.append(delta.get("content") or "")
            for piece in delta.get("tool_calls") or []:
                call = calls.setdefault(
                    piece["index"], {"type": "function", "function": {"arguments": ""}}
                )
                call["id"] = piece.get("id") or call.get("id")
                function = piece.get("function") or {}
                if function.get("name"):
                    call["function"]["name"] = function["name"]
                call["function"]["arguments"] += function.get("arguments") or ""
    message: dict[str, Any] = {"role": "assistant", "content": "".join(text) or None}
    if calls:
        message["tool_calls"] = [calls[index] for index in sorted(calls)]
    return message


def raw_floor(variant: str) -> Callable[[str], HttpClient]:
    """A factory for the raw floor over ``variant`` (httpx, httpx-h2, httpx-aiohttp, aiohttp...)."""

    def factory(base_url: str) -> HttpClient:
        from pydantic import TypeAdapter
        from typing_extensions import TypedDict

        class AddArguments(TypedDict):
            a: int
            b: int

        validator = TypeAdapter(AddArguments)
        poster = _RawPoster(base_url, variant)

        async def run(turns: int, stream: bool) -> str:
            messages: list[dict[str, Any]] = [{"role": "user", "content": PROMPT}]
            while True:
                payload: dict[str, Any] = {
                    "model": model_name(turns),
                    "messages": messages,
                    "tools": [ADD_SCHEMA],
                }
                if stream:
                    payload["stream"] = True
                message = await poster.exchange(payload, stream)
                messages.append(message)
                if not message.get("tool_calls"):
                    return str(message["content"])
                for call in message["tool_calls"]:
                    arguments = validator.validate_json(call["function"]["arguments"])
                    result = await add(**arguments)
                    messages.append(
                        {"role": "tool", "tool_call_id": call["id"], "content": str(result)}
                    )

        return HttpClient(run=run, close=poster.close, transport=variant)

    return factory


# --- frameworks ---------------------------------------------------------------------------


def _agentsdk_transport(variant: str) -> Any:
    """An httpx transport for the connector's ``transport=`` option (None: as shipped)."""
    if variant == "default":
        return None
    import httpx

    if variant == "httpx-unlimited":
        unlimited = httpx.Limits(max_connections=None, max_keepalive_connections=None)
        return httpx.AsyncHTTPTransport(limits=unlimited)
    if variant == "httpx-aiohttp":
        import aiohttp
        from httpx_aiohttp import AiohttpTransport

        # What the connector shipped before it talked to aiohttp directly (100 connections).
        # The session must be created inside the running loop: hand over a factory.
        return AiohttpTransport(
            client=lambda: aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=100))
        )
    raise ValueError(f"unknown agentsdk transport {variant}")


def agentsdk_client(variant: str = "default") -> Callable[[str], HttpClient]:
    """agentsdk through agentsdk-openai's ``connect("openai:NAME@URL")``."""

    def factory(base_url: str) -> HttpClient:
        from agentsdk.events import RunFinished
        from agentsdk_openai import connect

        from agentsdk import Agent, tool

        os.environ.setdefault("OPENAI_API_KEY", "bench")  # the openai scheme insists on a key
        add_tool = tool(add)
        models: dict[int, Any] = {}

        async def run(turns: int, stream: bool) -> str:
            if turns not in models:
                transport = _agentsdk_transport(variant)
                options = {"transport": transport} if transport is not None else {}
                models[turns] = connect(f"openai:{model_name(turns)}@{base_url}", **options)
            agent = Agent(models[turns], PROMPT, [add_tool], max_turns=turns + 5)
            if not stream:
                return str((await agent.run("add things")).output)
            output = ""
            async for event in agent.stream("add things"):
                if isinstance(event, RunFinished):
                    output = str(event.output)
            return output

        async def close() -> None:
            for model in models.values():
                await model.aclose()

        label = "agentsdk-openai (aiohttp)" if variant == "default" else f"connector + {variant}"
        return HttpClient(run=run, close=close, transport=label)

    return factory


def openai_agents_client(base_url: str) -> HttpClient:
    """openai-agents: ``OpenAIChatCompletionsModel`` over one shared ``AsyncOpenAI`` client."""
    from agents import (
        Agent,
        OpenAIChatCompletionsModel,
        Runner,
        function_tool,
        set_tracing_disabled,
    )
    from openai import AsyncOpenAI

    set_tracing_disabled(True)
    client = AsyncOpenAI(base_url=base_url, api_key="bench")
    tools = [function_tool(add)]

    async def run(turns: int, stream: bool) -> str:
        model = OpenAIChatCompletionsModel(model=model_name(turns), openai_client=client)
        agent = Agent(name="bench", instructions=PROMPT, tools=tools, model=model)
        if not stream:
            return str((await Runner.run(agent, "add things", max_turns=turns + 5)).final_output)
        result = Runner.run_streamed(agent, "add things", max_turns=turns + 5)
        async for _ in result.stream_events():
            pass
        return str(result.final_output)

    return HttpClient(run=run, close=client.close, transport="openai (httpx2)")


def pydantic_ai_client(base_url: str) -> HttpClient:
    """pydantic-ai: ``OpenAIChatModel`` over one shared ``OpenAIProvider``."""
    from pydantic_ai import Agent, Tool
    from pydantic_ai.models.openai import OpenAIChatModel
    from pydantic_ai.providers.openai import OpenAIProvider

    provider = OpenAIProvider(base_url=base_url, api_key="bench")
    tools = [Tool(add, takes_ctx=False)]
    agents: dict[int, Any] = {}

    async def drain(_ctx: Any, events: Any) -> None:
        async for _ in events:
            pass

    async def run(turns: int, stream: bool) -> str:
        if turns not in agents:
            model = OpenAIChatModel(model_name(turns), provider=provider)
            agents[turns] = Agent(model, instructions=PROMPT, tools=tools)
        handler = drain if stream else None
        return str((await agents[turns].run("add things", event_stream_handler=handler)).output)

    return HttpClient(run=run, close=provider.client.close, transport="openai (httpx2)")


CLIENTS: dict[str, Callable[[str], HttpClient]] = {
    "floor": raw_floor("httpx"),
    "agentsdk": agentsdk_client(),
    "agentsdk+httpx-aiohttp": agentsdk_client("httpx-aiohttp"),
    "agentsdk+httpx-unlimited": agentsdk_client("httpx-unlimited"),
    "openai-agents": openai_agents_client,
    "pydantic-ai": pydantic_ai_client,
}
TRANSPORTS = [
    "httpx",
    "httpx-unlimited",
    "httpx-h2",
    "httpx-aiohttp",
    "httpx2",
    "httpx2-unlimited",
    "aiohttp",
]
