"""The ``blender`` task suite (entry point ``agentsdk.suites``): scenes checked in the worker.

Every check asks Blender, never the agent's words: the scene (objects, types, transforms,
materials, modifiers), world-space bounds of the evaluated geometry, the visibility report of
a fresh render from the scene camera (visible, cut off, hidden, coverage) and exported files
read back with the validator. The tasks need only the default ``core`` tools (no
``execute_python``). ``tools/blender/TASKS.md`` lists what each task checks.
"""

from __future__ import annotations

from agentsdk.tasks import Check, Suite, Task, call

from .task_checks import (
    BLENDER,
    aimed,
    bottom_at,
    centre,
    exists,
    exported,
    framed,
    gold,
    has_modifier,
    only_left,
    red,
    rests_on,
    setup_blank,
    setup_clutter,
    setup_cube,
    setup_post,
    setup_sphere,
    setup_suzanne,
    setup_wall,
    size,
    unchanged,
)
from .toolkit_base import BlenderToolkitBase

__all__ = ["INSTRUCTIONS", "suite"]

INSTRUCTIONS = BlenderToolkitBase.instructions  # what the toolkit tells any agent


# -- the suite ----------------------------------------------------------------------------------


def _task(
    name: str, prompt: str, checks: list[Check], reference: list[object], **extra: object
) -> Task:
    return Task(
        id=f"blender/{name}",
        prompt=prompt,
        toolkits=[BLENDER],
        checks=checks,
        reference=reference,  # type: ignore[arg-type]
        **extra,  # type: ignore[arg-type]
    )


def suite() -> Suite:
    """The Blender suite: one-tool tasks up to multi-step ones that need the render reports."""
    tasks = [
        _task(
            "red-cube",
            "Add a red cube named Crate at the origin.",
            [exists("Crate", triangles=12), centre("Crate", [0, 0, 0]), red("Crate")],
            [
                call("create_primitive", kind="cube", name="Crate", color="red"),
                "A red cube named Crate stands at the origin.",
            ],
            tags=("one-tool",),
            description="a named cube at the origin with a red base colour",
        ),
        _task(
            "ball-on-ground",
            "Create a UV sphere named Ball, 3 m in diameter, resting on the ground (its lowest point at z = 0).",
            [exists("Ball"), size("Ball", [3, 3, 3]), bottom_at("Ball", 0.0)],
            [
                call("create_primitive", kind="uv_sphere", name="Ball", size=3.0, rest_on="ground"),
                "Ball is a 3 m sphere resting on the ground.",
            ],
            tags=("one-tool",),
            description="size and placement from a spec",
        ),
        _task(
            "stack",
            "Stack two cubes: Base, 1 m, standing on the ground at the origin; and Top, 0.5 m, "
            "resting on Base, centred on it.",
            [
                size("Base", [1, 1, 1]),
                bottom_at("Base", 0.0),
                centre("Base", [0, 0, 0], "xy"),
                size("Top", [0.5, 0.5, 0.5]),
                rests_on("Top", "Base"),
                centre("Top", [0, 0, 0], "xy"),
            ],
            [
                call("create_primitive", kind="cube", name="Base", size=1.0, rest_on="ground"),
                call("create_primitive", kind="cube", name="Top", size=0.5, rest_on="Base"),
                "Top rests centred on Base, which stands on the ground.",
            ],
            tags=("multi-step", "measure"),
            description="contact: one object resting on another",
        ),
        _task(
            "clean-up",
            "Delete everything in the scene except the cube named Crate.",
            [only_left({"Crate"}), unchanged("Crate")],
            [call("delete", keep=["Crate"]), "Only Crate is left."],
            setup=setup_clutter,
            tags=("one-tool",),
            description="delete all but one object",
        ),
        _task(
            "gold-sphere",
            "Give the object Sphere a polished gold material: fully metallic, roughness at most "
            "0.3 and a golden yellow base colour.",
            [gold("Sphere")],
            [
                call(
                    "set_material",
                    name="Sphere",
                    base_color=[1.0, 0.77, 0.34, 1.0],
                    metallic=1.0,
                    roughness=0.2,
                ),
                "Sphere now has a polished gold material.",
            ],
            setup=setup_sphere,
            tags=("one-tool",),
            description="PBR values of a material",
        ),
        _task(
            "aim-camera",
            "Place a camera named ShotCam at (6, -6, 4) looking at the origin and make it the scene camera.",
            [aimed("ShotCam", "CAMERA", [6, -6, 4], [0, 0, 0], active=True)],
            [
                call("place_camera", name="ShotCam", location=[6, -6, 4], look_at=[0, 0, 0]),
                "ShotCam looks at the origin from (6, -6, 4).",
            ],
            tags=("one-tool",),
            description="camera position, aim and the active camera",
        ),
        _task(
            "key-light",
            "Add a sun light named Key at (4, -4, 8) pointing at the cube Crate.",
            [aimed("Key", "LIGHT", [4, -4, 8], [0, 0, 0.5], active=False), unchanged("Crate")],
            [
                call("place_light", name="Key", kind="sun", location=[4, -4, 8], look_at="Crate"),
                "The sun light Key points at Crate.",
            ],
            setup=setup_cube,
            tags=("one-tool",),
            description="a light aimed at an object",
        ),
        _task(
            "row-of-posts",
            "Turn the cube Post into a row of 4 identical copies along +X, touching each other, "
            "with an array modifier (keep it one object).",
            [
                has_modifier("Post", "ARRAY", 48),
                size("Post", [2.0, 0.5, 0.5]),
                bottom_at("Post", 0.0),
            ],
            [
                call("add_modifier", name="Post", kind="array", count=4, relative_offset=[1, 0, 0]),
                "Post is now a row of four touching copies.",
            ],
            setup=setup_post,
            tags=("one-tool", "modifiers"),
            description="an array modifier's result",
        ),
        _task(
            "bevelled-crate-glb",
            "Model a 1 m crate standing on the ground: a cube with bevelled edges. Export it as "
            "crate.glb with at most 300 triangles; it must be watertight.",
            [exported("crate.glb", 300, 13, [1.0, 1.0, 1.0])],
            [
                call("create_primitive", kind="cube", name="Crate", size=1.0, location=[0, 0, 0.5]),
                call(
                    "add_modifier", name="Crate", kind="bevel", width=0.05, segments=2, apply=True
                ),
                call("export_asset", path="crate.glb"),
                "crate.glb is exported: a bevelled 1 m crate under 300 triangles.",
            ],
            tags=("multi-step", "export"),
            description="an export under a triangle budget that validates",
        ),
        _task(
            "frame-suzanne",
            "From the scene camera, the monkey Suzanne must be fully in frame and cover at least "
            "30% of the image (render at 320x240). Move the camera, not Suzanne.",
            [unchanged("Suzanne"), framed("Suzanne", min_coverage=0.30)],
            [
                call("render"),
                call("fit_view", names=["Suzanne"], margin=1.02),
                call("render"),
                "Suzanne now fills the camera's frame.",
            ],
            setup=setup_suzanne,
            tags=("multi-step", "visual"),
            description="framing from the visibility report: in frame and >= 30% of the image",
        ),
        _task(
            "unhide-ball",
            "From the scene camera, the ball named Ball is hidden behind Wall. Move only Ball so "
            "that it is fully visible in the camera's image.",
            [unchanged("Wall"), unchanged("Camera"), framed("Ball", max_hidden=0.01)],
            [
                call("render"),
                call("set_transform", name="Ball", location=[2, -1, 0.5]),
                call("render"),
                "Ball is now in front of the wall, fully visible.",
            ],
            setup=setup_wall,
            tags=("multi-step", "visual"),
            description="occlusion from the report",
        ),
        _task(
            "blank-view",
            "The render from the scene camera shows nothing. Aim the camera so that both Crate "
            "and Ball are fully visible in its image.",
            [framed("Crate"), framed("Ball")],
            [
                call("render"),
                call("place_camera", name="Camera", location=[1, -7, 3], look_at=[1, 0, 0.5]),
                call("render"),
                "Both Crate and Ball are in view now.",
            ],
            setup=setup_blank,
            tags=("multi-step", "visual"),
            description="a blank frame fixed by aiming",
        ),
    ]
    return Suite(
        name="blender",
        description="Blender scenes built with the core tools, checked in the worker",
        instructions=INSTRUCTIONS,
        tasks=tasks,
    )
