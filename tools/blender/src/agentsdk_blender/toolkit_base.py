"""What every group of Blender tools shares: the connection, tool groups, path roots,
and turning engine failures into errors the model can act on."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Annotated, Any, ClassVar, TypeVar

from pydantic import BaseModel, ValidationError, WithJsonSchema

from agentsdk import TextPart, Tool, ToolContext, ToolError, Toolkit

from .paths import PathPolicy, PathRefused
from .protocol import NonNegative, ObjectNames, Pixels, Unit, Vector3
from .worker import BlenderConnection, BlenderWorker, CommandFailed, ResultT, WorkerRestartedError

ModelT = TypeVar("ModelT", bound=BaseModel)

# -- argument types as the model sees them ------------------------------------------------
# Same validation as the protocol's types; only the JSON schema is shorter: pydantic writes an
# optional 3-vector as anyOf [array with prefixItems of 3 numbers, null] (~200 characters),
# where "3 numbers" says the same to a model in half of that. Omitted means None.


def _items(item: dict[str, Any], count: int) -> WithJsonSchema:
    return WithJsonSchema({"type": "array", "items": item, "minItems": count, "maxItems": count})


_NUMBER: dict[str, Any] = {"type": "number"}
_UNIT: dict[str, Any] = {"type": "number", "minimum": 0, "maximum": 1}
Vec3 = Annotated[Vector3, _items(_NUMBER, 3)]
OptVec3 = Annotated[Vector3 | None, _items(_NUMBER, 3)]
Colour3 = Annotated[tuple[Unit, Unit, Unit], _items(_UNIT, 3)]
OptColour4 = Annotated[tuple[Unit, Unit, Unit, Unit] | None, _items(_UNIT, 4)]
Size2 = Annotated[
    tuple[Pixels, Pixels], _items({"type": "integer", "minimum": 16, "maximum": 4096}, 2)
]
OptText = Annotated[str | None, WithJsonSchema({"type": "string"})]
# look_at: a point or an object's name (the engine aims at the centre of its world bounds).
_TARGET = {"anyOf": [_items(_NUMBER, 3).json_schema, {"type": "string"}]}
Target = Annotated[Vector3 | str, WithJsonSchema(_TARGET)]
OptTarget = Annotated[Vector3 | str | None, WithJsonSchema(_TARGET)]
OptNames = Annotated[
    ObjectNames | None,
    WithJsonSchema({"type": "array", "items": {"type": "string"}, "minItems": 1}),
]
OptNumber = Annotated[NonNegative | None, WithJsonSchema({"type": "number", "minimum": 0})]

GROUPS = ("core", "measure", "assets", "passes", "python")
"""Tool groups: ``core`` is on by default; the others are opt-in (``groups=[...]``)."""


def build_args(model: type[ModelT], **values: Any) -> ModelT:
    """Protocol arguments, with a bad value reported to the model rather than raised raw."""
    try:
        return model(**values)
    except ValidationError as exc:
        problems = "; ".join(
            # a check of the whole call (create_primitive's size for its kind) names its field
            f"{'.'.join(str(x) for x in e['loc'])}: {e['msg']}" if e["loc"] else e["msg"]
            for e in exc.errors(include_url=False)
        )
        raise ToolError(f"invalid arguments: {problems}") from None


class BlenderToolkitBase(Toolkit):
    """Shared state of the Blender tool groups (see ``BlenderToolkit``)."""

    name = "blender"
    instructions = (
        "You build scenes with the Blender tools; Z is up and units are metres. scene_info lists "
        "the objects; every render comes with a report of what the camera sees (per object: share "
        "of the frame, cut off, hidden). Read the results and fix what is wrong until the scene "
        "matches the request, then answer in one short sentence."
    )
    TOOL_GROUPS: ClassVar[dict[str, str]] = {}

    def __init__(
        self,
        connection: BlenderConnection | None = None,
        *,
        groups: Iterable[str] = ("core",),
        allow_python: bool = False,
        python_cpu_seconds: float = 10.0,
        python_memory_bytes: int = 1 << 30,
        output_dir: str | Path | None = None,
        read_roots: Sequence[str | Path] | None = None,
        render_timeout: float = 600.0,
        prefix: str | None = None,
    ) -> None:
        super().__init__(prefix=prefix)
        chosen = set(groups) | ({"python"} if allow_python else set())
        unknown = sorted(chosen - set(GROUPS))
        if unknown:
            raise ValueError(f"unknown tool groups {unknown}; choose from {list(GROUPS)}")
        self.groups = frozenset(chosen)
        self.connection: BlenderConnection = connection or BlenderWorker()
        self.allow_python = "python" in chosen
        self.python_cpu_seconds = python_cpu_seconds
        self.python_memory_bytes = python_memory_bytes
        self.output_dir = Path(output_dir).resolve() if output_dir is not None else None
        # Reads are confined too: by default to the folder the program was started in.
        roots = [Path.cwd()] if read_roots is None else [Path(r) for r in read_roots]
        self.read_roots = [r.expanduser().resolve() for r in roots]
        # Renders get their own, longer limit: a cold eevee shader compile takes ~20 s on CPU.
        self.render_timeout = render_timeout

    async def start(self) -> None:
        """Start the worker (or connect the bridge)."""
        await self.connection.start()

    async def close(self) -> None:
        """Stop the worker (or disconnect the bridge). Idempotent."""
        await self.connection.close()

    def tools(self) -> list[Tool]:
        """The bound tools of the enabled groups."""
        groups: dict[str, str] = {}
        for klass in reversed(type(self).__mro__):
            groups.update(getattr(klass, "TOOL_GROUPS", {}))
        strip = f"{self.prefix}_" if self.prefix else ""
        found: list[Tool] = super().tools()
        return [t for t in found if groups.get(t.name.removeprefix(strip), "core") in self.groups]

    # -- helpers for the tools -------------------------------------------------------

    def paths(self, ctx: ToolContext | None) -> PathPolicy:
        """The folders this call may write (output folder) and read."""
        if self.output_dir is not None:
            write_root = self.output_dir
        elif ctx is not None:
            write_root = Path(ctx.artifacts.dir)
        else:
            write_root = Path.cwd()
        return PathPolicy(write_root, self.read_roots)

    def path_or_error(self, resolve: Any, path: str) -> Path:
        """Run a PathPolicy method; a refusal becomes a ToolError."""
        try:
            result: Path = resolve(path)
        except PathRefused as exc:
            raise ToolError(str(exc)) from None
        return result

    async def call_engine(
        self,
        command: str,
        args: BaseModel | None,
        result: type[ResultT],
        timeout: float | None = None,
    ) -> ResultT:
        """One engine command; failures and restarts become ToolErrors the model can read."""
        try:
            return await self.connection.call(command, args, result, timeout=timeout)
        except (CommandFailed, WorkerRestartedError) as exc:
            raise ToolError(self._with_notice(str(exc))) from None

    def _with_notice(self, text: str) -> str:
        notice = self.connection.take_notice()
        return f"Note: {notice}.\n{text}" if notice else text

    def reply(self, result: BaseModel | str) -> BaseModel | str | list[TextPart]:
        """A tool's result, preceded by any notice (e.g. the worker restarted and the scene
        was restored from the last save) the model must read."""
        notice = self.connection.take_notice()
        if notice is None:
            return result
        body = result if isinstance(result, str) else result.model_dump_json(exclude_none=True)
        return [TextPart(text=f"Note: {notice}."), TextPart(text=body)]
