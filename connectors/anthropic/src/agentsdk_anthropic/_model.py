"""AnthropicModel: the agentsdk Model protocol over the Messages API, on one pooled httpx client."""

from __future__ import annotations

import json
import logging
import os
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from typing import TypeVar

import anyio
import anyio.lowlevel
import httpx
from agentsdk.retry import RETRYABLE_STATUS, RetryPolicy, parse_retry_after
from pydantic import SecretStr, ValidationError
from pydantic_core import to_json

from agentsdk import (
    ModelAuthError,
    ModelError,
    ModelProfile,
    ModelRequest,
    ModelResponse,
    StreamDelta,
)

from ._convert import build_wire_request, output_tool_name, request_body, response_from_wire
from ._faults import NETWORK_ERRORS, checked, from_validation, guarded, network_failure
from ._stream import TRANSIENT_ERROR_TYPES, StreamAssembler, iter_sse
from ._wire import WireErrorBody, WireResponse

logger = logging.getLogger("agentsdk_anthropic")

DEFAULT_BASE_URL = "https://api.anthropic.com"
API_VERSION = "2023-06-01"
DEFAULT_MAX_TOKENS = 8192
# Claude 3 Opus, Sonnet and Haiku cap output at 4096 tokens; later models allow 8192 or more.
_SHORT_OUTPUT_PREFIXES = ("claude-3-opus", "claude-3-sonnet", "claude-3-haiku")
API_KEY_ENV = "ANTHROPIC_API_KEY"
BASE_URL_ENV = "ANTHROPIC_BASE_URL"

ANTHROPIC_PROFILE = ModelProfile(
    context_window=200_000,
    supports_tools=True,
    native_tool_calls=True,
    images_in_tool_results=True,
    image_input=True,
    parallel_tool_calls=True,
    tool_choice_required=True,
    json_schema_output=True,
)
"""What Claude models accept: images inside tool results, tool_choice any/tool/none, 200k context.
``json_schema_output`` is True because structured output is honoured through a forced tool."""

AUTH_ERROR_TYPES = frozenset({"authentication_error", "permission_error"})
SPEND_LIMIT_CODES = frozenset({"enforced_spend_limit_reached"})

_T = TypeVar("_T")


class AnthropicModel:
    """A Claude model reached over the Anthropic Messages API (``POST /v1/messages``).

    Args:
        model: the API model id, e.g. ``"claude-sonnet-4-5"``.
        api_key: defaults to ``$ANTHROPIC_API_KEY``; never shown in reprs, logs or errors.
        base_url: defaults to ``$ANTHROPIC_BASE_URL`` or ``https://api.anthropic.com``.
        default_max_tokens: ``max_tokens`` sent when ModelSettings.max_tokens is unset
            (default 8192, or 4096 for the Claude 3 models that allow no more).
        headers: extra HTTP headers, e.g. ``{"anthropic-beta": "..."}``.
        retry: backoff policy for 429, 5xx, 529, connect errors and read timeouts
            (tests give it a fake ``sleep``, ``clock`` and ``rng``).
        timeout: default request timeout in seconds (ModelSettings.timeout overrides it).
        transport: an httpx transport (tests pass ``httpx.MockTransport``).
    """

    def __init__(
        self,
        model: str,
        *,
        api_key: str | None = None,
        base_url: str | None = None,
        profile: ModelProfile | None = None,
        default_max_tokens: int | None = None,
        headers: Mapping[str, str] | None = None,
        retry: RetryPolicy | None = None,
        timeout: float = 600.0,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        key = api_key if api_key is not None else os.environ.get(API_KEY_ENV)
        key = key.strip() if key else key  # a key read from a file often ends in a newline
        self.name = f"anthropic:{model}"
        if not key:
            raise ModelAuthError(
                f"{self.name}: no API key; set {API_KEY_ENV} or pass api_key=",
                model_name=self.name,
            )
        self.model = model
        self.profile = profile or ANTHROPIC_PROFILE
        if default_max_tokens is None:
            short = model.startswith(_SHORT_OUTPUT_PREFIXES)
            default_max_tokens = 4096 if short else DEFAULT_MAX_TOKENS
        self.default_max_tokens = default_max_tokens
        self._extra_headers = dict(headers or {})
        self.retry = retry or RetryPolicy()
        self.base_url = (base_url or os.environ.get(BASE_URL_ENV) or DEFAULT_BASE_URL).rstrip("/")
        self._api_key = SecretStr(key)
        self._timeout = _timeouts(timeout)
        self._transport = transport
        self._client: httpx.AsyncClient | None = None
        self._client_loop: anyio.lowlevel.EventLoopToken | None = None

    def __repr__(self) -> str:
        return f"AnthropicModel(model={self.model!r}, base_url={self.base_url!r})"

    async def aclose(self) -> None:
        """Close the pooled connections (idempotent; a later request opens a new pool)."""
        client, loop = self._client, self._client_loop
        self._client, self._client_loop = None, None
        # a pool opened by an earlier, finished event loop cannot be closed from this one
        if client is not None and loop == anyio.lowlevel.current_token():
            await client.aclose()

    def _http(self) -> httpx.AsyncClient:
        """The pooled client of the running event loop.

        Pooled connections belong to the loop that opened them, so a second ``anyio.run`` /
        ``Agent.run_sync`` with the same model gets a fresh pool instead of dead sockets.
        """
        loop = anyio.lowlevel.current_token()
        if self._client is None or self._client_loop != loop:
            self._client = httpx.AsyncClient(
                limits=_LIMITS,
                base_url=self.base_url,
                transport=self._transport,
                timeout=self._timeout,
                headers={
                    "anthropic-version": API_VERSION,
                    "content-type": "application/json",
                    **self._extra_headers,
                    "x-api-key": self._api_key.get_secret_value(),
                },
            )
            self._client_loop = loop
        return self._client

    async def __aenter__(self) -> AnthropicModel:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()

    # ------------------------------------------------------------------ public protocol

    async def request(self, request: ModelRequest) -> ModelResponse:
        """Send one non-streaming request and parse the complete Message."""
        body = self._body(request, stream=False)
        output_tool = output_tool_name(request)

        async def once() -> ModelResponse:
            response = await self._post(body, request.settings.timeout, read_body=True)
            return self._message(response, request, output_tool)

        return await self._retrying(once)

    def _message(
        self, response: httpx.Response, request: ModelRequest, output_tool: str | None
    ) -> ModelResponse:
        """The checked turn of a whole Message body."""
        try:
            wire = WireResponse.model_validate_json(response.content)
        except ValidationError as exc:
            error = from_validation(self.name, exc)
            if error.field == "body":
                error.args = (f"{error}: {response.text[:200]!r}",)
            raise error from None
        if wire.type == "error":  # some gateways send an error body with status 200
            raise self._status_error(response)
        parsed = guarded(
            self.name,
            lambda: response_from_wire(wire, model_name=self.name, output_tool=output_tool),
        )
        return checked(parsed, stop_reason=wire.stop_reason, settings=request.settings)

    async def stream(self, request: ModelRequest) -> AsyncIterator[StreamDelta | ModelResponse]:
        """Stream deltas as they arrive; the last item is the assembled ModelResponse.

        Everything before the first delta (the 200, ``message_start``, an early ``error``
        event, a break-off) is retried like a 5xx: nothing was shown yet.
        """
        body = self._body(request, stream=True)
        output_tool = output_tool_name(request)

        async def once() -> _OpenStream:
            response = await self._post(body, request.settings.timeout, read_body=False)
            if "json" in response.headers.get("content-type", ""):  # a body, not events
                try:
                    await response.aread()
                except NETWORK_ERRORS as exc:
                    raise self._network(exc, answered=True) from None
                finally:
                    await response.aclose()
                if not _is_message(response.content):
                    raise self._status_error(response)
                # A gateway that ignored "stream": the whole message in one body.
                whole = _OpenStream(
                    response, StreamAssembler(model_name=self.name, output_tool=output_tool)
                )
                whole.done = self._message(response, request, output_tool)
                return whole
            opened = _OpenStream(
                response, StreamAssembler(model_name=self.name, output_tool=output_tool)
            )
            try:
                held: list[StreamDelta] = []
                while (deltas := await self._next(opened)) is not None:
                    held += deltas
                    if any(d.text.strip() or d.tool_name or d.arguments_delta for d in deltas):
                        opened.first = held  # whitespace alone shows nothing: held back
                        return opened
                opened.done = self._finished(opened, request)  # an empty turn is retried too
                return opened
            finally:
                if opened.first is None:
                    await opened.aclose()

        opened = await self._retrying(once)
        if opened.done is not None:
            yield opened.done
            return
        try:
            for delta in opened.first or ():
                yield delta
            while (deltas := await self._next(opened)) is not None:
                for delta in deltas:
                    yield delta
        finally:
            await opened.aclose()
        yield self._finished(opened, request)

    async def _next(self, opened: _OpenStream) -> list[StreamDelta] | None:
        """The deltas of the next event; None once ``message_stop`` arrived."""
        assembler = opened.assembler
        while True:
            try:
                sse = await anext(opened.events)
            except StopAsyncIteration:
                raise self._broken(opened, None) from None
            except NETWORK_ERRORS as exc:
                raise self._broken(opened, exc) from None
            if not sse.data:
                continue
            deltas = guarded(self.name, lambda: assembler.feed(assembler.parse(sse)))  # noqa: B023
            if assembler.finished:
                return deltas or None
            return deltas

    def _finished(self, opened: _OpenStream, request: ModelRequest) -> ModelResponse:
        assembler = opened.assembler
        if not assembler.finished:
            raise self._broken(opened, None)
        parsed = guarded(self.name, assembler.response)
        return checked(parsed, stop_reason=assembler.stop_reason, settings=request.settings)

    def _broken(self, opened: _OpenStream, exc: Exception | None) -> ModelError:
        """A stream that ended (or went silent) before ``message_stop``, in plain words."""
        got = opened.received[0]
        if isinstance(exc, httpx.TimeoutException):
            failure = network_failure(exc, opened.timeout, answered=True)
            what = f"{failure} after {got} bytes of the stream"
        else:
            what = f"the server closed the stream after {got} bytes before message_stop"
        return self._error(f"{what}; the partial answer was discarded", retryable=True)

    # ------------------------------------------------------------------ internals

    def _body(self, request: ModelRequest, *, stream: bool) -> bytes:
        wire = build_wire_request(
            request, model=self.model, default_max_tokens=self.default_max_tokens, stream=stream
        )
        # pydantic-core's encoder is ~3x faster than json.dumps on image-heavy bodies
        return to_json(request_body(wire, request.settings.extra))

    def _error(
        self, message: str, *, retryable: bool = False, status_code: int | None = None
    ) -> ModelError:
        return ModelError(
            f"{self.name}: {message}",
            retryable=retryable,
            status_code=status_code,
            model_name=self.name,
        )

    def _status_error(self, response: httpx.Response) -> ModelError:
        status = response.status_code
        error_type, error_code = "", None
        try:
            body = WireErrorBody.model_validate_json(response.content)
            error_type = body.error.type
            error_code = body.error.details.error_code if body.error.details else None
            detail = f"{error_type}: {body.error.message}"
            if body.request_id:
                detail += f" (request_id {body.request_id})"
        except ValidationError:
            detail = response.text[:300] or response.reason_phrase
        message = f"{self.name}: HTTP {status} {detail}"
        if status in (401, 403) or error_type in AUTH_ERROR_TYPES:
            return ModelAuthError(message, status_code=status, model_name=self.name)
        retryable = status in RETRYABLE_STATUS or (
            status == 200 and error_type in TRANSIENT_ERROR_TYPES
        )
        if error_code in SPEND_LIMIT_CODES:
            # a spend cap lifts at the next billing period, not after a backoff
            retryable = False
            message += " (spend limit reached: retrying will not help)"
        return ModelError(message, retryable=retryable, status_code=status, model_name=self.name)

    def _network(
        self, exc: Exception, *, answered: bool, timeout: httpx.Timeout | None = None
    ) -> ModelError:
        problem = network_failure(exc, timeout or self._timeout, answered=answered)
        return self._error(f"{problem} ({self.base_url})", retryable=True)

    async def _retrying(self, once: Callable[[], Awaitable[_T]]) -> _T:
        """``once()`` until it succeeds, a non-retryable error, or the policy gives up."""
        retry = self.retry
        attempt = 0
        while True:
            attempt += 1
            retry_after: float | None = None
            try:
                return await once()
            except _Retry as failed:
                error, retry_after = failed.error, failed.retry_after
            except ModelError as exc:
                if not exc.retryable:
                    raise
                error = exc
            delay = retry.delay(attempt, retry_after)
            if delay is None:
                if attempt < retry.max_attempts and retry_after is not None:
                    # attempts are left, so the server asked for more than max_retry_after
                    why = (
                        f"server asked to retry after {retry_after:.0f}s "
                        f"(limit {retry.max_retry_after:.0f}s)"
                    )
                else:
                    why = f"gave up after {attempt} attempt{'s' if attempt > 1 else ''}"
                error.args = (f"{self.name}: {why}; last error: {_strip(error, self.name)}",)
                raise error
            logger.warning(
                "%s: %s; retry %d/%d in %.2fs",
                self.name,
                _strip(error, self.name),
                attempt,
                retry.max_attempts - 1,
                delay,
            )
            await retry.sleep(delay)

    async def _post(
        self, content: bytes, timeout: float | None, *, read_body: bool
    ) -> httpx.Response:
        """One POST: a 200 response (body read, or open for streaming), or ``_Retry`` /
        ``ModelError``."""
        per_request = self._timeout if timeout is None else _timeouts(timeout)
        client = self._http()
        request = client.build_request("POST", "/v1/messages", content=content, timeout=per_request)
        answered = False
        try:
            response = await client.send(request, stream=True)
            answered = True
            if response.status_code == 200 and not read_body:
                return response
            try:
                await response.aread()
            finally:
                await response.aclose()
        except NETWORK_ERRORS as exc:
            problem = network_failure(exc, per_request, answered=answered)
            if answered and isinstance(exc, httpx.RemoteProtocolError | httpx.ReadError):
                length = response.headers.get("content-length")
                of = f" of {length}" if length and length.isdigit() else ""
                problem = (
                    f"the server closed the connection after {response.num_bytes_downloaded}"
                    f"{of} bytes of the body"
                )
            raise _Retry(self._error(f"{problem} ({self.base_url})", retryable=True)) from None
        if response.status_code == 200:
            return response
        error = self._status_error(response)
        if not error.retryable:
            raise error
        retry_after = parse_retry_after(response.headers.get("retry-after"), now=self.retry.clock())
        raise _Retry(error, retry_after=retry_after)


MAX_CONNECTIONS = 100
# Keep every pooled connection alive (httpx keeps 20 by default): under load the other 80
# would be closed on release and opened again for the next request.
_LIMITS = httpx.Limits(max_connections=MAX_CONNECTIONS, max_keepalive_connections=MAX_CONNECTIONS)


def _timeouts(seconds: float) -> httpx.Timeout:
    """A bound on each read (and on connecting, at most 10 s). No bound on waiting for a free
    pooled connection: that is our own queue, not the server being slow, and the run's own
    timeout covers it (a pool timeout as short as a read timeout turned a burst of 500 runs
    into retries that never reached the server)."""
    return httpx.Timeout(seconds, connect=min(seconds, 10.0), pool=None)


def _is_message(content: bytes) -> bool:
    try:
        value = json.loads(content)
    except ValueError:
        return False
    return isinstance(value, dict) and value.get("type") == "message"


class _Retry(Exception):
    """One attempt failed in a way worth another; ``error`` is raised when none is left."""

    def __init__(self, error: ModelError, *, retry_after: float | None = None):
        super().__init__(str(error))
        self.error = error
        self.retry_after = retry_after


class _OpenStream:
    """A streamed response being read: its events, the assembler, the first deltas."""

    def __init__(self, response: httpx.Response, assembler: StreamAssembler) -> None:
        self.response = response
        self.assembler = assembler
        self.first: list[StreamDelta] | None = None
        self.done: ModelResponse | None = None
        """Set when the whole stream ended before any delta (nothing to show but the turn)."""
        self.received = [0]
        timeout = response.request.extensions.get("timeout", {})
        self.timeout = httpx.Timeout(None, read=timeout.get("read"))
        self.events = iter_sse(_counted_lines(response, self.received))

    async def aclose(self) -> None:
        try:
            await self.events.aclose()
        finally:
            await self.response.aclose()


async def _counted_lines(response: httpx.Response, received: list[int]) -> AsyncIterator[str]:
    async for line in response.aiter_lines():
        received[0] += len(line.encode()) + 1  # its line ending, near enough
        yield line


def _strip(error: ModelError, name: str) -> str:
    """An error's text without the leading model name (it is said once already)."""
    return str(error).removeprefix(f"{name}: ")
