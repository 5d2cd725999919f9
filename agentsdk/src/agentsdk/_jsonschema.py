"""Argument checks for tools described by a JSON schema (``Tool.from_schema``).

The schemas tools arrive with (MCP servers, OpenAPI, hand-written) mostly use a
small part of JSON Schema: typed properties, ``required``, ``enum``, bounds,
``anyOf`` for optional values and local ``$ref``. That part is compiled here into
plain Python checks, several times faster than a general validator (a tool call
should not pay ~70 µs to look at two strings). A schema using anything else is
checked by the ``jsonschema`` package when it is installed.
"""

from __future__ import annotations

import inspect
import re
import types
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError
from pydantic_core import PydanticCustomError

if TYPE_CHECKING:  # pragma: no cover
    from .tools import Tool, ToolContext

__all__ = ["SchemaProblem", "compile_schema", "schema_tool"]

Problem = tuple[tuple[str | int, ...], str]
"""Where in the arguments (a path of keys and indexes) and what is wrong."""
Check = Callable[[Any, tuple[str | int, ...], list[Problem]], None]


class SchemaProblem(ValueError):
    """The schema itself cannot be used (malformed, or needs ``jsonschema``)."""


# Keywords that only describe: they never make a value invalid.
_ANNOTATIONS = frozenset(
    {
        "$schema",
        "$id",
        "$comment",
        "title",
        "description",
        "default",
        "examples",
        "deprecated",
        "readOnly",
        "writeOnly",
        "format",  # jsonschema asserts formats only with a format checker; neither do we
        "contentMediaType",
        "contentEncoding",
        "$defs",
        "definitions",
    }
)
_SUPPORTED = _ANNOTATIONS | {
    "type",
    "properties",
    "required",
    "additionalProperties",
    "items",
    "enum",
    "const",
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "minLength",
    "maxLength",
    "pattern",
    "minItems",
    "maxItems",
    "minProperties",
    "maxProperties",
    "anyOf",
    "allOf",
    "oneOf",
    "not",
    "$ref",
}
_TYPE_NAMES = {
    str: "string",
    bool: "boolean",
    int: "integer",
    float: "number",
    list: "array",
    dict: "object",
    type(None): "null",
}


# JSON types that one Python type test decides ("integer" does not: 1.0 is one)
_EXACT: dict[str, tuple[type, ...]] = {
    "string": (str,),
    "boolean": (bool,),
    "number": (int, float),
    "object": (dict,),
    "array": (list,),
    "null": (type(None),),
}


class _Unsupported(Exception):
    pass


def _kind(value: Any) -> str:
    return _TYPE_NAMES.get(type(value), type(value).__name__)


def _is_type(value: Any, name: str) -> bool:
    kind = type(value)
    if name == "string":
        return kind is str
    if name == "integer":  # JSON Schema 6+: 1.0 is an integer, True is not
        return kind is int or (kind is float and value.is_integer())
    if name == "number":
        return kind is int or kind is float
    if name == "boolean":
        return kind is bool
    if name == "object":
        return kind is dict
    if name == "array":
        return kind is list
    if name == "null":
        return value is None
    raise _Unsupported(f"unknown type {name!r}")


def _json_equal(a: Any, b: Any) -> bool:
    """Equality as JSON sees it: 1 == 1.0, but True is not 1."""
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_json_equal(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_json_equal(a[k], b[k]) for k in a)
    return bool(a == b)


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


class _Compiler:
    def __init__(self, root: Mapping[str, Any]):
        self.root = root
        self.refs: dict[str, Check] = {}

    def compile(self, schema: Any) -> Check:
        if schema is True or schema == {}:
            return _accept
        if schema is False:
            return _reject
        if not isinstance(schema, Mapping):
            raise SchemaProblem(f"a schema must be an object or a boolean, not {_short(schema)}")
        unknown = set(schema) - _SUPPORTED
        if unknown:
            raise _Unsupported(", ".join(sorted(unknown)))
        if "$ref" in schema:
            if len(set(schema) - _ANNOTATIONS) > 1:  # siblings of $ref differ between drafts
                raise _Unsupported("$ref with siblings")
            return self._ref(str(schema["$ref"]))
        checks = [c for c in self._checks(schema) if c is not None]
        if len(checks) == 1:
            return checks[0]

        def all_of(value: Any, path: tuple[str | int, ...], out: list[Problem]) -> None:
            for check in checks:
                check(value, path, out)

        return all_of

    def _ref(self, ref: str) -> Check:
        if ref in self.refs:
            return self.refs[ref]
        if not ref.startswith("#"):
            raise _Unsupported("remote $ref")
        target: Any = self.root
        for token in ref[1:].split("/")[1:]:
            token = token.replace("~1", "/").replace("~0", "~")
            if not isinstance(target, Mapping) or token not in target:
                raise SchemaProblem(f"$ref {ref!r} points at nothing in the schema")
            target = target[token]
        compiled: list[Check] = []
        # registered before compiling, so a recursive schema refers to itself
        self.refs[ref] = lambda v, p, o: compiled[0](v, p, o)
        compiled.append(self.compile(target))
        return self.refs[ref]

    def _checks(self, s: Mapping[str, Any]) -> list[Check | None]:
        return [
            self._type(s.get("type")),
            self._enum(s),
            self._numbers(s),
            self._strings(s),
            self._object(s),
            self._array(s),
            self._combinators(s),
        ]

    def _type(self, declared: Any) -> Check | None:
        if declared is None:
            return None
        names = [declared] if isinstance(declared, str) else list(declared)
        for name in names:
            _is_type(None, name)  # an unknown type name is unsupported, found now
        wanted = " or ".join(names)
        exact = {_EXACT.get(n) for n in names}
        if None not in exact:  # only types a Python type decides: one set lookup
            kinds = frozenset(k for group in exact if group for k in group)

            def check_exact(value: Any, path: tuple[str | int, ...], out: list[Problem]) -> None:
                if type(value) not in kinds:
                    out.append((path, f"expected {wanted}, got {_kind(value)} {_short(value)}"))

            return check_exact

        if names == ["integer"]:

            def check_integer(value: Any, path: tuple[str | int, ...], out: list[Problem]) -> None:
                kind = type(value)
                if kind is not int and not (kind is float and value.is_integer()):
                    out.append((path, f"expected integer, got {_kind(value)} {_short(value)}"))

            return check_integer

        def check(value: Any, path: tuple[str | int, ...], out: list[Problem]) -> None:
            if not any(_is_type(value, n) for n in names):
                out.append((path, f"expected {wanted}, got {_kind(value)} {_short(value)}"))

        return check

    def _enum(self, s: Mapping[str, Any]) -> Check | None:
        if "const" in s:
            const = s["const"]

            def check_const(value: Any, path: tuple[str | int, ...], out: list[Problem]) -> None:
                if not _json_equal(value, const):
                    out.append((path, f"must be {_short(const)}"))

            return check_const
        if "enum" not in s:
            return None
        options = list(s["enum"])
        listed = ", ".join(_short(o) for o in options)

        def check_enum(value: Any, path: tuple[str | int, ...], out: list[Problem]) -> None:
            if not any(_json_equal(value, o) for o in options):
                out.append((path, f"must be one of {listed}, got {_short(value)}"))

        return check_enum

    def _numbers(self, s: Mapping[str, Any]) -> Check | None:
        bounds: list[tuple[Callable[[float, float], bool], float, str]] = []
        for key, ok, word in (
            ("minimum", lambda v, b: v >= b, ">="),
            ("maximum", lambda v, b: v <= b, "<="),
            ("exclusiveMinimum", lambda v, b: v > b, ">"),
            ("exclusiveMaximum", lambda v, b: v < b, "<"),
        ):
            if key in s:
                if isinstance(s[key], bool):  # draft 4's boolean form
                    raise _Unsupported(key)
                bounds.append((ok, s[key], word))
        if not bounds:
            return None

        def check(value: Any, path: tuple[str | int, ...], out: list[Problem]) -> None:
            if type(value) in (int, float):
                for ok, bound, word in bounds:
                    if not ok(value, bound):
                        out.append((path, f"must be {word} {bound}, got {value}"))

        return check

    def _strings(self, s: Mapping[str, Any]) -> Check | None:
        low, high = s.get("minLength"), s.get("maxLength")
        pattern = re.compile(s["pattern"]) if "pattern" in s else None
        if low is None and high is None and pattern is None:
            return None

        def check(value: Any, path: tuple[str | int, ...], out: list[Problem]) -> None:
            if type(value) is not str:
                return
            if low is not None and len(value) < low:
                out.append((path, f"must have at least {low} characters"))
            if high is not None and len(value) > high:
                out.append((path, f"must have at most {high} characters"))
            if pattern is not None and not pattern.search(value):
                out.append((path, f"must match the pattern {pattern.pattern!r}"))

        return check

    def _object(self, s: Mapping[str, Any]) -> Check | None:
        props = {k: self.compile(v) for k, v in (s.get("properties") or {}).items()}
        required = list(s.get("required") or ())
        extra = s.get("additionalProperties", True)
        extra_check = None if extra is True or extra is False else self.compile(extra)
        low, high = s.get("minProperties"), s.get("maxProperties")
        if not props and not required and extra is True and low is None and high is None:
            return None
        allowed = ", ".join(props) or "none"

        def check(value: Any, path: tuple[str | int, ...], out: list[Problem]) -> None:
            if type(value) is not dict:
                return
            for name in required:
                if name not in value:
                    out.append(((*path, name), "this required argument is missing"))
            for key, item in value.items():
                sub = props.get(key)
                if sub is not None:
                    sub(item, (*path, key), out)
                elif extra is False:
                    out.append(((*path, key), f"unexpected argument (allowed: {allowed})"))
                elif extra_check is not None:
                    extra_check(item, (*path, key), out)
            if low is not None and len(value) < low:
                out.append((path, f"needs at least {low} properties"))
            if high is not None and len(value) > high:
                out.append((path, f"takes at most {high} properties"))

        return check

    def _array(self, s: Mapping[str, Any]) -> Check | None:
        items = s.get("items")
        if isinstance(items, list):  # the tuple form changed meaning between drafts
            raise _Unsupported("items as a list")
        item_check = None if items is None else self.compile(items)
        low, high = s.get("minItems"), s.get("maxItems")
        if item_check is None and low is None and high is None:
            return None

        def check(value: Any, path: tuple[str | int, ...], out: list[Problem]) -> None:
            if type(value) is not list:
                return
            if item_check is not None:
                for i, item in enumerate(value):
                    item_check(item, (*path, i), out)
            if low is not None and len(value) < low:
                out.append((path, f"needs at least {low} items, got {len(value)}"))
            if high is not None and len(value) > high:
                out.append((path, f"takes at most {high} items, got {len(value)}"))

        return check

    def _combinators(self, s: Mapping[str, Any]) -> Check | None:
        parts: list[Check] = []
        for sub in s.get("allOf") or ():
            parts.append(self.compile(sub))
        for key in ("anyOf", "oneOf"):
            if key in s:
                parts.append(self._choice(key, [self.compile(sub) for sub in s[key]]))
        if "not" in s:
            negated = self.compile(s["not"])

            def check_not(value: Any, path: tuple[str | int, ...], out: list[Problem]) -> None:
                if not _problems(negated, value):
                    out.append((path, "must not match the excluded schema"))

            parts.append(check_not)
        if not parts:
            return None

        def check(value: Any, path: tuple[str | int, ...], out: list[Problem]) -> None:
            for part in parts:
                part(value, path, out)

        return check

    def _choice(self, key: str, options: list[Check]) -> Check:
        def check(value: Any, path: tuple[str | int, ...], out: list[Problem]) -> None:
            results: list[list[Problem]] = [_problems(o, value, path) for o in options]
            matched = sum(1 for r in results if not r)
            if (key == "anyOf" and matched == 0) or (key == "oneOf" and matched != 1):
                if matched > 1:
                    out.append((path, "matches more than one of the allowed forms"))
                else:  # the closest form's problems say the most
                    closest: list[Problem] = min(results, key=len)
                    out.extend(closest)

        return check


def _accept(value: Any, path: tuple[str | int, ...], out: list[Problem]) -> None:
    return None


def _reject(value: Any, path: tuple[str | int, ...], out: list[Problem]) -> None:
    out.append((path, "no value is allowed here"))


def _problems(check: Check, value: Any, path: tuple[str | int, ...] = ()) -> list[Problem]:
    out: list[Problem] = []
    check(value, path, out)
    return out


def _general_checker(schema: Mapping[str, Any]) -> Callable[[Any], list[Problem]]:
    try:
        import jsonschema
    except ImportError as exc:
        raise SchemaProblem(
            "this schema uses JSON Schema keywords that need the jsonschema package "
            "(pip install jsonschema, or agentsdk[mcp]); or pass validate=False"
        ) from exc
    cls = jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator)
    try:
        cls.check_schema(schema)
    except jsonschema.SchemaError as exc:
        raise SchemaProblem(f"the schema is not valid JSON Schema: {exc.message}") from exc
    validator = cls(schema)

    def check(value: Any) -> list[Problem]:
        if validator.is_valid(value):
            return []
        return [
            (tuple(e.absolute_path), e.message)
            for e in sorted(validator.iter_errors(value), key=lambda e: list(e.absolute_path))
        ]

    return check


def compile_schema(schema: Mapping[str, Any]) -> Callable[[Any], list[Problem]]:
    """A function that lists what is wrong with a value (empty when it is valid).

    Raises:
        SchemaProblem: The schema is malformed, or needs ``jsonschema`` and it is
            not installed.
    """
    draft = str(schema.get("$schema", ""))
    if "draft-04" in draft or "draft-03" in draft:  # integers and bounds differ there
        return _general_checker(schema)
    try:
        compiled = _Compiler(schema).compile(schema)
    except (_Unsupported, re.error, TypeError):
        return _general_checker(schema)

    def check(value: Any) -> list[Problem]:
        out: list[Problem] = []
        compiled(value, (), out)
        return out

    return check


def schema_tool(
    cls: type[Tool],
    name: str,
    description: str,
    parameters: dict[str, Any],
    fn: Callable[..., Any],
    timeout: float | None,
    retries: int,
    sequential: bool,
    validate: bool,
) -> Tool:
    """What ``Tool.from_schema`` returns: a ``Tool`` whose validator is the schema's."""
    try:
        problems = compile_schema(parameters) if validate else None
    except SchemaProblem as exc:
        raise ValueError(f"tool {name!r}: {exc}") from exc
    takes_ctx = len(inspect.signature(fn).parameters) >= 2

    def call_fn(arguments: dict[str, Any], ctx: ToolContext | None = None) -> Any:
        return fn(arguments, ctx) if takes_ctx else fn(arguments)

    known = parameters.get("properties") or {}
    closed = parameters.get("additionalProperties") is False

    def check(arguments: Any) -> Any:
        found = problems(arguments) if problems is not None else []
        if found:  # reported in the same words as a decorated tool's bad arguments
            raise ValidationError.from_exception_data(
                name,
                [
                    # An argument the tool does not take: pydantic's own kind, so it is
                    # named and answered with the ones the tool takes, as for @tool.
                    {"type": "extra_forbidden", "loc": loc, "input": arguments}
                    if closed and len(loc) == 1 and loc[0] in arguments and loc[0] not in known
                    else {
                        "type": PydanticCustomError("json_schema", msg),
                        "loc": loc,
                        "input": arguments,
                    }
                    for loc, msg in found[:10]
                ],
            )
        return types.SimpleNamespace(arguments=arguments)

    tool = object.__new__(cls)
    tool.fn = call_fn
    tool.name = name
    tool.description = description or name
    tool.timeout = timeout
    tool.retries = retries
    tool.sequential = sequential
    tool._instance = None
    # a function, or an object whose __call__ is async
    tool._is_async = inspect.iscoroutinefunction(fn) or inspect.iscoroutinefunction(
        type(fn).__call__
    )
    tool._context_param = "ctx"
    tool._is_method = False
    tool.parameters = parameters
    tool._validate_args = check  # type: ignore[assignment]  # the same call shape
    return tool
