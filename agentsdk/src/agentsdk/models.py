"""How the loop talks to models: the ``Model`` protocol, requests, responses,
capability profiles, tiers and fallback."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass
from typing import Any, Literal, Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict, Field

from .messages import Message, TextPart, ToolCallPart, Usage
from .tools import ToolSpec

__all__ = [
    "ContentFilteredError",
    "EmptyResponseError",
    "FallbackModel",
    "MalformedResponseError",
    "Model",
    "ModelAuthError",
    "ModelError",
    "ModelProfile",
    "ModelRequest",
    "ModelResponse",
    "ModelSettings",
    "ResponseTruncatedError",
    "StreamDelta",
    "Tiers",
    "TokenTrace",
    "TurnInfo",
    "warm_up",
]

logger = logging.getLogger(__name__)


class ModelProfile(BaseModel):
    """What a model family can do. Differences between engines are data here,
    not branches in the loop."""

    model_config = ConfigDict(frozen=True)

    context_window: int = 32_768
    supports_tools: bool = True
    native_tool_calls: bool = True
    """False: tools are described in the prompt and calls parsed from text."""
    images_in_tool_results: bool = False
    image_input: bool = False
    parallel_tool_calls: bool = True
    tool_choice_required: bool = True
    json_schema_output: bool = False


class ModelSettings(BaseModel):
    """Sampling and tool-use settings; set on the Agent, overridable per run."""

    model_config = ConfigDict(frozen=True)

    temperature: float | None = None
    max_tokens: int | None = None
    seed: int | None = None
    tool_choice: str | None = None
    """``auto``, ``required``, ``none`` or the name of one tool."""
    parallel_tool_calls: bool | None = None
    timeout: float | None = None
    allow_truncated: bool = False
    """Accept an answer cut off at the output-token limit (finish reason ``length``)
    instead of raising ``ResponseTruncatedError``; an empty cut-off answer still raises."""
    record_tokens: bool = False
    """Ask the connector for the token ids and logprobs the engine produced
    (``ModelResponse.token_trace``); connectors that cannot give them ignore it."""
    extra: dict[str, Any] = Field(default_factory=dict)

    def merged(self, other: ModelSettings | None) -> ModelSettings:
        """These settings with every field ``other`` sets taken from ``other``."""
        if other is None:
            return self
        return self.model_copy(update=other.model_dump(exclude_unset=True))


class ModelRequest(BaseModel):
    """Everything a model is given for one turn."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    messages: list[Message]
    tools: list[ToolSpec] = Field(default_factory=list)
    settings: ModelSettings = Field(default_factory=ModelSettings)
    output_schema: dict[str, Any] | None = None
    output_name: str | None = None
    last_turn: bool = False
    """The run's last turn (``max_turns``): a tool call made now is never followed by an
    answer, since the run ends on its turn limit. A model that would turn an answer into a
    call (the local model's checks for a skipped part) leaves the answer."""


class TokenTrace(BaseModel):
    """The tokens of one model turn exactly as the engine produced them (for
    training on trajectories): what it evaluated as the prompt and what it sampled."""

    prompt_ids: list[int]
    response_ids: list[int]
    response_logprobs: list[float] | None = None
    """One log-probability per response token, when the engine reports them."""


class ModelResponse(BaseModel):
    """What a model answered for one turn."""

    parts: list[TextPart | ToolCallPart]
    usage: Usage = Field(default_factory=Usage)
    model_name: str = ""
    finish_reason: str | None = None
    token_trace: TokenTrace | None = None
    """Set when ``ModelSettings.record_tokens`` was asked for and the engine can."""

    @property
    def text(self) -> str:
        """The text parts joined."""
        return "".join([p.text for p in self.parts if isinstance(p, TextPart)])

    @property
    def tool_calls(self) -> list[ToolCallPart]:
        """The tool calls asked for."""
        return [p for p in self.parts if isinstance(p, ToolCallPart)]


class StreamDelta(BaseModel):
    """A piece of a streamed answer, before the final ``ModelResponse``."""

    text: str = ""
    tool_call_index: int | None = None
    tool_name: str | None = None
    arguments_delta: str = ""


class ModelError(Exception):
    """A model could not answer. ``retryable`` errors let ``FallbackModel`` move on."""

    def __init__(
        self,
        message: str,
        *,
        retryable: bool = False,
        status_code: int | None = None,
        model_name: str | None = None,
    ):
        super().__init__(message)
        self.retryable = retryable
        self.status_code = status_code
        self.model_name = model_name


class ModelAuthError(ModelError):
    """The server refused the credentials (401/403). Never retried."""


class EmptyResponseError(ModelError):
    """The server answered, but with no text and no tool calls (or with no choice at all).

    Retryable: connectors ask again within their retry policy when nothing was streamed
    yet, and ``FallbackModel`` moves on when they give up.
    """

    def __init__(
        self,
        message: str,
        *,
        retryable: bool = True,
        status_code: int | None = None,
        model_name: str | None = None,
        finish_reason: str | None = None,
    ):
        super().__init__(
            message, retryable=retryable, status_code=status_code, model_name=model_name
        )
        self.finish_reason = finish_reason


class ContentFilteredError(ModelError):
    """The model refused, or the server's content filter stopped the answer.

    ``refusal`` is the refusal text, or the partial answer the filter cut off (None when
    the server sent nothing). Not retryable: the same request gets the same verdict.
    """

    def __init__(
        self,
        message: str,
        *,
        refusal: str | None = None,
        retryable: bool = False,
        status_code: int | None = None,
        model_name: str | None = None,
    ):
        super().__init__(
            message, retryable=retryable, status_code=status_code, model_name=model_name
        )
        self.refusal = refusal


class ResponseTruncatedError(ModelError):
    """The answer was cut off at the output-token limit (finish reason ``length``).

    ``response`` is the cut-off turn, kept for a caller who wants it. Raise
    ``max_tokens`` or set ``ModelSettings(allow_truncated=True)`` to accept such turns.
    """

    def __init__(
        self,
        message: str,
        *,
        response: ModelResponse | None = None,
        retryable: bool = False,
        status_code: int | None = None,
        model_name: str | None = None,
    ):
        super().__init__(
            message, retryable=retryable, status_code=status_code, model_name=model_name
        )
        self.response = response


class MalformedResponseError(ModelError):
    """The server's answer could not be read: not JSON, cut short, or JSON of the wrong
    shape. ``field`` names what was wrong (``body``, ``choices[0]``, ``usage.prompt_tokens``).

    Retryable, like a 5xx: connectors ask again when nothing was streamed yet.
    """

    def __init__(
        self,
        message: str,
        *,
        field: str = "body",
        retryable: bool = True,
        status_code: int | None = None,
        model_name: str | None = None,
    ):
        super().__init__(
            message, retryable=retryable, status_code=status_code, model_name=model_name
        )
        self.field = field


@runtime_checkable
class Model(Protocol):
    """A model connector. ``stream`` yields deltas and ends with the full response."""

    name: str
    profile: ModelProfile

    async def request(self, request: ModelRequest) -> ModelResponse: ...

    def stream(self, request: ModelRequest) -> AsyncIterator[StreamDelta | ModelResponse]: ...

    async def aclose(self) -> None: ...


@dataclass(slots=True)
class TurnInfo:
    """What a tier policy sees when it picks a model for a turn."""

    turn: int
    request: ModelRequest
    previous_tier: str | None = None
    """The tier that served this run's previous turn (None on the first turn, or on the
    first turn after a resume): a policy can stay on the model whose engine has already
    read the conversation."""

    @property
    def tools_offered(self) -> bool:
        """True when the model may call a tool this turn."""
        return bool(self.request.tools) and self.request.settings.tool_choice != "none"


def default_tier_policy(info: TurnInfo) -> Literal["fast", "standard"]:
    """Standard when tools may be needed, fast for text-only turns."""
    return "standard" if info.tools_offered else "fast"


TierPolicy = Callable[[TurnInfo], Literal["fast", "standard"]]

Escalation = Callable[[TurnInfo, ModelResponse], "bool | ModelRequest"]
"""Given the turn and the fast tier's response: False to keep it, True to ask the standard
tier the same request, or the request to ask it instead (e.g. with tools off)."""


class Tiers:
    """A fast and a standard model; ``policy`` picks one per turn.

    Models may be given as instances or as strings (``"local:smollm2-135m"``),
    resolved through the installed connectors on first use.

    ``escalate``, when given, sees each response of the fast tier; when it returns True
    (or a request to ask instead) the loop asks the standard tier and keeps that response (both
    requests count in the usage; the events show a second ``ModelRequestStarted`` for the
    turn). Streamed turns are not escalated: their text has already gone out.
    """

    def __init__(
        self,
        *,
        fast: Model | str,
        standard: Model | str,
        policy: TierPolicy = default_tier_policy,
        escalate: Escalation | None = None,
    ):
        self._specs: dict[str, Model | str] = {"fast": fast, "standard": standard}
        self._models: dict[str, Model] = {}
        self.policy = policy
        self.escalate = escalate

    @property
    def name(self) -> str:
        """Both tiers' names."""
        return f"tiers(fast={self._name_of('fast')}, standard={self._name_of('standard')})"

    def _name_of(self, tier: str) -> str:
        spec = self._specs[tier]
        return spec if isinstance(spec, str) else spec.name

    def model(self, tier: str) -> Model:
        """The model for ``tier`` (``fast`` or ``standard``), resolving a string once."""
        found = self._models.get(tier)
        if found is None:
            from .plugins import resolve_model

            found = resolve_model(self._specs[tier])
            self._models[tier] = found
        return found

    def pick(self, info: TurnInfo) -> tuple[str, Model]:
        """The tier name and model for this turn."""
        tier = self.policy(info)
        return tier, self.model(tier)

    @property
    def profile(self) -> ModelProfile:
        """The standard tier's profile (it serves the turns that use tools)."""
        return self.model("standard").profile

    async def aclose(self) -> None:
        """Close the models this object resolved from strings."""
        for tier, model in self._models.items():
            if isinstance(self._specs[tier], str):
                await model.aclose()
        self._models.clear()


class FallbackModel:
    """Try each model in turn; move on when one raises a retryable ``ModelError``."""

    def __init__(self, models: Sequence[Model | str]):
        if not models:
            raise ValueError("FallbackModel needs at least one model")
        from .plugins import resolve_model

        self.models = [resolve_model(m) for m in models]
        self.name = "fallback(" + ", ".join(m.name for m in self.models) + ")"
        self.profile = self.models[0].profile

    async def request(self, request: ModelRequest) -> ModelResponse:
        """Ask each model until one answers."""
        errors: list[ModelError] = []
        for model in self.models:
            try:
                return await model.request(request)
            except ModelError as exc:
                if not exc.retryable:
                    raise
                errors.append(exc)
        raise _all_failed(errors)

    async def stream(self, request: ModelRequest) -> AsyncIterator[StreamDelta | ModelResponse]:
        """Stream from the first model that starts answering; a model that fails
        before its first item hands over to the next."""
        errors: list[ModelError] = []
        for model in self.models:
            started = False
            try:
                async for item in model.stream(request):
                    started = True
                    yield item
                return
            except ModelError as exc:
                if started or not exc.retryable:
                    raise
                errors.append(exc)
        raise _all_failed(errors)

    async def warm_up(self, request: ModelRequest | None = None) -> None:
        """Warm up the first model (the one that answers unless it fails)."""
        await warm_up(self.models[0], request)

    async def aclose(self) -> None:
        """Close every model."""
        for model in self.models:
            await model.aclose()


def _all_failed(errors: list[ModelError]) -> ModelError:
    detail = "; ".join(f"{e.model_name or '?'}: {e}" for e in errors)
    return ModelError(f"all fallback models failed: {detail}", retryable=True)


async def warm_up(model: Model | Tiers, request: ModelRequest | None = None) -> None:
    """Get ``model`` ready for a run's first request, so that turn does not wait for it.

    Calls the model's optional ``warm_up(request)`` method: a local model starts its
    engine and, given the request, puts its system turn and tools in the KV cache; hosted
    models have nothing to do. Of ``Tiers``, only the tier the policy picks for turn 1 is
    warmed (starting both engines at once would slow the one that is needed). Errors are
    logged, not raised: the run's own first request meets them and reports them.
    """
    target: Any = model
    if isinstance(model, Tiers):
        try:
            info = TurnInfo(1, request) if request is not None else None
            target = model.model(model.policy(info) if info is not None else "standard")
        except Exception as exc:
            logger.debug("warm-up: no tier to warm (%s)", exc)
            return
    warm = getattr(target, "warm_up", None)
    if warm is None:
        return
    try:
        await warm(request)
    except Exception as exc:  # the first request raises it with its own context
        logger.debug("warm-up of %s failed: %s", getattr(target, "name", target), exc)


def warm_up_soon(
    model: Model | Tiers, request: ModelRequest | None = None
) -> asyncio.Task[None] | None:
    """Start :func:`warm_up` as a task of the running asyncio loop and return it (None when
    there is nothing to warm). The caller goes on starting toolkits meanwhile, hands the
    task to the loop (``RunConfig.warming``, awaited before the first request) and cancels
    it if the run ends first."""
    if not isinstance(model, Tiers) and getattr(model, "warm_up", None) is None:
        return None  # a hosted model: nothing to start
    try:
        loop = asyncio.get_running_loop()
    except RuntimeError:  # not asyncio (trio): no background warm-up
        return None
    return loop.create_task(warm_up(model, request), name="agentsdk warm-up")
