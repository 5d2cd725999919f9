"""Nothing a game starts outlives its run: processes the game launches itself with OS.execute
(Godot detaches them with setsid), and daemons that escape even their parent (real Godot 3)."""

from __future__ import annotations

import re

import pytest
from agentsdk.sandbox import pid_alive
from agentsdk_godot import GameSession, GodotEngine, GodotProject, HarnessJob

# _ready starts two processes the way games do:
# - `sleep` through OS.execute(blocking=false): Godot forks, calls setsid, execs: its own session
#   and process group, so a kill of the game's group misses it;
# - a daemon: a shell (blocking OS.execute) starts `setsid sleep` in the background and exits
#   at once, so the sleeper's parent is gone before the run ends (it is re-parented to init)
#   and it has a session of its own.
SPAWNER = """\
extends Node

export var hang = false

func _ready():
\tvar child = OS.execute("sleep", ["301"], false)
\tprint("CHILD ", child)
\tvar out = []
\t# the shell returns once both sleepers run (named "sleep" after their setsid + exec).
\t# Godot 3 quotes each word in double quotes for popen's shell: `\\$` keeps `$` for sh -c
\tvar daemon = (
\t\t"setsid sleep 302 > /dev/null 2>&1 < /dev/null & p=\\\\$!; for q in \\\\$p %d; do "
\t\t+ "until grep -qx sleep /proc/\\\\$q/comm; do sleep 0.01; done; done; echo \\\\$p"
\t) % child
\tvar _status = OS.execute("sh", ["-c", daemon], true, out)
\tprint("DAEMON ", out[0].strip_edges())
\tif hang:
\t\twhile true:
\t\t\tpass
"""


def spawner_project(project: GodotProject, hang: bool) -> None:
    project.write_text("res://spawner.gd", SPAWNER)
    scene = project.new_scene("Main", "Node")
    scene.attach_script(".", "res://spawner.gd")
    scene.root.properties["hang"] = hang
    project.write_scene("res://main.tscn", scene)
    project.main_scene = "res://main.tscn"


def spawned_pids(output: str) -> list[int]:
    pids = [int(m.group(1)) for m in re.finditer(r"(?:CHILD|DAEMON) (\d+)", output)]
    assert len(pids) == 2, output[-2000:]
    return pids


@pytest.mark.anyio
@pytest.mark.parametrize("hang", [False, True], ids=["quits", "hangs-until-timeout"])
async def test_processes_the_game_starts_do_not_outlive_the_run(
    engine: GodotEngine, project: GodotProject, hang: bool
) -> None:
    spawner_project(project, hang)
    run = await engine.run_harness(
        project.path, HarnessJob(scene="res://main.tscn", frames=3), timeout=8
    )
    child, daemon = spawned_pids(run.stdout)
    assert run.timed_out is hang  # a game that quits is not held open by what it started
    assert not pid_alive(child) and not pid_alive(daemon)


@pytest.mark.slow
@pytest.mark.anyio
async def test_live_game_children_are_stopped_with_the_game(
    engine: GodotEngine, project: GodotProject
) -> None:
    spawner_project(project, hang=False)
    async with GameSession(project, engine, window=False) as game:
        await game.request("ping")
        child, daemon = spawned_pids(game.output())
        assert pid_alive(child) and pid_alive(daemon)
    assert not pid_alive(child) and not pid_alive(daemon)
