"""What a model fault looks like to the user: the field named for an answer that cannot be
read, and the one rule every response obeys (a usable turn, or the documented error).
Network failures arrive in plain words from ``agentsdk.http``."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from pydantic import ValidationError

from agentsdk import (
    ContentFilteredError,
    EmptyResponseError,
    MalformedResponseError,
    ModelError,
    ModelResponse,
    ModelSettings,
    ResponseTruncatedError,
)

_T = TypeVar("_T")


def _field(location: tuple[int | str, ...]) -> str:
    text = ""
    for part in location:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else str(part))
    return text or "body"


def _shown(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def malformed(model_name: str, field: str, problem: str) -> MalformedResponseError:
    """The error for an answer we cannot read (retryable, like a 5xx)."""
    return MalformedResponseError(
        f"{model_name}: the server sent a malformed response: {field} {problem}",
        field=field,
        model_name=model_name,
    )


def from_validation(
    model_name: str, exc: ValidationError, *, prefix: str = ""
) -> MalformedResponseError:
    """A MalformedResponseError naming the first field pydantic could not read."""
    first = exc.errors()[0]
    if first["type"] == "json_invalid":
        what = "stream event" if prefix else "body"
        return malformed(model_name, what, "is not JSON")
    field = _field(tuple(first["loc"]))
    field = f"{prefix}.{field}" if prefix else field
    return malformed(model_name, field, f"is {_shown(first.get('input'))} ({first['msg']})")


def guarded(model_name: str, parse: Callable[[], _T]) -> _T:
    """``parse()``; a shape the parser did not foresee is still a MalformedResponseError,
    never a bare ValueError, KeyError or AttributeError."""
    try:
        return parse()
    except ModelError:
        raise
    except ValidationError as exc:
        raise from_validation(model_name, exc) from None
    except (ValueError, TypeError, LookupError, AttributeError) as exc:
        raise MalformedResponseError(
            f"{model_name}: the server sent a response that could not be read "
            f"({type(exc).__name__}: {str(exc)[:200]})",
            field="body",
            model_name=model_name,
        ) from None


def _quoted(text: str, limit: int = 200) -> str:
    return repr(text if len(text) <= limit else text[:limit] + "...")


def checked(
    response: ModelResponse, *, stop_reason: str | None, settings: ModelSettings
) -> ModelResponse:
    """``response`` if it is a usable turn (text or a tool call), else the documented error.

    ``refusal`` raises ContentFilteredError; ``max_tokens`` ResponseTruncatedError unless
    ``settings.allow_truncated`` and something usable came first; nothing at all
    EmptyResponseError. The finish reason is always set (inferred when the server sent none).
    """
    name = response.model_name
    text = response.text
    has_calls = bool(response.tool_calls)
    reason = response.finish_reason
    said = f"stop_reason {stop_reason!r}" if stop_reason else "no stop_reason"
    if reason == "content_filter":
        after = f": {_quoted(text)}" if text else " without a word"
        raise ContentFilteredError(
            f"{name}: the model refused ({said}){after}", refusal=text or None, model_name=name
        )
    usable = has_calls or bool(text.strip())
    if reason == "length" and not (settings.allow_truncated and usable):
        limit = (
            f"max_tokens={settings.max_tokens}" if settings.max_tokens else "the max_tokens sent"
        )
        hint = (
            "nothing usable came before the cut"
            if not usable
            else "raise max_tokens, or set ModelSettings(allow_truncated=True) to accept it"
        )
        raise ResponseTruncatedError(
            f"{name}: the answer was cut off at the output-token limit ({said}, "
            f"{response.usage.output_tokens} output tokens, {limit}); {hint}",
            response=response,
            model_name=name,
        )
    if not usable:
        what = "only whitespace" if text else "no text and no tool calls"
        raise EmptyResponseError(
            f"{name}: the server answered with {what} ({said})",
            model_name=name,
            finish_reason=reason,
        )
    return response
