"""Find toolkits and model connectors installed as entry points.

A plugin package registers itself exactly as the first-party ones do::

    [project.entry-points."agentsdk.toolkits"]
    mytools = "my_package:MyToolkit"
    [project.entry-points."agentsdk.models"]
    myengine = "my_package:connect"      # connect("myengine:model-name") -> Model
    [project.entry-points."agentsdk.suites"]
    mysuite = "my_package.tasks:suite"   # a tasks.Suite, or a function returning one
"""

from __future__ import annotations

import functools
from importlib.metadata import EntryPoint, entry_points
from typing import TYPE_CHECKING, Any, cast

from .errors import PluginNotFound

if TYPE_CHECKING:  # pragma: no cover
    from .models import Model
    from .tasks import Suite
    from .tools import Toolkit

TOOLKITS_GROUP = "agentsdk.toolkits"
MODELS_GROUP = "agentsdk.models"
SUITES_GROUP = "agentsdk.suites"


@functools.cache
def _group(group: str) -> dict[str, EntryPoint]:
    return {ep.name: ep for ep in entry_points(group=group)}


def refresh() -> None:
    """Forget cached entry points (after installing a plugin at run time)."""
    _group.cache_clear()


def toolkit_names() -> list[str]:
    """Names of the installed toolkits."""
    return sorted(_group(TOOLKITS_GROUP))


def model_schemes() -> list[str]:
    """Model string schemes the installed connectors accept."""
    return sorted(_group(MODELS_GROUP))


def suite_names() -> list[str]:
    """Names of the installed task suites."""
    return sorted(_group(SUITES_GROUP))


def load_suite(name: str) -> Suite:
    """The task suite registered under ``name`` (a ``Suite`` or a function returning one)."""
    from .tasks import Suite

    ep = _group(SUITES_GROUP).get(name)
    if ep is None:
        installed = ", ".join(suite_names()) or "none"
        raise PluginNotFound(f"no task suite named {name!r} is installed (installed: {installed})")
    value: Any = ep.load()
    suite = value() if callable(value) and not isinstance(value, Suite) else value
    if not isinstance(suite, Suite):
        raise TypeError(
            f"the entry point for suite {name!r} gave {type(suite).__name__}, not a Suite"
        )
    return suite


def load_toolkit_class(name: str) -> type[Toolkit]:
    """The toolkit class registered under ``name``."""
    ep = _group(TOOLKITS_GROUP).get(name)
    if ep is None:
        installed = ", ".join(toolkit_names()) or "none"
        raise PluginNotFound(f"no toolkit named {name!r} is installed (installed: {installed})")
    return cast("type[Toolkit]", ep.load())


def load_toolkit(name: str) -> Toolkit:
    """An instance of the toolkit registered under ``name``, with default settings;
    ``"mcp:<server>"`` is an MCP server's tools (see ``agentsdk.mcp.toolkit_from_string``)."""
    if name.startswith("mcp:"):
        from .mcp import toolkit_from_string

        return toolkit_from_string(name)
    return load_toolkit_class(name)()


def resolve_model(model: Model | str) -> Model:
    """A model from an instance or a string such as ``"openai:gpt-4.1"``."""
    if not isinstance(model, str):
        return model
    if ":" not in model:
        raise PluginNotFound(
            f"model string {model!r} needs a scheme, like 'openai:gpt-4.1' or 'local:default' "
            f"(installed schemes: {', '.join(model_schemes()) or 'none'})"
        )
    scheme = model.split(":", 1)[0]
    ep = _group(MODELS_GROUP).get(scheme)
    if ep is None:
        installed = ", ".join(model_schemes()) or "none"
        raise PluginNotFound(
            f"no model connector handles {scheme!r} (installed schemes: {installed}); "
            "install agentsdk-openai or agentsdk-anthropic"
        )
    connect: Any = ep.load()
    return cast("Model", connect(model))
