"""``Tool.from_schema``: tools described by a JSON schema, validated like decorated ones.

The fast checks must agree with the ``jsonschema`` package (the reference
implementation of the spec) on every value; the agreement is measured here on
thousands of generated values against real schemas: our own tools' pydantic
schemas and the ones server-everything and mcp-server-time publish.
"""

from __future__ import annotations

import itertools
import json
import random
from typing import Any

import jsonschema
import pytest
from agentsdk._jsonschema import compile_schema
from agentsdk.testing import ScriptedModel
from pydantic import BaseModel, Field

from agentsdk import Agent, Tool, ToolCallPart, ToolContext, tool

# Schemas real servers publish (copied from their tools/list answers).
EVERYTHING_SUM = {
    "$schema": "http://json-schema.org/draft-07/schema#",
    "type": "object",
    "properties": {
        "a": {"type": "number", "description": "First number"},
        "b": {"type": "number", "description": "Second number"},
    },
    "required": ["a", "b"],
}
EVERYTHING_ANNOTATED = {
    "$schema": "http://json-schema.org/draft-07/schema#",
    "type": "object",
    "properties": {
        "messageType": {"type": "string", "enum": ["error", "success", "debug"]},
        "includeImage": {"type": "boolean", "default": False},
    },
    "required": ["messageType"],
}
TIME_CONVERT = {
    "type": "object",
    "properties": {
        "source_timezone": {"type": "string"},
        "time": {"type": "string", "description": "Time to convert in 24-hour format (HH:MM)"},
        "target_timezone": {"type": "string"},
    },
    "required": ["source_timezone", "time", "target_timezone"],
}


class Item(BaseModel):
    name: str = Field(min_length=1, max_length=8)
    count: int = Field(ge=0, lt=100)
    tags: list[str] = Field(default_factory=list, max_length=3)


class Order(BaseModel):
    items: list[Item]
    note: str | None = None
    priority: int | float = 1
    kind: str = Field("normal", pattern="^(normal|rush)$")


def _pydantic_schema() -> dict[str, Any]:
    @tool
    def place(order: Order, copies: int = 1, mode: str | None = None) -> str:
        """Place an order."""
        return "ok"

    return place.parameters


SCHEMAS = {
    "everything-sum": EVERYTHING_SUM,
    "everything-annotated": EVERYTHING_ANNOTATED,
    "time-convert": TIME_CONVERT,
    "pydantic-refs": _pydantic_schema(),
    "combinators": {
        "type": "object",
        "properties": {
            "x": {"oneOf": [{"type": "integer", "maximum": 5}, {"type": "integer", "minimum": 3}]},
            "y": {"not": {"const": "no"}},
            "z": {"allOf": [{"type": ["string", "null"]}, {"maxLength": 2}]},
            "w": {
                "type": "object",
                "additionalProperties": {"type": "boolean"},
                "maxProperties": 2,
            },
        },
        "additionalProperties": False,
    },
}

ATOMS: list[Any] = [
    None,
    True,
    False,
    0,
    1,
    -3,
    5,
    99,
    100,
    1.0,
    2.5,
    "",
    "a",
    "rush",
    "normal",
    "error",
    "no",
    "abcdefghi",
    "10:30",
    [],
    {},
]


def _values(rng: random.Random, depth: int = 0) -> Any:
    """A random JSON value, biased towards the shapes the schemas talk about."""
    roll = rng.random()
    if depth > 2 or roll < 0.55:
        return rng.choice(ATOMS)
    if roll < 0.75:
        return [_values(rng, depth + 1) for _ in range(rng.randint(0, 4))]
    keys = [
        "a",
        "b",
        "messageType",
        "includeImage",
        "order",
        "items",
        "name",
        "count",
        "tags",
        "note",
        "priority",
        "kind",
        "copies",
        "mode",
        "x",
        "y",
        "z",
        "w",
        "time",
        "source_timezone",
        "target_timezone",
        "extra",
    ]
    return {k: _values(rng, depth + 1) for k in rng.sample(keys, rng.randint(0, 5))}


# Valid values for each schema; the test mutates them so about half stay valid.
SEEDS: dict[str, list[Any]] = {
    "everything-sum": [{"a": 1, "b": 2.5}, {"a": -3, "b": 0}],
    "everything-annotated": [
        {"messageType": "error"},
        {"messageType": "debug", "includeImage": True},
    ],
    "time-convert": [{"source_timezone": "UTC", "time": "10:30", "target_timezone": "Asia/Tokyo"}],
    "pydantic-refs": [
        {"order": {"items": []}},
        {
            "order": {
                "items": [{"name": "bb", "count": 5, "tags": ["x"]}, {"name": "a", "count": 0}],
                "kind": "rush",
                "priority": 2.5,
                "note": None,
            },
            "copies": 2,
            "mode": "fast",
        },
    ],
    "combinators": [{"x": 1, "y": "yes", "z": "ab", "w": {"a": True}}, {"x": 6, "z": None}, {}],
}


def _mutate(rng: random.Random, value: Any) -> Any:
    """The value with one random change somewhere inside (or none, a third of the time)."""
    roll = rng.random()
    if roll < 0.33:
        return value
    if isinstance(value, dict) and value and roll < 0.8:
        key = rng.choice(sorted(value))
        changed = dict(value)
        action = rng.random()
        if action < 0.3:
            del changed[key]
        elif action < 0.4:
            changed["extra"] = rng.choice(ATOMS)
        else:
            changed[key] = _mutate(rng, value[key])
        return changed
    if isinstance(value, list) and value and roll < 0.8:
        i = rng.randrange(len(value))
        return [*value[:i], _mutate(rng, value[i]), *value[i + 1 :]]
    return rng.choice(ATOMS)


@pytest.mark.parametrize("name", sorted(SCHEMAS))
def test_fast_checks_agree_with_jsonschema(name: str) -> None:
    schema = SCHEMAS[name]
    reference = jsonschema.validators.validator_for(schema)(schema)
    ours = compile_schema(schema)
    rng = random.Random(name)
    values = [_values(rng) for _ in range(1500)]
    values += [_mutate(rng, _mutate(rng, rng.choice(SEEDS[name]))) for _ in range(1500)]
    verdicts = [(reference.is_valid(v), not ours(v)) for v in values]
    disagreements = [v for v, (ref, mine) in zip(values, verdicts, strict=True) if ref != mine]
    assert disagreements == []
    # the sample is not trivial: both valid and invalid values were seen
    assert {ref for ref, _ in verdicts} == {True, False}


def test_unusual_keywords_fall_back_to_jsonschema() -> None:
    schema = {"type": "object", "properties": {"ids": {"type": "array", "uniqueItems": True}}}
    check = compile_schema(schema)
    assert check({"ids": [1, 2]}) == []
    [(loc, message)] = check({"ids": [1, 1]})
    assert loc == ("ids",) and "non-unique" in message


def test_bad_schema_is_a_clear_error() -> None:
    async def fn(arguments: dict[str, Any]) -> str:
        return "never"

    with pytest.raises(ValueError, match=r"tool 'broken'.*not valid JSON Schema"):
        Tool.from_schema("broken", "", {"type": "object", "uniqueItems": "yes"}, fn)
    with pytest.raises(ValueError, match="points at nothing"):
        Tool.from_schema("dangling", "", {"$ref": "#/$defs/missing"}, fn)


@pytest.mark.anyio
async def test_schema_tool_calls_with_a_dict_and_reports_bad_arguments() -> None:
    seen: list[tuple[dict[str, Any], str | None]] = []

    async def convert(arguments: dict[str, Any], ctx: ToolContext | None) -> str:
        seen.append((arguments, ctx.tool_name if ctx else None))
        return f"{arguments['time']} in {arguments['target_timezone']}"

    t = Tool.from_schema("convert_time", "Convert a time between zones.", TIME_CONVERT, convert)
    assert t.spec().parameters == TIME_CONVERT and t.spec().description.startswith("Convert")

    bad = await t.call({"time": 1030, "target_timezone": "UTC", "color": "red"})
    assert bad.is_error and bad.kind == "invalid_arguments"
    assert "- source_timezone: this required argument is missing" in bad.text
    assert "- time: expected string, got integer 1030" in bad.text
    assert seen == []  # the function never ran

    good = await t.call(
        {"source_timezone": "Europe/Paris", "time": "10:30", "target_timezone": "UTC"}
    )
    assert not good.is_error and good.text == "10:30 in UTC"


@pytest.mark.anyio
async def test_sync_function_without_context_runs_in_a_thread() -> None:
    import threading

    main = threading.get_ident()
    threads: list[int] = []

    def add(arguments: dict[str, Any]) -> float:
        threads.append(threading.get_ident())
        return float(arguments["a"] + arguments["b"])

    t = Tool.from_schema("get-sum", "Add two numbers.", EVERYTHING_SUM, add)
    outcome = await t.call({"a": 2, "b": 0.5})
    assert outcome.text == "2.5" and threads and threads[0] != main


@pytest.mark.anyio
async def test_agent_retries_a_schema_tool_after_bad_arguments() -> None:
    async def total(arguments: dict[str, Any]) -> str:
        return json.dumps({"sum": arguments["a"] + arguments["b"]})

    t = Tool.from_schema("get-sum", "Add two numbers.", EVERYTHING_SUM, total)
    model = ScriptedModel(
        [
            ToolCallPart(name="get-sum", arguments={"a": "two", "b": 3}),
            ToolCallPart(name="get-sum", arguments={"a": 2, "b": 3}),
            "The sum is 5.",
        ]
    )
    result = await Agent(model, tools=[t]).run("What is 2 + 3?")
    results = [r for m in result.messages for r in m.tool_results]
    assert [r.is_error for r in results] == [True, False]
    assert "a: expected number, got string 'two'" in results[0].text
    assert json.loads(results[1].text) == {"sum": 5}
    assert model.requests[0].tools[0].parameters == EVERYTHING_SUM


def test_every_error_path_names_its_place() -> None:
    check = compile_schema(SCHEMAS["pydantic-refs"])
    problems = dict(
        check({"order": {"items": [{"name": "", "count": -1, "tags": ["a"] * 4}], "kind": "x"}})
    )
    assert set(problems) == {
        ("order", "items", 0, "name"),
        ("order", "items", 0, "count"),
        ("order", "items", 0, "tags"),
        ("order", "kind"),
    }
    assert all(isinstance(m, str) and m for m in problems.values())


def test_recursive_schema_through_ref() -> None:
    schema = {
        "$defs": {
            "node": {
                "type": "object",
                "properties": {"children": {"type": "array", "items": {"$ref": "#/$defs/node"}}},
                "additionalProperties": False,
            }
        },
        "$ref": "#/$defs/node",
    }
    check = compile_schema(schema)
    reference = jsonschema.Draft202012Validator(schema)
    trees: list[Any] = [{}, {"children": [{}, {"children": [{"x": 1}]}]}, {"children": [1]}]
    for tree, _ in itertools.product(trees, [0]):
        assert (not check(tree)) == reference.is_valid(tree)
