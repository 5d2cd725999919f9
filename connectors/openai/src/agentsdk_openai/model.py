"""``OpenAIChatModel``: the agentsdk ``Model`` protocol over Chat Completions."""

from __future__ import annotations

import json
import logging
import re
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from typing import TYPE_CHECKING, Any, TypeVar
from urllib.parse import urlsplit

from agentsdk.http import CannotSend, HttpClient, Reply, TransportFailure
from agentsdk.retry import RETRYABLE_STATUS, RetryPolicy, parse_retry_after
from agentsdk.tools import ToolSpec

from agentsdk import (
    MalformedResponseError,
    Message,
    ModelAuthError,
    ModelError,
    ModelProfile,
    ModelRequest,
    ModelResponse,
    StreamDelta,
    ToolCallPart,
)

from ._events import OpenStream, broken_stream, decode_event, error_event
from ._response import (
    Completion,
    ReadCalls,
    StreamAssembler,
    calls_from_text,
    checked_response,
    guarded,
    parse_completion,
)
from ._wire import MessageEncoder, dumps
from .profiles import EngineProfile, engine_profile
from .prompted import render_tool_calls, tool_prompt

if TYPE_CHECKING:
    import httpx

__all__ = ["OpenAIChatModel"]

logger = logging.getLogger("agentsdk_openai")

_T = TypeVar("_T")
_AUTH_STATUS = frozenset({401, 403})
_SCHEMA_NAME = re.compile(r"[^a-zA-Z0-9_-]")


class OpenAIChatModel:
    """A model behind any OpenAI-compatible ``/chat/completions`` endpoint.

    One pool of connections per model and event loop (``agentsdk.http``: aiohttp, or
    httpx over ``transport=``); the message history is encoded
    incrementally (each message once). Use ``connect("vllm:...")`` for the usual
    engines, or build one directly::

        model = OpenAIChatModel("gpt-4.1", base_url="https://api.openai.com/v1", api_key=key)
    """

    def __init__(
        self,
        model: str,
        *,
        base_url: str,
        api_key: str | None = None,
        engine: EngineProfile | None = None,
        profile: ModelProfile | None = None,
        name: str | None = None,
        timeout: float = 120.0,
        retry: RetryPolicy | None = None,
        transport: httpx.AsyncBaseTransport | None = None,
        headers: dict[str, str] | None = None,
    ):
        self.engine = engine or engine_profile("openai")
        self.model_id = model
        self.name = name or f"{self.engine.scheme}:{model}"
        self.profile = profile or self.engine.model
        self.base_url = base_url.rstrip("/")
        address = urlsplit(self.base_url)
        if address.scheme not in ("http", "https") or not address.hostname:
            raise ValueError(
                f"base_url must be an http:// or https:// URL such as "
                f"'http://127.0.0.1:8000/v1', not {base_url!r}"
            )
        self.timeout = timeout
        self.retry = retry or RetryPolicy()
        # A key read from a file often ends in a newline, which no HTTP header may carry.
        self._api_key = api_key.strip() if api_key else api_key
        self._headers = {"Content-Type": "application/json", **(headers or {})}
        self._client = HttpClient(timeout, transport=transport)
        self._prompted = not self.profile.native_tool_calls
        self._encoder = MessageEncoder(
            self.profile, tool_calls_as_text=render_tool_calls if self._prompted else None
        )
        self._tool_cache: dict[tuple[int, ...], tuple[list[ToolSpec], str]] = {}

    def __repr__(self) -> str:  # never shows the API key
        return f"OpenAIChatModel(name={self.name!r}, base_url={self.base_url!r})"

    # -- the Model protocol -------------------------------------------------------------

    async def request(self, request: ModelRequest) -> ModelResponse:
        """Send one non-streamed completion request."""
        try:
            return await self._request(request, prompted=self._prompted)
        except _UnparsedToolOutput:
            return await self._request(request, prompted=True)

    async def stream(self, request: ModelRequest) -> AsyncIterator[StreamDelta | ModelResponse]:
        """Stream deltas, then the complete ``ModelResponse`` (only once ``[DONE]`` arrived).

        The ``ModelResponse`` is what counts: if the engine rejects the model's tool call after
        some deltas went out, the answer is asked for again and its response replaces them.
        """
        yielded = False
        try:
            async for item in self._stream(request, prompted=self._prompted):
                yielded = True
                yield item
        except _UnparsedToolOutput:
            if yielded:
                # Deltas went out before the engine's parser gave up (it sees the call only
                # as it is written): ask again whole, with the tools in the prompt.
                yield await self._request(request, prompted=True)
                return
            async for item in self._stream(request, prompted=True):
                yield item

    async def _request(self, request: ModelRequest, *, prompted: bool) -> ModelResponse:
        body = self._body(request, stream=False, prompted=prompted)
        read_calls = calls_from_text(self._prompted_names(request, prompted))
        return await self._complete(request, body, read_calls=read_calls)

    def _stream(
        self, request: ModelRequest, *, prompted: bool
    ) -> AsyncIterator[StreamDelta | ModelResponse]:
        body = self._body(request, stream=True, prompted=prompted)
        read_calls = calls_from_text(self._prompted_names(request, prompted))
        return self._complete_stream(request, body, read_calls=read_calls)

    # -- the seam for subclasses that build their own body (LocalChatModel) ---------------

    async def _complete(
        self, request: ModelRequest, body: bytes, *, read_calls: ReadCalls | None = None
    ) -> ModelResponse:
        """POST ``body`` (a non-streamed completion) and return the checked turn: retried
        within the policy, malformed and empty answers included. ``read_calls`` reads the
        tool calls from the text when the engine writes them there."""

        async def once() -> ModelResponse:
            reply = await self._post(body, request.settings.timeout, stream=False)
            try:
                data = json.loads(reply.body)
            except (ValueError, UnicodeDecodeError):
                raise MalformedResponseError(
                    f"{self.name}: the server sent a body that is not JSON "
                    f"(HTTP {reply.status}, {len(reply.body)} bytes): {reply.text[:200]!r}",
                    field="body",
                    model_name=self.name,
                ) from None
            completion = guarded(
                self.name,
                lambda: parse_completion(data, model_name=self.name, read_calls=read_calls),
            )
            return self._checked(completion, request)

        return await self._retrying(once)

    async def _complete_stream(
        self, request: ModelRequest, body: bytes, *, read_calls: ReadCalls | None = None
    ) -> AsyncIterator[StreamDelta | ModelResponse]:
        """POST ``body`` (``stream: true``): deltas, then the checked turn. Everything up to
        the first text delta is retried like a 5xx (nothing was shown yet; tool-call deltas
        are held until then, or until the turn is complete); after it, a failure is raised.
        With ``read_calls``, text that starts like a call is held back and the calls read
        from it come as deltas at the end."""

        async def once() -> OpenStream:
            reply = await self._post(body, request.settings.timeout, stream=True)
            opened = OpenStream(reply, StreamAssembler(self.name, read_calls=read_calls))
            try:
                if "json" in reply.headers.get("content-type", ""):
                    # A server (or proxy) that ignored "stream": the whole answer in one body.
                    opened.response = await self._whole(opened, request, read_calls)
                    return opened
                while (deltas := await self._next(opened)) is not None:
                    opened.held += deltas
                    # Only text reaches the user (the loop shows no tool-call deltas): until
                    # some arrives, a break-off is retried, and the deltas wait here.
                    if any(d.text.strip() for d in deltas):
                        opened.shown = True
                        return opened
                opened.response = self._finished(opened, request)
                return opened
            finally:
                if not opened.shown:
                    await opened.aclose()

        opened = await self._retrying(once)
        try:
            for delta in opened.held:
                yield delta
            if opened.response is None:
                while (deltas := await self._next(opened)) is not None:
                    for delta in deltas:
                        yield delta
        finally:
            await opened.aclose()
        response = opened.response
        if response is None:
            response = self._finished(opened, request)
        if read_calls is not None:
            for index, call in enumerate(response.tool_calls):
                yield _call_delta(index, call)
        yield response

    async def _whole(
        self, opened: OpenStream, request: ModelRequest, read_calls: ReadCalls | None
    ) -> ModelResponse:
        try:
            text = "\n".join([line async for line in opened.reply.lines()])
        except TransportFailure as exc:
            raise broken_stream(self.name, opened.reply, exc) from None
        try:
            data = json.loads(text)
        except ValueError:
            raise MalformedResponseError(
                f"{self.name}: the server sent a JSON content type but not JSON: {text[:200]!r}",
                field="body",
                model_name=self.name,
            ) from None
        completion = guarded(
            self.name, lambda: parse_completion(data, model_name=self.name, read_calls=read_calls)
        )
        return self._checked(completion, request)

    async def _next(self, opened: OpenStream) -> list[StreamDelta] | None:
        """The deltas of the next event; None once ``[DONE]`` arrived."""
        try:
            payload = await anext(opened.payloads)
        except StopAsyncIteration:
            raise broken_stream(self.name, opened.reply, None) from None
        except TransportFailure as exc:
            raise broken_stream(self.name, opened.reply, exc) from None
        if payload == "[DONE]":
            opened.assembler.done = True
            return None
        chunk = decode_event(payload, self.name)
        if isinstance(chunk, dict) and chunk.get("error") is not None:
            error = error_event(chunk["error"], self.name)
            raise self._unparsed(str(error)) or error
        return guarded(self.name, lambda: opened.assembler.feed(chunk))

    def _finished(self, opened: OpenStream, request: ModelRequest) -> ModelResponse:
        return self._checked(guarded(self.name, opened.assembler.finish), request)

    def _checked(self, completion: Completion, request: ModelRequest) -> ModelResponse:
        return checked_response(completion, model_name=self.name, settings=request.settings)

    def _unparsed(self, message: str) -> _UnparsedToolOutput | None:
        """The engine's own tool-call parser rejected the model's text: we parse it instead."""
        marker = self.engine.tool_parse_failure_marker
        if self._prompted or not marker or marker not in message:
            return None
        logger.info(
            "%s: the server could not parse the model's output; reading it as text", self.name
        )
        return _UnparsedToolOutput(message, model_name=self.name)

    async def aclose(self) -> None:
        """Close the HTTP connection pool (the model stays usable: it opens a new one)."""
        await self._client.aclose()

    async def __aenter__(self) -> OpenAIChatModel:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    # -- overridable seam for servers whose address is only known later (LocalEngine) ----

    async def _endpoint(self) -> tuple[str, str | None]:
        """(base URL, API key) to use for the next request."""
        return self.base_url, self._api_key

    # -- request building ---------------------------------------------------------------

    def _prompted_names(self, request: ModelRequest, prompted: bool) -> list[str] | None:
        if not prompted or not _tools_offered(request):
            return None
        return [t.name for t in request.tools]

    def _tools_json(self, tools: list[ToolSpec]) -> str:
        key = tuple(id(t) for t in tools)
        hit = self._tool_cache.get(key)
        if hit is None or any(a is not b for a, b in zip(hit[0], tools, strict=True)):
            wire = [
                {
                    "type": "function",
                    "function": {
                        "name": t.name,
                        "description": t.description,
                        "parameters": t.parameters,
                    },
                }
                for t in tools
            ]
            hit = (list(tools), dumps(wire))
            if len(self._tool_cache) > 32:
                self._tool_cache.clear()
            self._tool_cache[key] = hit
        return hit[1]

    def _message_fragments(self, request: ModelRequest, prompted: bool) -> list[str]:
        messages: Sequence[Message] = request.messages
        if self._prompted_names(request, prompted) is None:
            return self._encoder.encode(messages)
        prompt = tool_prompt(request.tools, request.settings.tool_choice)
        if messages and messages[0].role == "system":
            system = f"{messages[0].text}\n\n{prompt}"
            messages = messages[1:]
        else:
            system = prompt
        return [dumps({"role": "system", "content": system}), *self._encoder.encode(messages)]

    def _body(self, request: ModelRequest, *, stream: bool, prompted: bool) -> bytes:
        settings = request.settings
        fields: dict[str, Any] = {"model": self.model_id}
        if settings.temperature is not None:
            fields["temperature"] = settings.temperature
        if settings.max_tokens is not None:
            fields[self.engine.max_tokens_field] = settings.max_tokens
        if settings.seed is not None:
            fields["seed"] = settings.seed
        offered = _tools_offered(request)
        tools_json = None
        if request.tools and not prompted:
            tools_json = self._tools_json(request.tools)
            choice = settings.tool_choice
            if choice == "required" and not self.profile.tool_choice_required:
                choice = "auto"
            if choice in ("auto", "required", "none"):
                fields["tool_choice"] = choice
            elif choice:
                fields["tool_choice"] = {"type": "function", "function": {"name": choice}}
            if settings.parallel_tool_calls is not None and self.profile.parallel_tool_calls:
                fields["parallel_tool_calls"] = settings.parallel_tool_calls
        if (
            request.output_schema is not None
            and self.profile.json_schema_output
            and (not offered or self.engine.json_schema_with_tools)
        ):
            fields["response_format"] = {
                "type": "json_schema",
                "json_schema": {
                    "name": _SCHEMA_NAME.sub("_", request.output_name or "output")[:64] or "output",
                    "schema": request.output_schema,
                    "strict": False,
                },
            }
        if stream:
            fields["stream"] = True
            if self.engine.stream_usage:
                fields["stream_options"] = {"include_usage": True}
        fields.update(settings.extra)
        # Splice the cached message JSON in rather than re-serialising the history.
        head = '{"messages":[' + ",".join(self._message_fragments(request, prompted)) + "]"
        if tools_json is not None:
            head += ',"tools":' + tools_json
        return (head + "," + dumps(fields)[1:]).encode("utf-8")

    # -- transport ----------------------------------------------------------------------
    # agentsdk.http: aiohttp directly by default, an httpx client when the caller hands over
    # a transport (MockTransport in tests, HTTP/2...); a pool per event loop.

    def _http(self) -> HttpClient:
        return self._client

    async def _retrying(self, once: Callable[[], Awaitable[_T]]) -> _T:
        """``once()`` until it succeeds, a non-retryable error, or the policy gives up."""
        attempt = 0
        while True:
            attempt += 1
            retry_after: float | None = None
            try:
                return await once()
            except _Retry as failed:
                error, retry_after = failed.error, failed.retry_after
                if failed.dropped and attempt == 1 < self.retry.max_attempts:
                    # Most likely a pooled connection the server had just closed: a fresh
                    # one fixes it, so no backoff and no warning (later drops back off).
                    logger.info("%s: %s; retrying at once on a new connection", self.name, error)
                    continue
            except _UnparsedToolOutput:
                raise
            except ModelError as exc:
                if not exc.retryable:
                    raise
                error = exc
            wait = self.retry.delay(attempt, retry_after)
            if wait is None:
                plural = "s" if attempt > 1 else ""
                error.args = (f"{error} (gave up after {attempt} attempt{plural})",)
                raise error
            logger.warning(
                "%s; retrying in %.1f s (attempt %d of %d)",
                error,
                wait,
                attempt + 1,
                self.retry.max_attempts,
            )
            await self.retry.sleep(wait)

    async def _post(self, body: bytes, timeout: float | None, *, stream: bool) -> Reply:
        """One POST; returns a 2xx reply (a streamed one still open) or raises: ``_Retry``
        for what is worth another attempt, ``ModelError`` for what is not."""
        base_url, api_key = await self._endpoint()
        headers = self._headers
        if api_key:
            headers = {**headers, "Authorization": f"Bearer {api_key}"}
        try:
            reply = await self._http().post(
                f"{base_url}/chat/completions", body, headers, timeout, stream
            )
        except CannotSend as exc:
            raise ModelError(
                f"{self.name}: cannot send the request to {base_url!r}: {exc}",
                model_name=self.name,
            ) from None
        except TransportFailure as exc:  # connect/read/write errors and timeouts
            error = ModelError(f"{self.name}: {exc}", retryable=True, model_name=self.name)
            raise _Retry(error, dropped=exc.dropped) from None
        if reply.ok:
            return reply
        status = reply.status
        problem = f"HTTP {status}: {_server_message(reply)}"
        unparsed = self._unparsed(problem)
        if unparsed is not None:
            raise unparsed
        if status in _AUTH_STATUS:
            raise ModelAuthError(self._auth_hint(problem), status_code=status, model_name=self.name)
        if status not in RETRYABLE_STATUS:
            raise ModelError(
                f"{self.name} (model {self.model_id!r}): {problem}",
                status_code=status,
                model_name=self.name,
            )
        error = ModelError(
            f"{self.name}: {problem}", retryable=True, status_code=status, model_name=self.name
        )
        retry_after = parse_retry_after(reply.headers.get("retry-after"), now=self.retry.clock())
        raise _Retry(error, retry_after=retry_after)

    def _auth_hint(self, problem: str) -> str:
        where = (
            f" Check the {self.engine.api_key_env} environment variable."
            if self.engine.api_key_env
            else ""
        )
        return f"{self.name}: authentication failed ({problem}).{where}"


class _UnparsedToolOutput(ModelError):
    """The server's tool-call parser failed on the model's output (retrying won't help)."""


class _Retry(Exception):
    """One attempt failed in a way worth another; ``error`` is raised when none is left."""

    def __init__(
        self, error: ModelError, *, retry_after: float | None = None, dropped: bool = False
    ):
        super().__init__(str(error))
        self.error = error
        self.retry_after = retry_after
        self.dropped = dropped


def _call_delta(index: int, call: ToolCallPart) -> StreamDelta:
    arguments = call.raw_arguments if call.raw_arguments is not None else dumps(call.arguments)
    return StreamDelta(tool_call_index=index, tool_name=call.name, arguments_delta=arguments)


def _tools_offered(request: ModelRequest) -> bool:
    return bool(request.tools) and request.settings.tool_choice != "none"


def _server_message(reply: Reply) -> str:
    text = reply.text
    try:
        data = json.loads(text)
    except ValueError:
        return text.strip()[:500] or f"status {reply.status}"
    if isinstance(data, dict):
        error = data.get("error", data)
        if isinstance(error, dict) and error.get("message"):
            return str(error["message"])[:500]
        if isinstance(error, str):
            return error[:500]
        if data.get("detail"):
            return str(data["detail"])[:500]
    return text.strip()[:500]
