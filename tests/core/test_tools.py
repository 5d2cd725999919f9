"""Tool schemas, docstrings, argument validation and return-value conversion."""

from __future__ import annotations

import dataclasses
import enum
from typing import Annotated, Literal

import pytest
from agentsdk._docstrings import parse_docstring
from pydantic import BaseModel, Field

from agentsdk import Image, ImagePart, TextPart, Tool, ToolContext, ToolError, Toolkit, tool

PNG_1PX = bytes.fromhex(
    "89504e470d0a1a0a0000000d4948445200000001000000010802000000907753de0000000c4944415408d763f8cfc0f0"
    "1f0005000201e2213bc30000000049454e44ae426082"
)


class Color(enum.Enum):
    RED = "red"
    BLUE = "blue"


class Point(BaseModel):
    x: float
    y: float


def test_schema_covers_parameter_kinds() -> None:
    @tool
    def place(
        name: str,
        at: Point,
        shape: Literal["cube", "sphere"],
        color: Color,
        size: Annotated[float, Field(gt=0, le=10)] = 1.0,
        note: str | None = None,
        ctx: ToolContext | None = None,
    ) -> str:
        """Place an object.

        Args:
            name: Object name.
            at: Where to put it.
            shape: Which primitive.
            color: Its colour.
            size: Edge length in metres.
            note: Free text.
        """
        return name

    schema = place.parameters
    props = schema["properties"]
    assert schema["required"] == ["name", "at", "shape", "color"]
    assert props["shape"]["enum"] == ["cube", "sphere"]
    assert props["size"]["exclusiveMinimum"] == 0 and props["size"]["maximum"] == 10
    assert (
        props["size"]["default"] == 1.0 and props["size"]["description"] == "Edge length in metres."
    )
    assert props["name"]["description"] == "Object name."
    assert {"$ref"} <= set(props["at"]) or "properties" in props["at"]
    assert "Point" in schema["$defs"] and "Color" in schema["$defs"]
    assert schema["$defs"]["Color"]["enum"] == ["red", "blue"]
    assert any(o.get("type") == "null" for o in props["note"]["anyOf"])
    assert "ctx" not in props
    assert place.description == "Place an object."


def test_tool_context_is_injected_not_in_schema() -> None:
    @tool
    async def who(ctx: ToolContext, greeting: str = "hi") -> str:
        """Say who called."""
        return f"{greeting} {ctx.tool_name}"

    assert list(who.parameters["properties"]) == ["greeting"]


@pytest.mark.parametrize(
    "doc",
    [
        """Move it.

        Args:
            dx (float): Distance along x,
                continued here.
            dy: Distance along y.
        """,
        """Move it.

        Parameters
        ----------
        dx : float
            Distance along x,
            continued here.
        dy : float
            Distance along y.
        """,
        """Move it.

        :param dx: Distance along x,
            continued here.
        :param float dy: Distance along y.
        :returns: nothing
        """,
    ],
    ids=["google", "numpy", "sphinx"],
)
def test_docstring_styles(doc: str) -> None:
    description, params = parse_docstring(doc)
    assert description == "Move it."
    assert params == {"dx": "Distance along x, continued here.", "dy": "Distance along y."}


def test_options_name_timeout_retries_sequential() -> None:
    @tool(name="renamed", timeout=1.5, retries=5, sequential=True)
    def f(x: int) -> int:
        return x

    assert (f.name, f.timeout, f.retries, f.sequential) == ("renamed", 1.5, 5, True)
    assert f(3) == 3  # still callable as the function


def test_a_tool_declares_the_argument_that_names_what_it_makes() -> None:
    @tool(side_effects=True, creates="name")
    def add_box(name: str, size: float = 1.0, parent: str | None = None) -> str:
        return name

    spec = add_box.spec()
    assert (add_box.creates, spec.creates, spec.side_effects) == ("name", "name", True)
    assert "creates" not in str(spec.parameters)  # the model is not told
    assert add_box.renamed("kit_add_box").spec().creates == "name"
    assert tool(lambda name: name).spec().creates is None
    # A parameter the tool lacks, or one that is not a string, is a mistake in the tool.
    with pytest.raises(TypeError, match="'label' is not one of its parameters"):
        tool(creates="label")(add_box.fn)
    with pytest.raises(TypeError, match="must be a string parameter"):
        tool(creates="size")(add_box.fn)
    assert tool(creates="parent")(add_box.fn).creates == "parent"  # an optional string
    schema = {"type": "object", "properties": {"id": {"type": "string"}}, "required": ["id"]}
    made = Tool.from_schema("make", "Make one.", schema, lambda args: args["id"], creates="id")
    assert made.spec().creates == "id"
    with pytest.raises(TypeError, match="not one of its parameters"):
        Tool.from_schema("make", "Make one.", schema, lambda args: 0, creates="name")


@pytest.mark.anyio
async def test_invalid_arguments_are_an_error_the_model_can_fix() -> None:
    @tool
    def add(a: int, b: int) -> int:
        return a + b

    out = await add.call({"a": 1, "b": "two"})
    assert out.is_error and out.kind == "invalid_arguments"
    assert "b:" in out.text and "valid integer" in out.text
    out = await add.call({"a": 1, "b": 2, "c": 3})
    assert out.is_error and out.kind == "invalid_arguments"
    # An argument the tool does not take: named, with the ones it does.
    assert "- c: add has no argument named c\nadd takes: a, b.\n" in out.text
    assert (await add.call({"a": 1, "b": 2})).text == "3"
    # A tool made from a JSON schema (an MCP server's) says it in the same words.
    schema = {
        "type": "object",
        "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
        "required": ["a", "b"],
        "additionalProperties": False,
    }
    plus = Tool.from_schema("plus", "Add.", schema, lambda args: args["a"] + args["b"])
    out = await plus.call({"a": 1, "b": 2, "c": 3})
    assert out.is_error and out.kind == "invalid_arguments"
    assert "- c: plus has no argument named c\nplus takes: a, b.\n" in out.text
    out = await plus.call({"a": 1})  # a missing argument is still said to be missing
    assert "- b: this required argument is missing" in out.text and "takes:" not in out.text


@pytest.mark.anyio
async def test_exceptions_become_errors_without_traceback() -> None:
    @tool
    def boom() -> str:
        raise RuntimeError("disk on fire")

    @tool
    def polite() -> str:
        raise ToolError("Line 3: unknown object 'Cube.001'. Use scene_info to list objects.")

    out = await boom.call({})
    assert out.is_error and out.text == "Tool 'boom' failed: RuntimeError: disk on fire"
    assert "Traceback" not in out.text
    out = await polite.call({})
    assert out.text == "Line 3: unknown object 'Cube.001'. Use scene_info to list objects."

    @tool
    def blank() -> str:
        raise ToolError("The frame is blank: add a light.", images=[Image(PNG_1PX)])

    out = await blank.call({})
    assert out.is_error and out.text == "The frame is blank: add a light."
    assert [p.media_type for p in out.images] == ["image/png"]


@dataclasses.dataclass
class Stats:
    mean: float
    n: int


@pytest.mark.anyio
async def test_return_values_become_parts() -> None:
    @tool
    def many(kind: str) -> object:
        return {
            "str": "plain",
            "int": 42,
            "model": Point(x=1, y=2),
            "dataclass": Stats(mean=1.5, n=2),
            "dict": {"a": [1, 2]},
            "image": Image(PNG_1PX),
            "mixed": ["caption", Image(PNG_1PX), Point(x=0, y=0)],
        }[kind]

    async def parts(kind: str) -> list[TextPart | ImagePart]:
        return (await many.call({"kind": kind})).parts

    assert await parts("str") == [TextPart(text="plain")]
    assert await parts("int") == [TextPart(text="42")]
    assert await parts("model") == [TextPart(text='{"x":1.0,"y":2.0}')]
    assert await parts("dataclass") == [TextPart(text='{"mean":1.5,"n":2}')]
    assert await parts("dict") == [TextPart(text='{"a":[1,2]}')]
    image = await parts("image")
    assert isinstance(image[0], ImagePart) and image[0].media_type == "image/png"
    mixed = await parts("mixed")
    assert [type(p).__name__ for p in mixed] == ["TextPart", "ImagePart", "TextPart"]


def test_image_constructors(tmp_path) -> None:  # type: ignore[no-untyped-def]
    from PIL import Image as PILImage

    path = tmp_path / "red.png"
    PILImage.new("RGB", (4, 3), (255, 0, 0)).save(path)
    from_path = Image.from_path(path)
    assert from_path.media_type == "image/png" and from_path.to_pil().size == (4, 3)
    from_pil = Image.from_pil(PILImage.new("RGB", (2, 2), (0, 0, 255)))
    assert from_pil.to_pil().getpixel((0, 0)) == (0, 0, 255)
    assert Image(from_path.data) == from_path
    with pytest.raises(TypeError):
        Image("not bytes")  # type: ignore[arg-type]


class Counter(Toolkit):
    name = "counter"

    def __init__(self, prefix: str | None = None) -> None:
        super().__init__(prefix=prefix)
        self.events: list[str] = []
        self.count = 0

    async def start(self) -> None:
        self.events.append("start")

    async def close(self) -> None:
        self.events.append("close")

    @tool
    def bump(self, by: int = 1) -> int:
        """Increase the counter."""
        self.count += by
        return self.count


@pytest.mark.anyio
async def test_toolkit_binds_methods_and_prefixes() -> None:
    a, b = Counter(), Counter(prefix="other")
    (ta,), (tb,) = a.tools(), b.tools()
    assert ta.name == "bump" and tb.name == "other_bump"
    assert "self" not in ta.parameters["properties"]
    await ta.call({"by": 2})
    await tb.call({})
    assert (a.count, b.count) == (2, 1)
    async with a:
        async with a:  # nested use starts once
            pass
    assert a.events == ["start", "close"]


@pytest.mark.anyio
async def test_toolkit_subset_offers_only_named_tools_and_shares_lifecycle() -> None:
    class Two(Counter):
        @tool
        def reset(self) -> int:
            """Reset the counter."""
            self.count = 0
            return 0

    full = Two()
    subset = full.only("reset")
    assert [t.name for t in subset.tools()] == ["reset"]
    async with subset:
        assert full.events == ["start"]
    assert full.events == ["start", "close"]
    with pytest.raises(ValueError, match="has no tool 'nope'"):
        full.only("nope")


@pytest.mark.anyio
async def test_a_toolkit_can_complete_the_final_answer() -> None:
    from agentsdk.testing import ScriptedModel

    from agentsdk import Agent, ToolCallPart, Toolkit

    class Notes(Toolkit):
        name = "notes"

        @tool
        def look(self) -> str:
            """Look."""
            return "seen"

        def on_answer(self, answer, messages):  # type: ignore[no-untyped-def]
            looked = sum(1 for m in messages for r in m.tool_results if r.name == "look")
            return f"{answer} [looked {looked} time(s)]"

    model = ScriptedModel([ToolCallPart(name="look", arguments={}), "done"])
    result = await Agent(model, tools=[Notes().only("look")]).run("go")
    assert result.output == "done [looked 1 time(s)]"
    assert result.messages[-1].text == "done"  # the transcript keeps the model's words


def _plus(a: int, b: int) -> int:
    """Add."""
    return a + b


def test_toolkits_whose_tools_change_are_told_apart_and_their_subsets_follow() -> None:
    from agentsdk.tools import tools_can_change, tools_version

    class Changing(Toolkit):
        """Like an MCP server's toolkit: its tool list changes, and tools_version says so."""

        name = "changing"

        def __init__(self) -> None:
            super().__init__()
            self.tools_version = 1
            self.offered = [Tool(_plus, name="a"), Tool(_plus, name="b")]

        def tools(self) -> list[Tool]:
            return list(self.offered)

    plain = Counter()
    assert not tools_can_change(plain) and tools_version(plain) == 0
    assert not tools_can_change(plain.only("bump"))

    server = Changing()
    subset = server.only("a", "b")
    assert tools_can_change(server) and tools_can_change(subset)
    assert tools_version(subset) == 1
    # The server drops b: the subset offers what is left (not a KeyError) and its version
    # moves with the server's, so an agent holding the subset reads its tools again.
    server.offered = server.offered[:1]
    server.tools_version = 2
    assert [t.name for t in subset.tools()] == ["a"]
    assert tools_version(subset) == 2
