"""Which offered tool a text answer announces it will call (no engine)."""

from __future__ import annotations

import pytest
from agentsdk_openai.local.announced import (
    announced_tool,
    announces_a_step,
    echoes_call_format,
    echoes_cue,
    offers_help,
)

SCENE = ["create_primitive", "add_modifier", "export_asset", "set_material", "delete", "render"]
MARKET = ["performance", "fundamentals", "compare", "price_history"]


@pytest.mark.parametrize(
    ("text", "offered", "expected"),
    [
        # Said as the model says it (seen in the suites' eval transcripts).
        (
            'To export the scene as crate.glb, I will call the "export_asset" function '
            'with the path "crate.glb".',
            SCENE,
            "export_asset",
        ),
        ("To place Top on Base, I need to add a modifier to the Top cube.", SCENE, "add_modifier"),
        ('To answer, I need to call the "fundamentals" function with:', MARKET, "fundamentals"),
        ('To call the "compare" function, reply with:', MARKET, "compare"),
        ("Next I need to create a primitive named Top.", SCENE, "create_primitive"),
        ("I will render the scene again to check.", SCENE, "render"),
        ("Let me call `price_history` for 2010.", MARKET, "price_history"),
        (
            "To add a child to the root node, call the `add_node` function with the scene path.",
            ["create_scene", "add_node"],
            "add_node",
        ),
        # An instruction to use it, given to the user instead of the call (godot/hello-script,
        # blender/unhide-ball).
        (
            "To run the project, use the `run_project` function.",
            ["write_script", "run_project"],
            "run_project",
        ),
        (
            "To fix, use the `set_transform` function with `location=[-4.5, -4.5, 0.5]`.",
            [*SCENE, "set_transform"],
            "set_transform",
        ),
        # The earliest tool named after the intent wins.
        ("I will set_material first, then export_asset.", SCENE, "set_material"),
        # Final answers and other prose are not announcements.
        ("The scene now matches the request.", SCENE, None),
        ("The cube named Crate has been deleted.", SCENE, None),
        ("AAPL 1596.9%; the performance tool gives the total return.", MARKET, None),
        ("Let me know if you need anything else.", SCENE, None),
        ("I used the export_asset function to write crate.glb.", SCENE, None),
        ("Use the result as you like: AAPL returned 1596.9%.", MARKET, None),
        ("I called export_asset, so crate.glb is in the run folder.", SCENE, None),
        ("To call a function, reply with only a JSON object on one line:", SCENE, None),
        ("I will render the scene.", [], None),
        ("", SCENE, None),
        # A tool that is not offered this turn is not announced.
        ('I will call the "teleport" function.', SCENE, None),
    ],
)
def test_announced_tool(text: str, offered: list[str], expected: str | None) -> None:
    assert announced_tool(text, offered) == expected


def test_an_echo_of_the_calling_format_is_recognised() -> None:
    # The 1.5B model wrote these as its whole answer after a successful write_script.
    echo = (
        "To call a function, reply with only a JSON object on one line, in this exact form:\n"
        '{"name": "<function name>", "arguments": {<arguments as JSON>}}'
    )
    assert echoes_call_format(echo)
    assert echoes_call_format('{"name": "<function name>", "arguments": {}}')
    assert not echoes_call_format("The object was created. Reply if you need more.")
    assert not echoes_call_format('The call {"name": "move"} worked.')


def test_an_echo_of_a_cue_is_recognised() -> None:
    # The 1.5B model's whole final answer on blender/gold-sphere:
    said = "If my request still needs another step, call its function now; if it is all done, answer me in plain text."
    assert echoes_cue(said) and echoes_cue("Never repeat a function call you already made.")
    assert not echoes_cue("The Sphere now has a gold material (metallic 1, roughness 0.3).")
    # a remark about the conversation, not an answer (the 1.5B on godot/crate-on-floor)
    assert echoes_cue("The function result is already provided.")
    assert echoes_cue("The tool output shows the result.")
    # an answer that cites the tool's figures is one, however it starts
    assert not echoes_cue(
        "The function result shows IBM's total return over the period was 41.2%, against "
        "18.5% for the S&P 500, so IBM did better by 22.7 points."
    )
    assert not echoes_cue("The Crate now rests on the Floor.")


@pytest.mark.parametrize(
    ("text", "offer"),
    [
        # Only an offer of help (the 1.5B model's whole answer after a Godot scene, s19/7).
        ("I'm ready to help!", True),
        ("Sure! How can I assist you today?", True),
        ("I am ready.", True),  # the 1.5B model's whole answer after a Blender scene, s17/6
        ("What would you like me to do next?", True),
        ("Great. Let me know if you need anything else.", True),
        # Something done, then the offer: an answer.
        ("The scene has Eye, Sun and Ball. Let me know if you need anything else.", False),
        ("Done: the box is red. How can I help further?", False),
        ("I am ready to render the camera view once the camera exists.", False),
        ("", False),
    ],
)
def test_an_answer_that_only_offers_help_is_none(text: str, offer: bool) -> None:
    assert offers_help(text) is offer
    assert echoes_cue(text) is offer


@pytest.mark.parametrize(
    ("text", "ahead"),
    [
        ("To stack the cubes, I need to add the Top cube on top of the Base cube.", True),
        ("Next I will paint the ball blue.", True),
        ("Let me add the light.", True),
        ("The scene now matches the request.", False),
        ("I added the Top cube on the Base cube.", False),
        ("I will not change anything else: the cube is red.", False),
        ("The object Sphere has been given a polished gold material.", False),
    ],
)
def test_an_answer_that_says_what_comes_next(text: str, ahead: bool) -> None:
    assert announces_a_step(text) is ahead
