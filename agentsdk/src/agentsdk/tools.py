"""Typed tools: ``@tool``, ``Tool``, ``Toolkit`` and ``ToolContext``.

The JSON schema and the argument validator of a tool are built once, when it
is decorated; calling it does no signature or docstring work.
"""

from __future__ import annotations

import dataclasses
import functools
import inspect
import json
import time
import types
import typing
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar, Literal, overload

import anyio
import anyio.to_thread
from pydantic import BaseModel, ConfigDict, ValidationError, create_model
from pydantic.fields import FieldInfo
from pydantic_core import to_jsonable_python

from ._docstrings import parse_docstring
from ._jsonschema import SchemaProblem, compile_schema
from .artifacts import ArtifactStore
from .messages import Image, ImagePart, Message, TextPart, _text_part

__all__ = [
    "ApprovalRule",
    "SchemaProblem",
    "Tool",
    "ToolContext",
    "ToolError",
    "ToolOutcome",
    "ToolSpec",
    "Toolkit",
    "Unchanged",
    "compile_schema",
    "to_parts",
    "tool",
]


ApprovalRule = bool | Callable[[dict[str, Any]], bool]
"""``True`` (every call waits for approval), ``False``, or ``fn(arguments) -> bool``."""


class ToolError(Exception):
    """Raise inside a tool to tell the model what went wrong and how to fix it.

    The message is sent to the model as an error result, verbatim, followed by
    any ``images`` (e.g. the blank or broken frame the model should look at).

    ``instead``: the arguments of a call of this tool that would do what the refused call
    meant (a made-up property left out, say), when the tool can tell. The message should
    say that call too; ``instead`` keeps it as data on the result
    (:attr:`~agentsdk.messages.ToolResultPart.instead`), where a model connector may use
    it (the local one sends it when its model resends the refused call unchanged).
    """

    def __init__(
        self,
        message: str,
        *,
        images: Sequence[Image] = (),
        instead: dict[str, Any] | None = None,
    ):
        super().__init__(message)
        self.images = list(images)
        self.instead = instead


@dataclass(frozen=True)
class Unchanged:
    """Return ``Unchanged(value)`` from a tool whose call changed nothing, the world already
    being as it asked (a colour set to the colour it had): ``value`` is the result as
    usual. The loop guard counts such a call as no progress, like a repeat, so a model
    that keeps asking for what already is is told so and asked for its answer
    (:class:`~agentsdk.loopguard.LoopGuard`)."""

    value: Any


class ToolSpec(BaseModel):
    """What the model is told about a tool."""

    model_config = ConfigDict(frozen=True)

    name: str
    description: str
    parameters: dict[str, Any]
    side_effects: bool = False
    """The tool changes the world (``@tool(side_effects=True)``). Not sent to the model:
    tier policies read it (after a change, the stronger model decides what is next)."""
    creates: str | None = None
    """The argument that names the new thing a call of this tool makes (``"name"`` for
    ``add_object(name=...)``; ``@tool(creates="name")``), or None. Not sent to the model:
    a model that finds a named part of the request still missing can ask for a call that
    makes it under that name (the local engine pins the argument in its grammar)."""


@dataclass
class ToolContext:
    """Handed to a tool that declares a parameter of this type."""

    run_id: str
    call_id: str
    tool_name: str
    turn: int
    artifacts: ArtifactStore
    deps: Any = None
    report_progress: Callable[[float, float | None, str | None], Awaitable[None]] | None = None
    """Set by whoever runs the tool and can show progress (the MCP server)."""
    cancelled: bool = False
    """Set when the call timed out: a sync tool's thread cannot be killed, so a long
    one should poll this and return early."""
    finished_late: Callable[[float], None] | None = field(default=None, repr=False)
    """Told (from the tool's thread) how many seconds after its timeout a timed-out
    sync tool returned anyway; the agent reports it in the run's events and trace."""

    @property
    def idempotency_key(self) -> str:
        """The same for this call however often its run is resumed: pass it to an API
        that accepts idempotency keys so a retried side effect happens once."""
        return f"{self.run_id}/{self.call_id}"

    async def progress(
        self, progress: float, total: float | None = None, message: str | None = None
    ) -> None:
        """Say how far a long tool has got (``progress`` of ``total``, with an optional
        message). Served over MCP it becomes a progress notification; elsewhere it
        does nothing."""
        if self.report_progress is not None:
            await self.report_progress(progress, total, message)


@dataclass
class ToolOutcome:
    """The result of calling a tool once."""

    parts: list[TextPart | ImagePart]
    is_error: bool = False
    kind: Literal["ok", "invalid_arguments", "error", "timeout"] = "ok"
    instead: dict[str, Any] | None = None
    """The call a refusal offers (``ToolError(instead=...)``)."""
    unchanged: bool = False
    """The call changed nothing (the tool returned :class:`Unchanged`)."""

    @property
    def text(self) -> str:
        """All text parts joined by newlines."""
        return "\n".join([p.text for p in self.parts if isinstance(p, TextPart)])

    @property
    def images(self) -> list[ImagePart]:
        """The image parts."""
        return [p for p in self.parts if isinstance(p, ImagePart)]


def _json_text(value: Any) -> str:
    return json.dumps(
        to_jsonable_python(value, fallback=str), separators=(",", ":"), ensure_ascii=False
    )


def to_parts(value: Any) -> list[TextPart | ImagePart]:
    """Turn whatever a tool returned into message parts."""
    if value is None:
        return [_text_part("(no output)")]
    kind = type(value)
    if kind is str:
        return [_text_part(value)]
    if kind is int:  # the common cases, without validation or pydantic's encoder
        return [_text_part(str(value))]
    if isinstance(value, str):
        return [TextPart(text=value)]
    if isinstance(value, bool | int | float):
        return [_text_part(json.dumps(value))]
    if isinstance(value, Image):
        return [value.to_part()]
    if isinstance(value, TextPart | ImagePart):
        return [value]
    if isinstance(value, list | tuple) and any(
        isinstance(v, Image | ImagePart | TextPart) for v in value
    ):
        parts: list[TextPart | ImagePart] = []
        for item in value:
            parts.extend(to_parts(item))
        return parts
    if isinstance(value, BaseModel):
        return [TextPart(text=value.model_dump_json(exclude_none=True))]
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return [TextPart(text=_json_text(dataclasses.asdict(value)))]
    return [TextPart(text=_json_text(value))]


def _format_validation_error(
    tool_name: str, err: ValidationError, accepted: Sequence[str] = ()
) -> str:
    """The model-facing text of a validation error. An argument the tool does not take is
    answered with the ones it does (a model that remembers an older signature, or guesses
    one, gets the list instead of having to find it in the schema again)."""
    lines = [f"Invalid arguments for tool '{tool_name}':"]
    unknown = False
    for e in err.errors(include_url=False):
        loc = ".".join(str(x) for x in e["loc"]) or "(arguments)"
        if e["type"] == "extra_forbidden" and len(e["loc"]) == 1:
            unknown = True
            lines.append(f"- {loc}: {tool_name} has no argument named {loc}")
        else:
            lines.append(f"- {loc}: {e['msg']}")
    if unknown and accepted:
        lines.append(f"{tool_name} takes: {', '.join(accepted)}.")
    lines.append("Call the tool again with corrected arguments.")
    return "\n".join(lines)


class Tool:
    """A function the model can call, with its schema and validator.

    Made by ``@tool``; call it with :meth:`call` (what the agent loop does) or
    directly like the original function.
    """

    def __init__(
        self,
        fn: Callable[..., Any],
        *,
        name: str | None = None,
        description: str | None = None,
        timeout: float | None = None,
        retries: int = 2,
        sequential: bool = False,
        needs_approval: ApprovalRule = False,
        side_effects: bool = False,
        creates: str | None = None,
    ):
        self.fn = fn
        self.name = name or fn.__name__
        self.timeout = timeout
        self.retries = retries
        self.sequential = sequential
        self.needs_approval: ApprovalRule = needs_approval
        self.side_effects = side_effects
        self._instance: Any = None
        self._is_async = inspect.iscoroutinefunction(fn)
        doc_description, param_docs = parse_docstring(fn.__doc__)
        self.description = description or doc_description or self.name
        self._context_param: str | None = None
        self._is_method = False
        self._args_model = self._build_model(param_docs)
        self.parameters: dict[str, Any] = _drop_titles(self._args_model.model_json_schema())
        self.creates = _checked_creates(self.name, self.parameters, creates)
        self._validate_args = self._args_model.__pydantic_validator__.validate_python
        functools.update_wrapper(self, fn)

    def _build_model(self, param_docs: dict[str, str]) -> type[BaseModel]:
        sig = inspect.signature(self.fn)
        try:
            hints = typing.get_type_hints(self.fn, include_extras=True)
        except Exception as exc:  # an unresolvable forward reference is a user error
            raise TypeError(f"cannot resolve type hints of tool {self.name!r}: {exc}") from exc
        fields: dict[str, Any] = {}
        for i, (pname, param) in enumerate(sig.parameters.items()):
            if i == 0 and pname in ("self", "cls"):
                self._is_method = True
                continue
            if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
                raise TypeError(f"tool {self.name!r}: *args and **kwargs are not supported")
            annotation = hints.get(pname, Any)
            if _is_context(annotation):
                self._context_param = pname
                continue
            default = ... if param.default is param.empty else param.default
            doc = param_docs.get(pname)
            if typing.get_origin(annotation) is typing.Annotated:
                fields[pname] = (annotation, default)
                if doc:  # attach the docstring text unless the Field already has one
                    base, *meta = typing.get_args(annotation)
                    if not any(isinstance(m, FieldInfo) and m.description for m in meta):
                        fields[pname] = (typing.Annotated[base, *meta, _described(doc)], default)
            elif isinstance(default, FieldInfo):
                if doc and not default.description:
                    default.description = doc
                fields[pname] = (annotation, default)
            else:
                fields[pname] = (annotation, _described(doc, default))
        model_name = "".join(w.capitalize() for w in self.name.split("_")) + "Arguments"
        return create_model(
            model_name,
            __config__=ConfigDict(extra="forbid", arbitrary_types_allowed=True),
            **fields,
        )

    # -- descriptor: methods of a Toolkit bind to their instance ------------
    def __get__(self, instance: Any, owner: type | None = None) -> Tool:
        if instance is None or not self._is_method:
            return self
        cache = instance.__dict__.setdefault("_agentsdk_bound_tools", {})
        bound = cache.get(id(self))
        if bound is None:
            bound = self._copy()
            bound._instance = instance
            cache[id(self)] = bound
        return typing.cast(Tool, bound)

    def _copy(self) -> Tool:
        new = object.__new__(Tool)
        new.__dict__.update(self.__dict__)
        return new

    def renamed(self, name: str) -> Tool:
        """A copy of this tool under another name (used for toolkit prefixes)."""
        new = self._copy()
        new.name = name
        return new

    def spec(self) -> ToolSpec:
        """The name, description and JSON schema sent to the model."""
        return ToolSpec(
            name=self.name,
            description=self.description,
            parameters=self.parameters,
            side_effects=self.side_effects,
            creates=self.creates,
        )

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if self._instance is not None:
            return self.fn(self._instance, *args, **kwargs)
        return self.fn(*args, **kwargs)

    def __repr__(self) -> str:
        return f"Tool({self.name!r})"

    async def call(self, arguments: dict[str, Any], ctx: ToolContext | None = None) -> ToolOutcome:
        """Validate ``arguments``, run the tool and turn its result into parts.

        Never raises for a problem the model can fix: those come back as an
        outcome with ``is_error`` set. Cancellation propagates.
        """
        try:
            validated = self._validate_args(arguments)
        except ValidationError as err:
            text = _format_validation_error(
                self.name, err, list(self.parameters.get("properties", {}))
            )
            return ToolOutcome([TextPart(text=text)], is_error=True, kind="invalid_arguments")
        kwargs = validated.__dict__.copy()
        if self._context_param is not None:
            kwargs[self._context_param] = ctx
        try:
            if self.timeout is None:  # a cancel scope costs ~10 µs; skip it when unused
                value = await self._invoke(kwargs)
            else:
                with anyio.fail_after(self.timeout):
                    value = await self._invoke(kwargs, ctx)
        except TimeoutError:
            msg = f"Tool '{self.name}' timed out after {self.timeout:g} s."
            if ctx is not None:
                ctx.cancelled = True
            if not self._is_async:
                msg += " Its thread keeps running until it returns (threads cannot be killed)."
            return ToolOutcome([TextPart(text=msg)], is_error=True, kind="timeout")
        except ToolError as exc:
            parts: list[TextPart | ImagePart] = [TextPart(text=str(exc))]
            parts.extend(image.to_part() for image in exc.images)
            return ToolOutcome(parts, is_error=True, kind="error", instead=exc.instead)
        except Exception as exc:
            text = f"Tool '{self.name}' failed: {type(exc).__name__}: {exc}"
            return ToolOutcome([TextPart(text=text)], is_error=True, kind="error")
        if isinstance(value, Unchanged):
            return ToolOutcome(to_parts(value.value), unchanged=True)
        return ToolOutcome(to_parts(value))

    def _invoke(self, kwargs: dict[str, Any], ctx: ToolContext | None = None) -> Awaitable[Any]:
        # returns the tool's own coroutine rather than wrapping it in another
        fn = self.fn
        if self._instance is not None:
            fn = functools.partial(fn, self._instance)
        if self._is_async:
            return typing.cast(Awaitable[Any], fn(**kwargs))
        call = functools.partial(fn, **kwargs)
        if ctx is not None and self.timeout is not None:
            call = functools.partial(_watched, call, ctx, time.monotonic() + self.timeout)
        return anyio.to_thread.run_sync(call, abandon_on_cancel=True)

    @classmethod
    def from_schema(
        cls,
        name: str,
        description: str,
        parameters: dict[str, Any],
        fn: Callable[..., Any],
        *,
        timeout: float | None = None,
        retries: int = 2,
        sequential: bool = False,
        validate: bool = True,
        needs_approval: ApprovalRule = False,
        side_effects: bool = False,
        creates: str | None = None,
    ) -> Tool:
        """A tool from a name, a description, a JSON schema for its arguments and a
        function, for tools that are described rather than written in Python (an MCP
        server's, an OpenAPI operation's).

        ``fn(arguments)`` or ``fn(arguments, ctx)``, sync or async, receives the
        arguments as one dict (their names need not be Python identifiers) and
        returns what any tool returns. Arguments that do not match ``parameters`` come
        back to the model as an error result it can fix, like a decorated tool's.
        ``needs_approval``, ``side_effects`` and ``creates`` mean what they mean for
        ``@tool``.

        Raises:
            ValueError: ``parameters`` is not a usable JSON schema (or needs the
                ``jsonschema`` package for keywords beyond the common ones).
        """
        from ._jsonschema import schema_tool

        made = schema_tool(
            cls, name, description, parameters, fn, timeout, retries, sequential, validate
        )
        made.needs_approval, made.side_effects = needs_approval, side_effects
        made.creates = _checked_creates(name, parameters, creates)
        return made


def _checked_creates(tool: str, parameters: dict[str, Any], creates: str | None) -> str | None:
    """``creates``, once it is known to name a string parameter of the tool."""
    if creates is None:
        return None
    schema = (parameters.get("properties") or {}).get(creates)
    if not isinstance(schema, dict):
        raise TypeError(f"tool {tool!r}: creates={creates!r} is not one of its parameters")
    kinds = [schema] + [s for s in schema.get("anyOf", []) if isinstance(s, dict)]
    if not any(s.get("type") == "string" for s in kinds):
        raise TypeError(f"tool {tool!r}: creates={creates!r} must be a string parameter")
    return creates


def _watched(call: Callable[[], Any], ctx: ToolContext, deadline: float) -> Any:
    """Run a sync tool in its thread; if it returns after its timeout, say so."""
    try:
        return call()
    finally:
        if ctx.cancelled and ctx.finished_late is not None:
            ctx.finished_late(max(0.0, time.monotonic() - deadline))


def _is_context(annotation: Any) -> bool:
    """``ToolContext``, ``ToolContext | None`` or ``Optional[ToolContext]``."""
    if annotation is ToolContext:
        return True
    return ToolContext in typing.get_args(annotation) and typing.get_origin(annotation) in (
        typing.Union,
        types.UnionType,
    )


def _drop_titles(schema: Any) -> Any:
    """Pydantic's generated titles only cost the model tokens."""
    if isinstance(schema, dict):
        return {
            k: _drop_titles(v)
            for k, v in schema.items()
            if not (k == "title" and isinstance(v, str))
        }
    if isinstance(schema, list):
        return [_drop_titles(v) for v in schema]
    return schema


def _described(doc: str | None, default: Any = ...) -> Any:
    from pydantic import Field

    return Field(default, description=doc) if doc else default


@overload
def tool(fn: Callable[..., Any], /) -> Tool: ...
@overload
def tool(
    *,
    name: str | None = None,
    description: str | None = None,
    timeout: float | None = None,
    retries: int = 2,
    sequential: bool = False,
    needs_approval: ApprovalRule = False,
    side_effects: bool = False,
    creates: str | None = None,
) -> Callable[[Callable[..., Any]], Tool]: ...
def tool(
    fn: Callable[..., Any] | None = None,
    /,
    *,
    name: str | None = None,
    description: str | None = None,
    timeout: float | None = None,
    retries: int = 2,
    sequential: bool = False,
    needs_approval: ApprovalRule = False,
    side_effects: bool = False,
    creates: str | None = None,
) -> Tool | Callable[[Callable[..., Any]], Tool]:
    """Make a function (sync or async) or a Toolkit method into a tool.

    Args:
        name: The name the model sees; the function name by default.
        description: Overrides the docstring's description.
        timeout: Seconds before the call is cancelled and reported as timed out.
        retries: How many times the model may retry after invalid arguments.
        sequential: Never run this tool at the same time as other calls.
        needs_approval: ``True``, or ``fn(arguments) -> bool`` deciding per call: the
            run stops before the call and waits for a person (see ``agentsdk.state``).
        side_effects: The tool changes the world: a run resumed after a crash never
            runs a call of it twice (the call is recorded before it runs).
        creates: The argument whose value names the new thing a call makes
            (``"name"`` for ``add_object(name, shape)``): a model can then ask for the
            call that makes a named part of the request still missing, under that name.
            Must be one of the tool's string parameters.
    """

    def wrap(f: Callable[..., Any]) -> Tool:
        return Tool(
            f,
            name=name,
            description=description,
            timeout=timeout,
            retries=retries,
            sequential=sequential,
            needs_approval=needs_approval,
            side_effects=side_effects,
            creates=creates,
        )

    return wrap(fn) if fn is not None else wrap


class Toolkit:
    """A named group of tools sharing a resource (a browser, a worker process).

    Subclass it, decorate methods with ``@tool``, and override :meth:`start`
    and :meth:`close` for the resource. ``async with toolkit:`` starts and
    closes it; an agent does that for the toolkits it is given.
    """

    name: ClassVar[str] = "toolkit"
    groups_available: ClassVar[Mapping[str, Sequence[str]]] = {}
    """Tool names by group, for a toolkit that offers some groups only
    (:meth:`tools_of_groups`, :func:`check_groups`); empty for the others."""
    instructions: str | None = None
    """How a model should work with these tools (units, conventions, what the results
    mean), a few sentences. An agent puts it in its system prompt after its own
    instructions (``Agent(toolkit_instructions=False)`` leaves it out), and the MCP
    server offers it as the server's instructions. ``None``: nothing to add."""

    def __init__(self, *, prefix: str | None = None):
        self.prefix = prefix
        self._entered = 0

    async def start(self) -> None:
        """Acquire the shared resource. The default does nothing."""

    async def close(self) -> None:
        """Release the shared resource; safe to call twice. The default does nothing."""

    async def reset(self) -> None:
        """Return the toolkit's world to a fresh, empty state (an empty scene, a new
        project) between tasks, keeping its engine running where it can.

        The default closes and starts the toolkit again when it is open; toolkits with
        an expensive engine override it with something cheaper.
        """
        if self._entered > 0:
            await self.close()
            await self.start()

    def on_answer(self, answer: str, messages: Sequence[Message]) -> str:
        """Called with the run's final text answer; returns it, possibly completed with
        what this toolkit knows for sure (e.g. the citations of the figures its tools
        returned). ``RunResult.output`` carries the result; the transcript keeps the
        model's own words. The default returns the answer unchanged."""
        return answer

    async def __aenter__(self) -> typing.Self:
        if self._entered == 0:
            await self.start()
        self._entered += 1
        return self

    async def __aexit__(self, *exc: object) -> None:
        self._entered -= 1
        if self._entered == 0:
            await self.close()

    def tools(self) -> list[Tool]:
        """The tools of this toolkit, bound to it, with the prefix applied."""
        found: list[Tool] = []
        seen: set[str] = set()
        for klass in type(self).__mro__:
            for attr, value in vars(klass).items():
                if isinstance(value, Tool) and attr not in seen:
                    seen.add(attr)
                    bound = getattr(self, attr)
                    if self.prefix:
                        bound = bound.renamed(f"{self.prefix}_{bound.name}")
                    found.append(bound)
        return found

    def tools_of_groups(self, groups: Sequence[str]) -> list[Tool]:
        """The tools of ``groups`` (names in ``groups_available``, see :func:`check_groups`),
        group by group in the order listed there, with the prefix applied."""
        available = self.groups_available
        by_name = {
            t.name.removeprefix(f"{self.prefix}_") if self.prefix else t.name: t
            for t in Toolkit.tools(self)
        }
        return [by_name[name] for group in groups for name in available[group]]

    def only(self, *names: str) -> Toolkit:
        """This toolkit offering just the named tools (small models choose
        better among few). Starting and closing go to this toolkit."""
        known = {t.name for t in self.tools()}
        unknown = [n for n in names if n not in known]
        if unknown:
            raise ValueError(
                f"{type(self).__name__} has no tool {unknown[0]!r} (tools: {', '.join(sorted(known))})"
            )
        return _ToolkitSubset(self, names)


class _ToolkitSubset(Toolkit):
    def __init__(self, inner: Toolkit, names: Sequence[str]):
        super().__init__()
        self.inner = inner
        self.names = list(names)
        self.name = inner.name  # type: ignore[misc]

    async def __aenter__(self) -> typing.Self:
        await self.inner.__aenter__()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.inner.__aexit__(*exc)

    async def reset(self) -> None:
        await self.inner.reset()

    def on_answer(self, answer: str, messages: Sequence[Message]) -> str:
        return self.inner.on_answer(answer, messages)

    @property
    def instructions(self) -> str | None:  # type: ignore[override]  # the inner toolkit's
        return self.inner.instructions

    def tools(self) -> list[Tool]:
        # A toolkit whose tools change (an MCP server's) may have dropped one since.
        by_name = {t.name: t for t in self.inner.tools()}
        return [by_name[n] for n in self.names if n in by_name]

    def __getattr__(self, name: str) -> Any:
        # The inner toolkit's tools_version shows through: a subset of a toolkit whose
        # tools change changes with it (``tools_can_change``).
        if name == "tools_version" and "inner" in self.__dict__:
            return getattr(self.inner, name)
        raise AttributeError(name)


def check_groups(
    groups: Sequence[str] | str, available: Mapping[str, Sequence[str]]
) -> tuple[str, ...]:
    """The tool groups asked for, in order and once each: ``"all"`` expands to every group
    of ``available``; an unknown name raises ``ValueError`` listing the known ones.

    For toolkits that offer a small ``core`` group by default and the rest on request
    (``groups=["core", "scenes"]`` or ``"all"``): a small model picks better among few
    tools, and every tool's schema is in its prompt on every turn.
    """
    chosen: list[str] = []
    for group in [groups] if isinstance(groups, str) else groups:
        for name in list(available) if group == "all" else [group]:
            if name not in available:
                raise ValueError(
                    f"unknown tool group {group!r}; groups: {', '.join(available)}, all"
                )
            if name not in chosen:
                chosen.append(name)
    return tuple(chosen)


ToolLike = Tool | Toolkit | Callable[..., Any] | str


def collect_tools(items: Sequence[Tool | Toolkit | Callable[..., Any]]) -> list[Tool]:
    """Flatten tools, toolkits and plain functions into a list of tools."""
    out: list[Tool] = []
    for item in items:
        if isinstance(item, Toolkit):
            out.extend(item.tools())
        elif isinstance(item, Tool):
            out.append(item)
        elif callable(item):
            out.append(Tool(item))
        else:
            raise TypeError(f"not a tool, toolkit or function: {item!r}")
    return out


def tools_can_change(toolkit: object) -> bool:
    """Whether ``toolkit``'s tools can change while it runs, as an MCP server's can. Such a
    toolkit has an integer ``tools_version`` that grows on each change (the agent re-reads
    its tools then), and it lists its tools only once it has started."""
    return hasattr(toolkit, "tools_version")


def tools_version(toolkit: object) -> int:
    """``toolkit``'s ``tools_version``; 0 for a toolkit whose tools never change."""
    return int(getattr(toolkit, "tools_version", 0))


def instructions_of(toolkits: Sequence[Toolkit], *, besides: Sequence[str] = ()) -> list[str]:
    """The toolkits' ``instructions``, in order, each text once, leaving out empty ones and
    those a text of ``besides`` already contains (an agent's own instructions; a task
    suite passes its toolkit's text as its own)."""
    found: list[str] = []
    for toolkit in toolkits:
        text = toolkit.instructions
        if text and text.strip() and not any(text.strip() in t for t in [*besides, *found]):
            found.append(text)
    return found


__all__ += [
    "ToolLike",
    "check_groups",
    "collect_tools",
    "instructions_of",
    "tools_can_change",
    "tools_version",
]
