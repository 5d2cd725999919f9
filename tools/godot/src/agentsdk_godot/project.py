"""A Godot project folder: project.godot, scenes, resources and scripts, read and written as text."""

from __future__ import annotations

from pathlib import Path

from agentsdk_godot.resource_text import ResourceText, Section, parse_resource_text
from agentsdk_godot.scene import SceneFile
from agentsdk_godot.variant import Variant
from agentsdk_godot.versions import GodotDialect, dialect_for

__all__ = ["GodotProject", "ProjectPathError"]


class ProjectPathError(ValueError):
    """A path outside the project or of the wrong kind."""


class GodotProject:
    """A project on disk. Paths are `res://...` or relative to the project folder."""

    def __init__(self, path: str | Path, *, major: int = 3):
        self.path = Path(path).resolve()
        self.dialect: GodotDialect = dialect_for(major)
        if not (self.path / "project.godot").exists():
            raise ProjectPathError(f"{self.path} has no project.godot (use GodotProject.create)")

    @classmethod
    def create(
        cls,
        path: str | Path,
        name: str = "agentsdk game",
        *,
        major: int = 3,
        width: int = 512,
        height: int = 512,
    ) -> GodotProject:
        """Create a new project folder with a project.godot (keeps an existing one)."""
        folder = Path(path)
        folder.mkdir(parents=True, exist_ok=True)
        settings = folder / "project.godot"
        if not settings.exists():
            dialect = dialect_for(major)
            doc = ResourceText(
                [
                    Section(None, properties={"config_version": dialect.config_version}),
                    Section("application", properties={"config/name": name}),
                    Section(
                        "display",
                        properties={
                            "window/size/width"
                            if major == 3
                            else "window/size/viewport_width": width,
                            "window/size/height"
                            if major == 3
                            else "window/size/viewport_height": height,
                        },
                    ),
                ],
                comments=["; Engine configuration file written by agentsdk-godot."],
            )
            settings.write_text(doc.to_text(dialect.style, config=True), encoding="utf-8")
        return cls(folder, major=major)

    # ---------- paths

    def res_path(self, path: str | Path) -> str:
        """`res://...` for a project-relative or absolute path inside the project."""
        text = str(path)
        if text.startswith("res://"):
            return text
        full = Path(text) if Path(text).is_absolute() else self.path / text
        try:
            rel = full.resolve().relative_to(self.path)
        except ValueError:
            raise ProjectPathError(f"{path} is outside the project {self.path}") from None
        return "res://" + rel.as_posix()

    def file(self, path: str | Path) -> Path:
        """The file on disk for `res://...` or a project-relative path (never outside the project)."""
        text = str(path)
        rel = text.removeprefix("res://") if text.startswith("res://") else text
        full = (self.path / rel).resolve()
        if full != self.path and self.path not in full.parents:
            raise ProjectPathError(f"{path} is outside the project")
        return full

    # ---------- project.godot

    def settings(self) -> ResourceText:
        """project.godot parsed."""
        return parse_resource_text(_read(self.path / "project.godot"))

    def save_settings(self, settings: ResourceText) -> None:
        """Write project.godot."""
        text = settings.to_text(self.dialect.style, config=True)
        (self.path / "project.godot").write_bytes(text.encode("utf-8"))

    def get_setting(self, section: str, key: str) -> Variant:
        """A setting such as ("application", "run/main_scene"), or None."""
        found = self.settings().section(section)
        return found.properties.get(key) if found else None

    def set_setting(self, section: str, key: str, value: Variant) -> None:
        """Set one setting and save project.godot."""
        settings = self.settings()
        target = settings.section(section, create=True)
        assert target is not None
        target.properties[key] = value
        self.save_settings(settings)

    @property
    def main_scene(self) -> str | None:
        """`application/run/main_scene`."""
        value = self.get_setting("application", "run/main_scene")
        return str(value) if value else None

    @main_scene.setter
    def main_scene(self, res_path: str) -> None:
        self.set_setting("application", "run/main_scene", self.res_path(res_path))

    # ---------- scenes, resources, scripts

    def new_scene(self, root_name: str, root_type: str) -> SceneFile:
        """An unsaved scene in this engine generation's format."""
        return SceneFile.new_scene(
            root_name, self.dialect.class_name(root_type), format=self.dialect.resource_format
        )

    def read_scene(self, path: str) -> SceneFile:
        """Parse a .tscn or .tres."""
        file = self.file(path)
        if not file.exists():
            raise ProjectPathError(f"{self.res_path(file)} does not exist")
        return SceneFile.parse(_read(file))

    def write_scene(self, path: str, scene: SceneFile) -> str:
        """Write a .tscn/.tres; returns its res:// path."""
        file = self.file(path)
        if file.suffix not in (".tscn", ".tres"):
            raise ProjectPathError(f"{path}: scenes end in .tscn, resources in .tres")
        file.parent.mkdir(parents=True, exist_ok=True)
        file.write_bytes(scene.to_text(self.dialect.style).encode("utf-8"))
        return self.res_path(file)

    read_resource = read_scene
    write_resource = write_scene

    def write_text(self, path: str, text: str) -> str:
        """Write any text file (a GDScript, a shader); returns its res:// path."""
        file = self.file(path)
        file.parent.mkdir(parents=True, exist_ok=True)
        file.write_text(text, encoding="utf-8")
        return self.res_path(file)

    def read_text(self, path: str) -> str:
        """Read a text file of the project."""
        return self.file(path).read_text(encoding="utf-8")

    def scenes(self) -> list[str]:
        """All .tscn files (res:// paths)."""
        return self._files("*.tscn")

    def scripts(self) -> list[str]:
        """All .gd files (res:// paths)."""
        return self._files("*.gd")

    def _files(self, pattern: str) -> list[str]:
        return sorted(
            self.res_path(p)
            for p in self.path.rglob(pattern)
            if ".import" not in p.parts and ".godot" not in p.parts
        )


def _read(file: Path) -> str:
    # bytes, not read_text: universal newlines would turn a file's \r\n into \n
    return file.read_bytes().decode("utf-8")
