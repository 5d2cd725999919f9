"""AnthropicModel: the agentsdk Model protocol over the Messages API, on ``agentsdk.http``."""

from __future__ import annotations

import json
import logging
import os
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from http import HTTPStatus
from typing import TYPE_CHECKING, TypeVar

from agentsdk.http import CannotSend, HttpClient, Reply, TransportFailure
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
from ._faults import checked, from_validation, guarded
from ._stream import TRANSIENT_ERROR_TYPES, StreamAssembler, iter_sse
from ._wire import WireErrorBody, WireResponse

if TYPE_CHECKING:
    import httpx

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
        timeout: default read timeout in seconds: how long the server may stay silent
            (ModelSettings.timeout overrides it; connecting is bounded by 10 s).
        transport: an httpx transport (tests pass ``httpx.MockTransport``); without one the
            connector talks aiohttp directly, one pool per event loop (``agentsdk.http``).
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
        self._headers = {
            "anthropic-version": API_VERSION,
            "content-type": "application/json",
            **dict(headers or {}),
        }
        self.retry = retry or RetryPolicy()
        self.base_url = (base_url or os.environ.get(BASE_URL_ENV) or DEFAULT_BASE_URL).rstrip("/")
        self._url = f"{self.base_url}/v1/messages"
        self._api_key = SecretStr(key)
        self._client = HttpClient(timeout, transport=transport)

    def __repr__(self) -> str:
        return f"AnthropicModel(model={self.model!r}, base_url={self.base_url!r})"

    async def aclose(self) -> None:
        """Close the pooled connections (idempotent; a later request opens a new pool)."""
        await self._client.aclose()

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
            reply = await self._post(body, request.settings.timeout, stream=False)
            return self._message(reply, request, output_tool)

        return await self._retrying(once)

    def _message(
        self, reply: Reply, request: ModelRequest, output_tool: str | None
    ) -> ModelResponse:
        """The checked turn of a whole Message body."""
        try:
            wire = WireResponse.model_validate_json(reply.body)
        except ValidationError as exc:
            error = from_validation(self.name, exc)
            if error.field == "body":
                error.args = (f"{error}: {reply.text[:200]!r}",)
            raise error from None
        if wire.type == "error":  # some gateways send an error body with status 200
            raise self._status_error(reply)
        parsed = guarded(
            self.name,
            lambda: response_from_wire(wire, model_name=self.name, output_tool=output_tool),
        )
        return checked(parsed, stop_reason=wire.stop_reason, settings=request.settings)

    async def stream(self, request: ModelRequest) -> AsyncIterator[StreamDelta | ModelResponse]:
        """Stream deltas as they arrive; the last item is the assembled ModelResponse.

        Everything before the first text delta (the 200, ``message_start``, tool-call deltas,
        an ``error`` event, a break-off) is retried like a 5xx: nothing was shown yet. The
        tool-call deltas of a turn without text come just before its ModelResponse.
        """
        body = self._body(request, stream=True)
        output_tool = output_tool_name(request)

        async def once() -> _OpenStream:
            reply = await self._post(body, request.settings.timeout, stream=True)
            opened = _OpenStream(
                reply, StreamAssembler(model_name=self.name, output_tool=output_tool)
            )
            try:
                if "json" in reply.headers.get("content-type", ""):  # a body, not events
                    opened.done = await self._whole(opened, request, output_tool)
                    return opened
                while (deltas := await self._next(opened)) is not None:
                    opened.held += deltas
                    # Only text reaches the user (the loop shows no tool-call deltas): until
                    # some arrives, a break-off is retried, and the deltas wait here.
                    if any(d.text.strip() for d in deltas):
                        opened.shown = True
                        return opened
                opened.done = self._finished(opened, request)  # an empty turn is retried too
                return opened
            finally:
                if not opened.shown:
                    await opened.aclose()

        opened = await self._retrying(once)
        try:
            for delta in opened.held:
                yield delta
            if opened.done is None:
                while (deltas := await self._next(opened)) is not None:
                    for delta in deltas:
                        yield delta
        finally:
            await opened.aclose()
        yield opened.done if opened.done is not None else self._finished(opened, request)

    async def _whole(
        self, opened: _OpenStream, request: ModelRequest, output_tool: str | None
    ) -> ModelResponse:
        """A gateway that ignored "stream" (or an error body): the whole message in one body."""
        reply = opened.reply
        try:
            text = "\n".join([line async for line in reply.lines()])
        except TransportFailure as exc:
            raise self._network(exc) from None
        whole = Reply(reply.status, reply.headers, text.encode())
        if not _is_message(whole.body):
            raise self._status_error(whole)
        return self._message(whole, request, output_tool)

    async def _next(self, opened: _OpenStream) -> list[StreamDelta] | None:
        """The deltas of the next event; None once ``message_stop`` arrived."""
        assembler = opened.assembler
        while True:
            try:
                sse = await anext(opened.events)
            except StopAsyncIteration:
                raise self._broken(opened, None) from None
            except TransportFailure as exc:
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

    def _broken(self, opened: _OpenStream, failure: TransportFailure | None) -> ModelError:
        """A stream that ended (or went silent) before ``message_stop``, in plain words."""
        got = opened.reply.received
        if failure is not None and failure.timed_out:
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

    def _status_error(self, reply: Reply) -> ModelError:
        status = reply.status
        error_type, error_code = "", None
        try:
            body = WireErrorBody.model_validate_json(reply.body)
            error_type = body.error.type
            error_code = body.error.details.error_code if body.error.details else None
            detail = f"{error_type}: {body.error.message}"
            if body.request_id:
                detail += f" (request_id {body.request_id})"
        except ValidationError:
            detail = reply.text[:300] or _phrase(status)
        message = f"{self.name}: HTTP {status} {detail}"
        if status in (401, 403) or error_type in AUTH_ERROR_TYPES:
            return ModelAuthError(message, status_code=status, model_name=self.name)
        retryable = status in RETRYABLE_STATUS or (reply.ok and error_type in TRANSIENT_ERROR_TYPES)
        if error_code in SPEND_LIMIT_CODES:
            # a spend cap lifts at the next billing period, not after a backoff
            retryable = False
            message += " (spend limit reached: retrying will not help)"
        return ModelError(message, retryable=retryable, status_code=status, model_name=self.name)

    def _network(self, failure: TransportFailure) -> ModelError:
        return self._error(f"{failure} ({self.base_url})", retryable=True)

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
                if failed.dropped and attempt == 1 < retry.max_attempts:
                    # Most likely a pooled connection the server had just closed: a fresh
                    # one fixes it, so no backoff and no warning (later drops back off).
                    logger.info("%s; retrying at once on a new connection", error)
                    continue
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

    async def _post(self, content: bytes, timeout: float | None, *, stream: bool) -> Reply:
        """One POST: a 2xx reply (read whole, or open for streaming), or ``_Retry`` /
        ``ModelError``."""
        headers = {**self._headers, "x-api-key": self._api_key.get_secret_value()}
        try:
            reply = await self._client.post(self._url, content, headers, timeout, stream)
        except CannotSend as exc:
            raise self._error(f"cannot send the request to {self.base_url!r}: {exc}") from None
        except TransportFailure as exc:  # connect/read/write errors and timeouts
            raise _Retry(self._network(exc), dropped=exc.dropped) from None
        if reply.ok:
            return reply
        error = self._status_error(reply)
        if not error.retryable:
            raise error
        retry_after = parse_retry_after(reply.headers.get("retry-after"), now=self.retry.clock())
        raise _Retry(error, retry_after=retry_after)


def _phrase(status: int) -> str:
    try:
        return HTTPStatus(status).phrase
    except ValueError:
        return "no reason given"


def _is_message(content: bytes) -> bool:
    try:
        value = json.loads(content)
    except ValueError:
        return False
    return isinstance(value, dict) and value.get("type") == "message"


class _Retry(Exception):
    """One attempt failed in a way worth another; ``error`` is raised when none is left."""

    def __init__(
        self, error: ModelError, *, retry_after: float | None = None, dropped: bool = False
    ):
        super().__init__(str(error))
        self.error = error
        self.retry_after = retry_after
        self.dropped = dropped


class _OpenStream:
    """A streamed reply being read: its events, the assembler, the deltas held so far."""

    def __init__(self, reply: Reply, assembler: StreamAssembler) -> None:
        self.reply = reply
        self.assembler = assembler
        self.held: list[StreamDelta] = []
        """Deltas read before any text: given out once the attempt can no longer be retried."""
        self.shown = False
        """True once text arrived: from then on a failure is raised, never retried."""
        self.done: ModelResponse | None = None
        """Set when the whole stream was read before any text (nothing to show but the turn)."""
        self.events = iter_sse(reply.lines())

    async def aclose(self) -> None:
        try:
            await self.events.aclose()
        finally:
            await self.reply.aclose()


def _strip(error: ModelError, name: str) -> str:
    """An error's text without the leading model name (it is said once already)."""
    return str(error).removeprefix(f"{name}: ")
