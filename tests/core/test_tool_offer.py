"""A refusal that offers the call to make instead (``ToolError(instead=...)``): the offer
reaches the result the model's connector sees, through the loop guard's notes and a
durable run's store."""

from __future__ import annotations

from pathlib import Path

import pytest
from agentsdk.state import SQLiteStore, load_state
from agentsdk.testing import ScriptedModel

from agentsdk import Agent, ToolCallPart, ToolError, tool

pytestmark = pytest.mark.anyio


def _shelf() -> tuple[list[dict[str, object]], object]:
    made: list[dict[str, object]] = []

    @tool(side_effects=True)
    def add(name: str, extras: dict[str, str] | None = None) -> str:
        """Add a thing.

        Args:
            name: Its name.
            extras: Fields of the thing; only "colour" exists.
        """
        unknown = sorted(set(extras or {}) - {"colour"})
        if unknown:
            instead = {
                "name": name,
                "extras": {k: v for k, v in (extras or {}).items() if k not in unknown},
            }
            raise ToolError(f"no field {unknown[0]}: add(**{instead}) adds it", instead=instead)
        made.append({"name": name, **(extras or {})})
        return f"added {name}"

    return made, add


def _made_up() -> ToolCallPart:
    return ToolCallPart(name="add", arguments={"name": "Cam", "extras": {"direction": "front"}})


async def test_the_offer_is_on_the_result_and_survives_the_loop_guards_notes() -> None:
    made, add = _shelf()
    model = ScriptedModel([_made_up(), _made_up(), "gave up"])
    result = await Agent(model, tools=[add]).run("add a camera")
    assert made == []  # refused twice: nothing was added
    first = model.requests[1].messages[-1].tool_results[0]
    again = model.requests[2].messages[-1].tool_results[0]
    offered = {"name": "Cam", "extras": {}}
    assert first.is_error and first.instead == offered
    # The second refusal is wrapped in the guard's note; the offer stays.
    assert again.is_error and "Loop detected" in again.text and again.instead == offered
    assert result.output == "gave up"


async def test_a_result_with_no_offer_has_none_and_a_success_never_has_one() -> None:
    made, add = _shelf()
    ok = ToolCallPart(name="add", arguments={"name": "Box", "extras": {"colour": "red"}})
    model = ScriptedModel([ok, "done"])
    await Agent(model, tools=[add]).run("add a red box")
    assert made == [{"name": "Box", "colour": "red"}]
    assert model.requests[1].messages[-1].tool_results[0].instead is None


async def test_a_durable_run_keeps_the_offer(tmp_path: Path) -> None:
    _, add = _shelf()
    store = SQLiteStore(tmp_path / "runs.db")
    model = ScriptedModel([_made_up(), RuntimeError("model down")])
    with pytest.raises(RuntimeError):
        await Agent(model, tools=[add], store=store).run("add a camera", run_id="cam")
    state = await load_state(store, "cam")
    results = [r for m in state.messages for r in m.tool_results]
    assert [r.instead for r in results] == [{"name": "Cam", "extras": {}}]
    # Resumed, the model sees the same offer it would have seen.
    resumed = ScriptedModel(["done"])
    await Agent(resumed, tools=[add], store=store).resume("cam")
    seen = [r for m in resumed.requests[0].messages for r in m.tool_results]
    assert seen[0].instead == {"name": "Cam", "extras": {}}
