"""Which parts a request names (by name, by file, by an output step), and which of them a
run has not done yet (no engine)."""

from __future__ import annotations

import pytest
from agentsdk_openai.local.answers import owned_up
from agentsdk_openai.local.as_asked import named_as_asked
from agentsdk_openai.local.unmade import (
    Part,
    as_named,
    asked_for,
    files_in,
    files_no_tool_writes,
    head_of,
    named_in,
    pinned_makers,
    steps_in,
    unmade_names,
    unmade_parts,
)

from agentsdk import (
    Message,
    ModelRequest,
    ModelResponse,
    TextPart,
    ToolCallPart,
    ToolResultPart,
    ToolSpec,
)


@pytest.mark.parametrize(
    ("text", "names"),
    [
        (
            "Add a red sphere named sun of radius 1 at (0, 3, 0) and a green box named plate, "
            "6 wide, 0.2 tall and 6 deep, resting on the ground.",
            ["sun", "plate"],
        ),
        ("Place three yellow cubes named a, b and c in a row along x.", ["a", "b", "c"]),
        ("Two cubes named left and right, a green one at x = -3.", ["left", "right"]),
        ("cubes called x, y, and z here", ["x", "y", "z"]),
        ('Add a sphere and name it "Red Ball", then light it.', ["Red Ball"]),
        ("a Label labelled `Title`", ["Title"]),
        ("Add a blue cube named Box, 2 m on each side, and a sun light named Sun.", ["Box", "Sun"]),
        # A property after a comma is not a second name; a step after "and" is not one.
        ("a purple cone named spire, radius 0.5 and 3 tall", ["spire"]),
        ("a blue cylinder named tower, radius 1 and height 5", ["tower"]),
        ("a cube named Box and make it red", ["Box"]),
        # Each name once, in the order given; words that follow "named" without naming.
        ("a cube named Box, then move the cube named box up", ["Box"]),
        ("a light named after the tree", []),
        ("the object named a is red", []),
        ("Make it the same colour.", []),
        ("", []),
    ],
)
def test_the_names_a_request_gives(text: str, names: list[str]) -> None:
    assert named_in(text) == names


@pytest.mark.parametrize(
    ("text", "name", "part"),
    [
        # The clause that names it, so the cue says what kind of thing it is.
        (
            "Add a blue cube named Box, 2 m on each side, resting on the ground, and a sun "
            "light named Sun above it pointing at it.",
            "Sun",
            "a sun light named Sun above it pointing at it",
        ),
        (
            "Make a red sphere named Ball of radius 1 resting on the ground and a camera named "
            "Cam at (6, -6, 4) that looks at it.",
            "Cam",
            "a camera named Cam at (6, -6, 4) that looks at it",
        ),
        (
            "Add a cube named Crate on the ground, then a cube named Lid of the same size "
            "stacked on top of it, and render the result.",
            "Lid",
            "a cube named Lid of the same size stacked on top of it",
        ),
        (
            "Place three cubes named a, b and c in a row.",
            "b",
            "Place three cubes named a, b and c in a row",
        ),
        ("a cone named spire, radius 0.5 and 3 tall", "spire", "a cone named spire"),
        ("Add it; name it Box", "Nope", "Nope"),  # no clause names it: the name alone
    ],
)
def test_the_part_of_the_request_that_names_it(text: str, name: str, part: str) -> None:
    assert asked_for(text, name) == part


def _run(
    ask: str, *steps: tuple[ToolCallPart, str], tools: tuple[str, ...] = (), failed: bool = False
) -> ModelRequest:
    messages = [Message.system("Build the scene."), Message.user(ask)]
    for call, result in steps:
        done = ToolResultPart(
            call_id=call.id,
            name=call.name,
            parts=[TextPart(text=result)],
            is_error=failed and result.startswith("Error"),
        )
        messages += [Message(role="assistant", parts=[call]), Message(role="tool", parts=[done])]
    return ModelRequest(messages=messages, tools=[_spec(name) for name in tools])


def _spec(name: str) -> ToolSpec:
    """A tool of this name; one that exports, saves, loads or writes takes a ``path``."""
    files = any(word in name for word in ("export", "save", "load", "write"))
    properties = {"path" if files else "name": {"type": "string"}}
    return ToolSpec(
        name=name, description=name, parameters={"type": "object", "properties": properties}
    )


ASK = "Add a red sphere named sun and a green box named plate."


def test_a_name_no_call_and_no_result_mentions_is_unmade() -> None:
    sun = ToolCallPart(name="add_object", arguments={"name": "sun", "shape": "sphere"})
    assert unmade_names(_run(ASK)) == ["sun", "plate"]
    assert unmade_names(_run(ASK, (sun, 'added sphere "sun".'))) == ["plate"]
    # Made under another name's spelling: case does not matter, whole words do.
    plate = ToolCallPart(name="add_object", arguments={"name": "Plate", "shape": "box"})
    assert unmade_names(_run(ASK, (sun, "ok"), (plate, "ok"))) == []
    plates = ToolCallPart(name="add_object", arguments={"name": "plates"})
    assert unmade_names(_run(ASK, (sun, "ok"), (plates, "ok"))) == ["plate"]
    # A result that mentions it counts: the part exists (made earlier, or found).
    look = ToolCallPart(name="scene_info", arguments={})
    assert unmade_names(_run(ASK, (look, "Objects: sun (sphere); plate (box)."))) == []
    # Arguments the model wrote that were not JSON count too.
    raw = ToolCallPart(name="add_object", raw_arguments='{"name": "plate", ')
    assert unmade_names(_run(ASK, (sun, "ok"), (raw, "Error: not JSON"))) == []


def test_only_the_newest_request_counts() -> None:
    sun = ToolCallPart(name="add_object", arguments={"name": "sun"})
    request = _run(ASK, (sun, "ok"))
    later = ModelRequest(messages=[*request.messages, Message.user("Now make the sun blue.")])
    assert unmade_names(later) == []  # "sun" is not given as a name ("named"/"called")
    renamed = ModelRequest(messages=[*request.messages, Message.user("Add a cone named tip.")])
    assert unmade_names(renamed) == ["tip"]


@pytest.mark.parametrize(
    ("text", "files"),
    [
        ("Add a green cone named tree and export the scene to tree.glb.", ["tree.glb"]),
        (
            "res://main.tscn has a Floor; the script is res://scripts/hello.gd",
            ["main.tscn", "hello.gd"],
        ),
        (
            "Write the report to notes.md, prices from AAPL.csv, then NOTES.MD again.",
            ["notes.md", "AAPL.csv"],
        ),
        # Not files: a library's name, version numbers, an abbreviation, a bare extension.
        ("With render_scene (three.js code), add a ring; Python 3.11, v1.5.", []),
        ("e.g. a .glb file", []),
    ],
)
def test_the_files_a_request_names(text: str, files: list[str]) -> None:
    assert files_in(text) == files


def test_the_output_steps_a_request_asks_for_that_a_tool_does() -> None:
    blender = ["create_primitive", "place_light", "render", "export_asset", "add_modifier"]
    ask = "Add a cube named Crate, export it as crate.glb, then render the result."
    assert steps_in(ask, blender) == ["export", "render"]
    assert steps_in(ask, ["create_primitive"]) == []  # no tool does them: nothing to call
    assert steps_in("Take a screenshot to check.", ["add_node", "game_screenshot"]) == [
        "screenshot"
    ]
    assert steps_in("Save the scene.", ["save_scene"]) == ["save"]
    assert steps_in("Rendered from the top", ["render_views"]) == ["render"]
    # A word of the tool's name must be the step: comparing renders is not rendering.
    assert steps_in("Render it.", ["compare_renders", "render_scene"]) == ["render"]
    assert steps_in("Render it.", ["compare_renders"]) == []
    # Building verbs are no output step, whatever tool they match ("add" and add_modifier).
    assert steps_in("Add a sun light named Key.", blender) == []
    assert steps_in("Surrender now.", ["render"]) == []  # whole words only
    # A noun that points at one already there describes the scene (blender/blank-view).
    blank = "The render from the scene camera shows nothing. Aim the camera at Crate."
    assert steps_in(blank, ["render"]) == []
    assert steps_in(blank + " Then show me a render.", ["render"]) == ["render"]
    # A chart is no output step: a report "with charts" is one research_report call.
    report = "Write a research report with charts comparing AAPL and MSFT."
    assert steps_in(report, ["chart", "research_report"]) == []


TREE = "Add a green cone named tree (radius 0.5, height 2) and export the scene to tree.glb."
THREEJS = ("add_object", "update_object", "render", "export_glb")


def test_a_file_or_an_output_step_no_call_has_done_is_unmade() -> None:
    tree = ToolCallPart(name="add_object", arguments={"name": "tree", "shape": "cone"})
    look = ToolCallPart(name="render", arguments={})
    assert unmade_parts(_run(TREE, (tree, "added"), (look, "Rendered."), tools=THREEJS)) == [
        Part("step", "export", "export the scene to tree.glb"),
        Part("file", "tree.glb", "export the scene to tree.glb"),
    ]
    # Without a tool that exports there is no step to ask for; the file is still unmade
    # while some tool takes a file, and asks for nothing when none does (three.js's default
    # tools, which cannot export).
    loads = _run(TREE, (tree, "added"), tools=("add_object", "load_model"))
    assert [p.key for p in unmade_parts(loads)] == ["tree.glb"]
    assert unmade_parts(_run(TREE, (tree, "added"), tools=("add_object", "render"))) == []
    godot = ToolSpec(name="add_node", description="", parameters={"properties": {"scene": {}}})
    scene = ModelRequest(messages=_run("Fix res://main.tscn.").messages, tools=[godot])
    assert [p.key for p in unmade_parts(scene)] == ["main.tscn"]
    # Exported under another path that ends in the file: both done.
    export = ToolCallPart(name="export_glb", arguments={"path": "/tmp/out/tree.glb"})
    assert unmade_parts(_run(TREE, (tree, "ok"), (export, "wrote"), tools=THREEJS)) == []
    # A failed export did neither.
    bad = ToolCallPart(name="export_glb", arguments={"path": "tree.glb"})
    failing = _run(TREE, (tree, "ok"), (bad, "Error: disk full"), tools=THREEJS, failed=True)
    assert [p.key for p in unmade_parts(failing)] == ["export", "tree.glb"]
    # Names keep their order among the other parts, and unmade_names stays names only.
    early = _run(TREE, tools=THREEJS)
    assert [p.key for p in unmade_parts(early)] == ["tree", "export", "tree.glb"]
    assert unmade_names(early) == ["tree"]


def test_a_step_is_done_by_any_call_to_a_tool_that_does_it() -> None:
    ask = (
        "Add a cube named Crate on the ground, then a cube named Lid on it, and render the result."
    )
    tools = ("create_primitive", "render", "render_views")
    crate = ToolCallPart(name="create_primitive", arguments={"name": "Crate"})
    lid = ToolCallPart(name="create_primitive", arguments={"name": "Lid"})
    made = _run(ask, (crate, "ok"), (lid, "ok"), tools=tools)
    assert unmade_parts(made) == [Part("step", "render", "render the result")]
    views = ToolCallPart(name="render_views", arguments={"views": ["front"]})
    assert unmade_parts(_run(ask, (crate, "ok"), (lid, "ok"), (views, "ok"), tools=tools)) == []
    # A file named as the part's name is one part, not two.
    named = "Export the scene as a file named out.glb."
    assert [p.kind for p in unmade_parts(_run(named, tools=("export_glb",)))] == ["step", "name"]


def test_a_step_taken_before_a_part_it_shows_was_changed_is_left() -> None:
    # s18/6: the 1.5B model rendered, then placed the camera the render was to come from,
    # and answered.
    ask = (
        "Place an area light named Fill at (-3, 3, 5) aimed at the origin and a camera named "
        "Shot at (7, -7, 5) looking at the origin, then render the camera view."
    )
    specs = [_spec("place_light"), _spec("place_camera"), _spec("render"), _spec("measure")]
    for spec in specs[:2]:
        specs[specs.index(spec)] = spec.model_copy(update={"side_effects": True})
    fill = ToolCallPart(name="place_light", arguments={"name": "Fill"})
    shot = ToolCallPart(name="place_camera", arguments={"name": "Shot"})
    render = ToolCallPart(name="render", arguments={"views": ["camera"]})
    look = ToolCallPart(name="measure", arguments={"name": "Shot"})

    def left(*calls: ToolCallPart, tools: list[ToolSpec] = specs) -> list[str]:
        run = _run(ask, *((c, "ok") for c in calls))
        return [p.key for p in unmade_parts(run.model_copy(update={"tools": tools}))]

    assert left(fill, render, shot) == ["render"]  # the camera placed after the render
    assert left(fill, shot, render) == []
    assert left(fill, render, shot, render) == []
    assert left(fill, shot, render, look) == []  # a read after it changes nothing
    # tools that declare no side effects: any render counts, as before
    plain = [s.model_copy(update={"side_effects": False}) for s in specs]
    assert left(fill, render, shot, tools=plain) == []
    # a part asked for after the step ("render it, then add a lamp") does not make it stale
    later = "Add a cube named Box, render it, then add a point light named Lamp."
    lamp = ToolCallPart(name="place_light", arguments={"name": "Lamp"})
    box = ToolCallPart(name="create_primitive", arguments={"name": "Box", "kind": "cube"})
    maker = _spec("create_primitive").model_copy(update={"side_effects": True})
    run = _run(later, (box, "ok"), (render, "ok"), (lamp, "ok"))
    assert unmade_parts(run.model_copy(update={"tools": [*specs, maker]})) == []
    # ... but changing a part named before the step does
    moved = ToolCallPart(name="create_primitive", arguments={"name": "Box", "kind": "cube"})
    run = _run(later, (box, "ok"), (render, "ok"), (lamp, "ok"), (moved, "ok"))
    assert [p.key for p in unmade_parts(run.model_copy(update={"tools": [*specs, maker]}))] == [
        "render"
    ]


@pytest.mark.parametrize(
    ("ask", "call", "wrong"),
    [
        # A light or a camera made as a mesh, a mesh made as a light: made, but not as asked.
        (
            "Add a sun light named Key at (4, -4, 8) pointing at the cube Crate.",
            ToolCallPart(name="create_primitive", arguments={"name": "Key", "kind": "cone"}),
            True,
        ),
        (
            "Add a sun light named Key at (4, -4, 8).",
            ToolCallPart(name="place_light", arguments={"name": "Key", "kind": "sun"}),
            False,
        ),
        (
            "a red sphere named Ball and a camera named Cam at (6, -6, 4) that looks at it",
            ToolCallPart(name="create_primitive", arguments={"name": "Cam", "kind": "sphere"}),
            True,
        ),
        (
            "and a camera named Eye that looks at it",
            ToolCallPart(name="add_node", arguments={"name": "Eye", "type": "Camera"}),
            False,
        ),
        (
            "an omni light named Bulb above it",
            ToolCallPart(name="add_node", arguments={"name": "Bulb", "type": "OmniLight"}),
            False,
        ),
        (
            "a red sphere named apple of radius 0.3 on top of the table",
            ToolCallPart(name="add_light", arguments={"name": "apple", "type": "directional"}),
            True,
        ),
        # A colour is no kind: "lightgrey" and "light blue" say nothing about what it is.
        (
            "a white box named table on the ground",
            ToolCallPart(name="add_object", arguments={"name": "table", "color": "lightgrey"}),
            False,
        ),
        (
            "a light blue cube named Sky",
            ToolCallPart(name="add_object", arguments={"name": "Sky", "shape": "box"}),
            False,
        ),
        # Words that give no kind ("a Sprite", "a table") are not judged.
        (
            "with a Sprite named Player at (100, 200)",
            ToolCallPart(name="add_node", arguments={"name": "Player", "type": "OmniLight"}),
            False,
        ),
    ],
)
def test_a_name_made_as_another_kind_of_thing_is_unmade(
    ask: str, call: ToolCallPart, wrong: bool
) -> None:
    name = call.arguments["name"]
    request = _run(ask, (call, f"made {name}"))
    assert (Part("kind", name, asked_for(ask, name)) in unmade_parts(request)) is wrong
    # Only the call that made it is judged: a later call on the name changes nothing.
    aim = ToolCallPart(name="place_camera", arguments={"name": name, "look_at": "origin"})
    assert (
        Part("kind", name, asked_for(ask, name))
        in unmade_parts(_run(ask, (call, "ok"), (aim, "ok")))
    ) is wrong


def _maker(name: str, naming: str = "name", **more: dict[str, object]) -> ToolSpec:
    """A tool that makes a thing named by its ``naming`` argument (``creates``)."""
    properties = {naming: {"type": "string", "description": "its name"}, **more}
    parameters = {"type": "object", "properties": properties, "required": []}
    return ToolSpec(name=name, description=name, parameters=parameters, creates=naming)


MAKERS = [
    _maker("add_object", shape={"type": "string"}),
    _maker("add_light", kind={"type": "string"}),
    _maker("place_camera"),
    _spec("update_object"),  # takes a name, but of a thing already there
]


@pytest.mark.parametrize(
    ("ask", "made", "missing", "tools"),
    [
        # A shape: the tools that make neither lights nor cameras.
        ("Make four red cylinders named p1, p2, p3 and p4.", "p1", "p2", ["add_object"]),
        # A light or a camera: the tools whose names say they make one.
        ("Add a box named crate and a point light named lamp above it.", "crate", "lamp",
         ["add_light"]),
        ("a cube named Box and a camera named Eye that looks at it", "Box", "Eye",
         ["place_camera"]),
        # No kind in the words: every tool that makes things.
        ("Add a thing named a and a thing named b.", "a", "b",
         ["add_object", "add_light", "place_camera"]),
    ],
)  # fmt: skip
def test_a_missing_name_is_asked_for_with_its_makers_held_to_it(
    ask: str, made: str, missing: str, tools: list[str]
) -> None:
    first = ToolCallPart(name="add_object", arguments={"name": made})
    request = _run(ask, (first, f"added {made}")).model_copy(update={"tools": MAKERS})
    part = next(p for p in unmade_parts(request) if p.kind == "name")
    assert part.key == missing
    pinned = pinned_makers(request, part)
    assert [tool.name for tool in pinned] == tools
    for tool in pinned:
        offered = next(t for t in MAKERS if t.name == tool.name)
        # Its naming argument is required and holds only the missing name; the rest of
        # the schema, and the tool as offered, are as they were.
        assert tool.parameters["properties"]["name"] == {"type": "string", "const": missing}
        assert tool.parameters["required"] == ["name"]
        rest = {k: v for k, v in tool.parameters["properties"].items() if k != "name"}
        assert rest == {k: v for k, v in offered.parameters["properties"].items() if k != "name"}
        assert offered.parameters["properties"]["name"]["description"] == "its name"
        assert offered.parameters["required"] == []


def test_nothing_is_pinned_without_a_missing_name_or_a_tool_that_makes_things() -> None:
    ask = "Add a box named crate, then render the result."
    box = ToolCallPart(name="add_object", arguments={"name": "crate"})
    request = _run(ask, (box, "added crate"), tools=("render",))
    (step,) = unmade_parts(request)
    assert step.kind == "step" and pinned_makers(request, step) == []
    bare = _run("Add a box named crate.", tools=("add_object",))  # no tool declares creates
    (name,) = unmade_parts(bare)
    assert name.kind == "name" and pinned_makers(bare, name) == []
    # A tool may name what it makes by another argument: that one is held.
    node = _maker("add_node", naming="node_name")
    pinned = pinned_makers(bare.model_copy(update={"tools": [node]}), name)
    assert pinned[0].parameters["properties"]["node_name"]["const"] == "crate"


def test_a_file_is_one_no_call_can_write_when_no_offered_tool_takes_a_file() -> None:
    ask = "Add a brown box named desk on the ground and export the scene to desk.glb."
    box = ToolCallPart(name="add_object", arguments={"name": "desk"})
    request = _run(ask, (box, "added desk"), tools=("add_object", "render"))
    assert files_no_tool_writes(request) == [
        Part("cannot", "desk.glb", "export the scene to desk.glb")
    ]
    # Not a part to call for, then; with a tool that takes a path it is one, and no
    # tool's lack.
    assert [p.kind for p in unmade_parts(request)] == []
    exporting = _run(ask, (box, "added desk"), tools=("add_object", "export_glb"))
    assert files_no_tool_writes(exporting) == []
    assert [p.key for p in unmade_parts(exporting)] == ["export", "desk.glb"]
    assert files_no_tool_writes(_run("Add a box named desk.", tools=("add_object",))) == []


@pytest.mark.parametrize(
    ("ask", "value", "named"),
    [
        # The name run on with words about the part: the name the request gives.
        ("Make a red sphere named Ball of radius 1 resting on the ground.",
         "Ball of radius 1", "Ball"),
        ("Create a green plane named Grass 20 m across.", "Grass 20 m", "Grass"),
        ("a cone named spire, radius 0.5 and 3 tall", "spire radius 0.5", "spire"),
        ("cubes named a, b and c", "b at x = 0", "b"),
        # A name the request gives, in any case, or another name, stays as it is.
        ("Make a red sphere named Ball of radius 1.", "Ball", None),
        ("Make a red sphere named Ball of radius 1.", "ball", None),
        ('Add a sphere and name it "Red Ball".', "Red Ball", None),
        ("Add a lamp named Lamp.", "Lamp post", None),
        ("Add a lamp named Lamp.", "Lampshade 2", None),
        ("Add a box.", "Box of size 2", None),
    ],
)  # fmt: skip
def test_a_name_run_on_with_words_about_the_part(ask: str, value: str, named: str | None) -> None:
    assert as_named(_run(ask), value) == named


def test_calls_that_make_things_are_named_as_the_request_names_them() -> None:
    ask = "Make a red sphere named Ball of radius 1 and a camera named Cam at (6, -6, 4)."
    tools = [_maker("create_primitive", kind={"type": "string"}), _maker("place_camera")]
    request = _run(ask).model_copy(update={"tools": [*tools, _spec("set_transform")]})
    ball = ToolCallPart(name="create_primitive", arguments={"name": "Ball of radius 1", "size": 2})
    cam = ToolCallPart(name="place_camera", arguments={"name": "Cam at (6, -6, 4)"})
    moved = ToolCallPart(name="set_transform", arguments={"name": "Ball of radius 1"})
    response = ModelResponse(parts=[TextPart(text="Adding them."), ball, cam, moved])
    fixed = named_as_asked(request, response)
    assert [c.arguments["name"] for c in fixed.tool_calls] == ["Ball", "Cam", "Ball of radius 1"]
    assert fixed.tool_calls[0].arguments["size"] == 2 and fixed.text == "Adding them."
    assert [c.id for c in fixed.tool_calls] == [ball.id, cam.id, moved.id]
    # Nothing to mend: the same response.
    right = ModelResponse(parts=[ball.model_copy(update={"arguments": {"name": "Ball"}})])
    assert named_as_asked(request, right) is right


@pytest.mark.parametrize(
    ("answer", "owned"),
    [
        # Spoken of as done: those sentences go, and the answer says it was not done.
        ("The scene is saved as desk.glb.",
         'Not done: "export the scene to desk.glb", which none of the tools I have can do.'),
        ("I added the desk. It is exported to DESK.GLB now!",
         'I added the desk. Not done: "export the scene to desk.glb", which none of the tools '
         "I have can do."),
        # Said not to be done, or not spoken of: the answer stands.
        ("I added the desk, but I cannot export desk.glb with these tools.", None),
        ("The desk is on the ground.", None),
    ],
)  # fmt: skip
def test_an_answer_that_speaks_of_a_file_no_tool_can_write_as_written(
    answer: str, owned: str | None
) -> None:
    ask = "Add a brown box named desk on the ground and export the scene to desk.glb."
    box = ToolCallPart(name="add_object", arguments={"name": "desk"})
    request = _run(ask, (box, "added desk"), tools=("add_object", "render"))
    response = ModelResponse(parts=[TextPart(text=answer)])
    assert owned_up(request, response).text == (owned or answer)
    # A tool that takes a path could write it (the export is then called for instead), and
    # a call is not an answer: both stand.
    exporting = _run(ask, (box, "added desk"), tools=("add_object", "export_glb"))
    assert owned_up(exporting, response) is response
    calling = ModelResponse(parts=[TextPart(text=answer), box])
    assert owned_up(request, calling) is calling
    # An answer before any call is held to the same.
    first = _run(ask, tools=("add_object", "render"))
    assert owned_up(first, response).text == (owned or answer)


@pytest.mark.parametrize(
    ("text", "name", "head"),
    [
        ("Add a sun light named Key at (4, -4, 8).", "Key", "Add a sun light "),
        ("Add a red cube named Box and a sun light named Sun.", "Sun", "a sun light "),
        # no further back than the naming before it, when no separator comes between
        ("Create a red uv sphere named Ball of radius 0.5 m resting on a grey cube named "
         "Pedestal, 1 m on each side.", "Pedestal", " of radius 0.5 m resting on a grey cube "),
        ("Add a box named Lid", "Nope", ""),
    ],
)  # fmt: skip
def test_the_words_before_a_parts_naming(text: str, name: str, head: str) -> None:
    assert head_of(text, name) == head
