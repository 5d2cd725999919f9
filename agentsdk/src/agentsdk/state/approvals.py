"""``require_approval``: ask a person before tools someone else wrote (an MCP
server's, an installed toolkit's) run, without changing them."""

from __future__ import annotations

import typing
from typing import Any, overload

from ..tools import ApprovalRule, Tool, Toolkit

__all__ = ["require_approval"]


@overload
def require_approval(item: Tool, *names: str, when: ApprovalRule = True) -> Tool: ...
@overload
def require_approval(item: Toolkit, *names: str, when: ApprovalRule = True) -> Toolkit: ...
def require_approval(
    item: Tool | Toolkit, *names: str, when: ApprovalRule = True
) -> Tool | Toolkit:
    """``item`` with its calls waiting for approval.

    Args:
        item: A tool, or a toolkit (an ``MCPToolkit`` too: tools the server adds
            later are covered as they appear).
        names: For a toolkit, only these of its tools (their names as the model
            sees them); all of them when none are named.
        when: ``True``, or ``fn(arguments) -> bool`` deciding per call.

    ``Agent(tools=[require_approval(MCPToolkit.stdio("mcp-server-git"), "git_commit")])``
    """
    if isinstance(item, Tool):
        if names:
            raise TypeError("names select tools of a toolkit; a single tool takes none")
        marked = item.renamed(item.name)
        marked.needs_approval = when
        return marked
    if isinstance(item, Toolkit):
        return _ApprovalToolkit(item, set(names) or None, when)
    raise TypeError(f"require_approval takes a Tool or a Toolkit, not {type(item).__name__}")


class _ApprovalToolkit(Toolkit):
    """A toolkit whose (named) tools need approval; everything else is the inner one's."""

    def __init__(self, inner: Toolkit, names: set[str] | None, when: ApprovalRule):
        super().__init__()
        self.inner = inner
        self.names = names
        self.when = when
        self.name = inner.name  # type: ignore[misc]
        if names is not None:
            known = {t.name for t in inner.tools()}
            unknown = sorted(names - known)
            # a server that has not started lists no tools yet: check what can be checked
            if unknown and known:
                raise ValueError(
                    f"{type(inner).__name__} has no tool {unknown[0]!r} "
                    f"(tools: {', '.join(sorted(known))})"
                )

    def __getattr__(self, name: str) -> Any:
        # tools_version (an MCP toolkit's) and the inner toolkit's own API show through
        if name == "inner":
            raise AttributeError(name)
        return getattr(self.inner, name)

    async def __aenter__(self) -> typing.Self:
        await self.inner.__aenter__()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.inner.__aexit__(*exc)

    async def reset(self) -> None:
        await self.inner.reset()

    def tools(self) -> list[Tool]:
        out: list[Tool] = []
        for t in self.inner.tools():
            if self.names is None or t.name in self.names:
                t = t.renamed(t.name)
                t.needs_approval = self.when
            out.append(t)
        return out
