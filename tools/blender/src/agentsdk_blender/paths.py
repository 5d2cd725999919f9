"""Where the Blender tools may read and write, and what a 3D file really is.

Every path a model passes is resolved (``..`` and symlinks included) before it is used:
writes must land inside the output folder, reads inside a read root or the output folder.
Files that point at other files (a glTF's buffers and images, an OBJ's material library)
are checked the same way before Blender or the validator opens them. And a file's content
is sniffed, so a GLB renamed ``.stl`` is refused instead of "importing" as an empty object.
"""

from __future__ import annotations

import json
import os
import re
import struct
import urllib.parse
from collections.abc import Iterable, Sequence
from pathlib import Path

__all__ = ["PathPolicy", "PathRefused", "check_format", "detect_format", "referenced_files"]

GLTF_FAMILY = ("glb", "gltf")


class PathRefused(ValueError):
    """A path is outside the allowed folders, missing, or its content is not what it claims."""


def _inside(path: Path, root: Path) -> bool:
    return path == root or path.is_relative_to(root)


class PathPolicy:
    """The folders the tools may write to (one) and read from (several).

    ``write_root`` is the output folder; reads are allowed below any of ``read_roots`` and
    below the output folder (to validate or re-import what was exported).
    """

    def __init__(self, write_root: Path, read_roots: Sequence[Path]) -> None:
        self.write_root = write_root.resolve()
        self.read_roots = [r.resolve() for r in read_roots]

    def _readable_roots(self) -> list[Path]:
        return [self.write_root, *(r for r in self.read_roots if r != self.write_root)]

    def writable(self, path: str) -> Path:
        """Resolve an output path (relative paths go into the output folder) or refuse it."""
        target = (self.write_root / Path(path).expanduser()).resolve()
        if not _inside(target, self.write_root) or target == self.write_root:
            raise PathRefused(
                f"cannot write {path!r}: it resolves to {target}, outside the output folder "
                f"{self.write_root}; give a file name or a path inside that folder"
            )
        return target

    def readable(self, path: str) -> Path:
        """Resolve an existing input file (relative: the output folder first, then each read
        root) or refuse it."""
        given = Path(path).expanduser()
        roots = self._readable_roots()
        candidates = [given] if given.is_absolute() else [root / given for root in roots]
        refused: Path | None = None
        for candidate in candidates:
            resolved = candidate.resolve()
            inside = any(_inside(resolved, root) for root in roots)
            if inside and resolved.is_file():
                return resolved
            if not inside and (resolved.is_file() or given.is_absolute()):
                refused = refused or resolved
        allowed = ", ".join(str(r) for r in roots)
        if refused is not None:
            raise PathRefused(
                f"cannot read {path!r}: it resolves to {refused}, outside the folders the "
                f"tools may read ({allowed})"
            )
        raise PathRefused(f"no such file: {path} (looked in {allowed})")

    def check_references(self, path: Path) -> None:
        """Refuse a file whose buffers, images or material libraries lie outside the roots."""
        roots = self._readable_roots()
        for reference in referenced_files(path):
            resolved = reference.resolve()
            if not any(_inside(resolved, root) for root in roots):
                raise PathRefused(
                    f"{path.name} refers to {reference}, outside the folders the tools may read; "
                    "copy the files it needs next to it"
                )

    def check_sidecars(self, target: Path, fmt: str) -> None:
        """Refuse an export whose companion files (.mtl, .bin) would be written through a
        symlink that leaves the output folder."""
        companions = {"obj": [".mtl"], "gltf": [".bin"]}.get(fmt, [])
        for suffix in companions:
            companion = target.with_suffix(suffix)
            if companion.is_symlink() and not _inside(companion.resolve(), self.write_root):
                raise PathRefused(
                    f"cannot write {target.name}: its companion {companion.name} is a link "
                    f"to {companion.resolve()}, outside the output folder"
                )


# --- what a file really is --------------------------------------------------------------


def detect_format(path: Path) -> str | None:
    """The 3D format the file's bytes say it is (glb, gltf, fbx, obj, stl, ply), or None."""
    with path.open("rb") as handle:
        head = handle.read(4096)
    size = path.stat().st_size
    if head.startswith(b"glTF"):
        return "glb"
    if head.startswith(b"Kaydara FBX Binary"):
        return "fbx"
    if head.startswith(b"ply"):
        return "ply"
    if len(head) >= 84 and 84 + 50 * struct.unpack("<I", head[80:84])[0] == size:
        return "stl"  # binary STL: the facet count in the header matches the file size
    if head[:2] in (b"\xff\xfe", b"\xfe\xff"):  # UTF-16 text (some OBJ writers)
        head = head.decode("utf-16", "replace").encode("utf-8")
    text = head.lstrip(b"\xef\xbb\xbf \t\r\n")
    if text.startswith(b"solid") and b"facet" in head:
        return "stl"
    if b"\x00" in head:
        return None
    if text.startswith(b"{") and b'"asset"' in _whole_if_small(path, head):
        return "gltf"
    if b"FBXHeaderExtension" in head or text.startswith(b"; FBX"):
        return "fbx"
    if re.search(rb"(?m)^\s*(v|vn|vt|f|o|g|mtllib|usemtl)\s", head):
        return "obj"
    return None


def _whole_if_small(path: Path, head: bytes) -> bytes:
    # "asset" may come after a long "accessors" list; read up to 64 MB of JSON to find it.
    if len(head) < 4096:
        return head
    with path.open("rb") as handle:
        return handle.read(64 << 20)


_NAMES = {"glb": "binary glTF (GLB)", "gltf": "glTF JSON", "fbx": "FBX", "obj": "OBJ",
          "stl": "STL", "ply": "PLY"}  # fmt: skip


def check_format(path: Path, fmt: str) -> str:
    """The format to read ``path`` with: ``fmt``, unless the content says otherwise.

    A glb/gltf mix-up is corrected silently (Blender and the validator read both);
    any other mismatch is refused with the format the file really has.
    """
    found = detect_format(path)
    if found == fmt or (found in GLTF_FAMILY and fmt in GLTF_FAMILY):
        return found or fmt
    if found is None and path.stat().st_size == 0:
        raise PathRefused(f"{path.name} is empty")
    if found is None:
        raise PathRefused(
            f"{path.name} does not look like a {_NAMES.get(fmt, fmt)} file (its first bytes "
            "match no supported 3D format); it may be damaged or of another type"
        )
    raise PathRefused(
        f"{path.name} is a {_NAMES[found]} file, not {_NAMES.get(fmt, fmt)}: rename it to "
        f".{found} or pass format={found!r}"
    )


# --- files a file points at --------------------------------------------------------------


def _gltf_uris(path: Path) -> Iterable[str]:
    if detect_format(path) == "glb":
        data = path.read_bytes()
        if len(data) < 20:
            return []
        (length,) = struct.unpack("<I", data[12:16])
        document = json.loads(data[20 : 20 + length])
    else:
        document = json.loads(path.read_text("utf-8-sig"))
    items = [*document.get("buffers", []), *document.get("images", [])]
    return [item["uri"] for item in items if isinstance(item, dict) and "uri" in item]


def referenced_files(path: Path) -> list[Path]:
    """External files a glTF (buffers, images) or OBJ (mtllib, and the MTL's texture maps)
    refers to, resolved against the file's folder. data: URIs are not files."""
    suffix = path.suffix.lower()
    found: list[Path] = []
    try:
        if suffix in (".gltf", ".glb"):
            for uri in _gltf_uris(path):
                if not uri.startswith("data:") and "://" not in uri:
                    found.append(path.parent / urllib.parse.unquote(uri))
        elif suffix == ".obj":
            for library in _directives(path, (b"mtllib",)):
                mtl = path.parent / library
                found.append(mtl)
                if mtl.is_file() and _inside(mtl.resolve(), path.parent.resolve()):
                    maps = (
                        b"map_Kd",
                        b"map_Ks",
                        b"map_Ka",
                        b"map_Bump",
                        b"bump",
                        b"map_d",
                        b"norm",
                    )
                    found += [mtl.parent / m.split()[-1] for m in _directives(mtl, maps) if m]
    except (OSError, ValueError, UnicodeDecodeError):
        return found  # unreadable structure: the importer or validator reports it
    return found


def _directives(path: Path, keywords: tuple[bytes, ...]) -> list[str]:
    values = []
    with path.open("rb") as handle:
        for raw in handle:
            line = raw.strip()
            for keyword in keywords:
                if line.startswith(keyword + b" ") or line.startswith(keyword + b"\t"):
                    values.append(line[len(keyword) :].strip().decode("utf-8", "replace"))
    return [v.replace("\\", os.sep) for v in values]
