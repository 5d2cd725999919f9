"""AnthropicModel: the agentsdk Model protocol over the Messages API, on one pooled httpx client."""

from __future__ import annotations

import logging
import os
from collections.abc import AsyncIterator, Mapping

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

_NETWORK_ERRORS = (httpx.TimeoutException, httpx.NetworkError, httpx.RemoteProtocolError)


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
        self._timeout = httpx.Timeout(timeout, connect=min(timeout, 10.0))
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
        response = await self._send(body, request.settings.timeout, read_body=True)
        try:
            wire = WireResponse.model_validate_json(response.content)
        except ValidationError as exc:
            raise self._error(f"unparseable response body: {response.text[:200]!r}") from exc
        if wire.type == "error":  # some gateways send an error body with status 200
            raise self._status_error(response)
        return response_from_wire(wire, model_name=self.name, output_tool=output_tool_name(request))

    async def stream(self, request: ModelRequest) -> AsyncIterator[StreamDelta | ModelResponse]:
        """Stream deltas as they arrive; the last item is the assembled ModelResponse."""
        body = self._body(request, stream=True)
        response = await self._send(body, request.settings.timeout, read_body=False)
        if "json" in response.headers.get("content-type", ""):  # an error body, not events
            try:
                await response.aread()
            finally:
                await response.aclose()
            raise self._status_error(response)
        assembler = StreamAssembler(model_name=self.name, output_tool=output_tool_name(request))
        try:
            async for sse in iter_sse(response.aiter_lines()):
                if not sse.data:
                    continue
                for delta in assembler.feed(assembler.parse(sse)):
                    yield delta
                if assembler.finished:
                    break
        except _NETWORK_ERRORS as exc:
            raise self._error(f"stream broke off: {type(exc).__name__}", retryable=True) from exc
        finally:
            await response.aclose()
        yield assembler.response()

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

    async def _send(
        self, content: bytes, timeout: float | None, *, read_body: bool
    ) -> httpx.Response:
        """POST with retries; returns a 200 response (body read, or open for streaming)."""
        per_request = self._timeout if timeout is None else httpx.Timeout(timeout)
        client = self._http()
        retry = self.retry
        attempt = 0
        while True:
            attempt += 1
            request = client.build_request(
                "POST", "/v1/messages", content=content, timeout=per_request
            )
            retry_after: float | None = None
            try:
                response = await client.send(request, stream=True)
                if response.status_code == 200 and not read_body:
                    return response
                try:
                    await response.aread()
                finally:
                    await response.aclose()
                if response.status_code == 200:
                    return response
                error = self._status_error(response)
                retry_after = parse_retry_after(
                    response.headers.get("retry-after"), now=retry.clock()
                )
            except _NETWORK_ERRORS as exc:
                error = self._error(
                    f"{type(exc).__name__} reaching {self.base_url}", retryable=True
                )
            if not error.retryable:
                raise error
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
                raise self._error(
                    f"{why}; last error: {_strip(error, self.name)}",
                    retryable=True,
                    status_code=error.status_code,
                )
            logger.warning(
                "%s: %s; retry %d/%d in %.2fs",
                self.name,
                _strip(error, self.name),
                attempt,
                retry.max_attempts - 1,
                delay,
            )
            await retry.sleep(delay)


def _strip(error: ModelError, name: str) -> str:
    """An error's text without the leading model name (it is said once already)."""
    return str(error).removeprefix(f"{name}: ")
