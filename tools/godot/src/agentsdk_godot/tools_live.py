"""Tools that drive the running game through the runtime bridge."""

from __future__ import annotations

import anyio

from agentsdk import Image, ToolContext, ToolError, tool
from agentsdk_godot.bridge import BridgeError, GameSession
from agentsdk_godot.diagnostics import format_diagnostics
from agentsdk_godot.engine import NodeInfo
from agentsdk_godot.toolkit_base import GodotToolkitBase
from agentsdk_godot.tools_authoring import literal
from agentsdk_godot.variant import format_variant

__all__ = ["LiveGameTools"]


def _errors_suffix(game: GameSession) -> str:
    errors = [d for d in game.recent_errors() if d.severity == "error"]
    return "\nerrors so far:\n" + format_diagnostics(errors) if errors else ""


class LiveGameTools(GodotToolkitBase):
    """game_tree, game_set, game_input, game_screenshot, game_stop."""

    async def _live(self) -> GameSession:
        if self._game is None or not self._game.alive:
            if self._game is not None:
                await self._game.close()
            self._game = GameSession(self.project, self.engine)
            try:
                await self._game.start()
            except BridgeError as err:
                self._game = None
                raise ToolError(str(err)) from None
        return self._game

    @tool
    async def game_tree(self, path: str = "") -> str:
        """Start the game if needed and show its live scene tree with property values.

        Args:
            path: Node path to start from (default: the current scene).
        """
        game = await self._live()
        try:
            tree: NodeInfo = await game.tree(path)
        except BridgeError as err:
            raise ToolError(str(err)) from None
        return tree.outline() + _errors_suffix(game)

    @tool(side_effects=True)
    async def game_set(self, node: str, property: str, value: str) -> str:
        """Set a property on a node of the running game.

        Args:
            node: Node path relative to the current scene.
            property: Property name.
            value: A Godot literal, e.g. Vector3( 0, 2, 0 ).
        """
        game = await self._live()
        literal(value)
        try:
            new = await game.set(node, property, value)
        except BridgeError as err:
            raise ToolError(str(err)) from None
        return (
            f"{node}.{property} = {format_variant(new, self.project.dialect.style)}"
            + _errors_suffix(game)
        )

    @tool(side_effects=True)
    async def game_input(self, action: str, seconds: float = 0.5) -> str:
        """Hold an input action (e.g. "ui_right", "jump") in the running game, then release it.

        Args:
            action: An action of the project's input map.
            seconds: How long to hold it.
        """
        game = await self._live()
        try:
            await game.input(action, True)
            await anyio.sleep(max(0.0, min(seconds, 30.0)))
            await game.input(action, False)
        except BridgeError as err:
            raise ToolError(str(err)) from None
        return f"held {action} for {seconds:.2f}s" + _errors_suffix(game)

    @tool
    async def game_screenshot(self, ctx: ToolContext | None = None) -> list[str | Image]:
        """The current frame of the running game, with what it shows (the game pauses for the
        few frames this takes)."""
        game = await self._live()
        try:
            png, report = await game.look()
        except BridgeError as err:
            raise ToolError(str(err)) from None
        saved = self._keep(png, "game.png", ctx)
        self._reports[saved.resolve()] = report
        head = f"live frame, saved as {saved.name}"
        if report.blank:
            head += f"\nWARNING: the frame is blank ({report.blank_colour or 'one colour'})"
        return [f"{head}\n{report.to_text()}" + _errors_suffix(game), Image(png)]

    @tool(side_effects=True)
    async def game_stop(self) -> str:
        """Stop the running game."""
        if self._game is None:
            return "no game was running"
        await self._stop_game()
        return "stopped"
