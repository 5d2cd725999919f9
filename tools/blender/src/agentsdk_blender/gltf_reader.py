"""Reading glTF 2.0 structure and accessor data with pygltflib and numpy."""

from __future__ import annotations

import base64
import urllib.parse
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
import pygltflib

_COMPONENT_TYPES: dict[int, type[np.generic]] = {
    5120: np.int8,
    5121: np.uint8,
    5122: np.int16,
    5123: np.uint16,
    5125: np.uint32,
    5126: np.float32,
}
_COMPONENTS = {"SCALAR": 1, "VEC2": 2, "VEC3": 3, "VEC4": 4, "MAT2": 4, "MAT3": 9, "MAT4": 16}


class GltfDataError(Exception):
    """An accessor, buffer view or buffer cannot be read (out of range, missing file...)."""


def load_gltf(path: Path) -> pygltflib.GLTF2:
    """Parse a .gltf or .glb file."""
    return pygltflib.GLTF2().load(str(path))


def _uri_path(base_dir: Path, uri: str) -> Path:
    return base_dir / urllib.parse.unquote(uri)


def uri_resolves(base_dir: Path, uri: str) -> bool:
    """Whether a buffer or image URI points at data that exists (data: URIs always do)."""
    return uri.startswith("data:") or _uri_path(base_dir, uri).is_file()


DRACO = "KHR_draco_mesh_compression"


class AccessorReader:
    """Decodes accessors of one glTF document into numpy arrays (buffers cached).

    Draco-compressed primitives (KHR_draco_mesh_compression) are decoded with DracoPy:
    their accessors have no data of their own, only the count the decoded data must have.
    """

    def __init__(self, gltf: pygltflib.GLTF2, base_dir: Path) -> None:
        self.gltf = gltf
        self.base_dir = base_dir
        self._buffers: dict[int, bytes] = {}
        self._draco: dict[int, Any] = {}

    def attribute(self, primitive: pygltflib.Primitive, name: str) -> npt.NDArray[np.float64]:
        """A vertex attribute of a primitive (e.g. NORMAL, JOINTS_0), Draco-decoded if needed."""
        index = getattr(primitive.attributes, name)
        draco = (primitive.extensions or {}).get(DRACO)
        if isinstance(draco, dict) and name in (draco.get("attributes") or {}):
            return self._draco_attribute(draco, draco["attributes"][name], index)
        return self.read(index)

    def check_draco(self, primitive: pygltflib.Primitive) -> None:
        """Decode a Draco primitive's positions and faces and compare them with what its
        accessors promise; raise GltfDataError when they cannot be decoded or disagree."""
        extension = (primitive.extensions or {}).get(DRACO)
        if not isinstance(extension, dict):
            return
        self.attribute(primitive, "POSITION")
        faces = getattr(self._decoded(int(extension["bufferView"])), "faces", None)
        corners = 0 if faces is None else int(np.asarray(faces).size)
        indices = primitive.indices
        expected = self.gltf.accessors[indices].count if indices is not None else None
        if expected is not None and corners != expected:
            raise GltfDataError(
                f"Draco data in bufferView {extension['bufferView']} decodes to {corners} "
                f"indices, the accessor says {expected}"
            )

    def _decoded(self, view_index: int) -> Any:
        if view_index not in self._draco:
            import DracoPy  # a dependency; imported late because few files need it

            view = self.gltf.bufferViews[view_index]
            start = view.byteOffset or 0
            data = self.buffer(view.buffer)[start : start + view.byteLength]
            try:
                self._draco[view_index] = DracoPy.decode(data)
            except Exception as exc:
                raise GltfDataError(
                    f"Draco data in bufferView {view_index} cannot be decoded: {exc}"
                ) from None
        return self._draco[view_index]

    def _draco_attribute(
        self, extension: dict[str, Any], unique_id: int, accessor_index: int
    ) -> npt.NDArray[np.float64]:
        view_index = int(extension["bufferView"])
        decoded = self._decoded(view_index)
        found = None
        if decoded.points is not None:  # DracoPy returns an empty mesh for damaged data
            found = decoded.get_attribute_by_unique_id(int(unique_id))
        if found is None:
            raise GltfDataError(
                f"Draco data in bufferView {view_index} has no attribute {unique_id}"
            )
        accessor = self.gltf.accessors[accessor_index]
        raw = np.asarray(found["data"])
        array = raw.reshape(accessor.count, -1).astype(np.float64) if raw.size else raw
        if len(array) != accessor.count:
            raise GltfDataError(
                f"Draco attribute {unique_id} decodes to {len(array)} values, accessor "
                f"{accessor_index} says {accessor.count}"
            )
        if accessor.normalized and raw.dtype.kind in "iu":
            array /= float(np.iinfo(raw.dtype).max)
        return array

    def buffer(self, index: int) -> bytes:
        """The bytes of buffer ``index`` (GLB chunk, data: URI or external file)."""
        if index not in self._buffers:
            buffer = self.gltf.buffers[index]
            if buffer.uri is None:
                blob = self.gltf.binary_blob()
                if blob is None:
                    raise GltfDataError(f"buffer {index} has no uri and the file has no GLB chunk")
                data = bytes(blob)
            elif buffer.uri.startswith("data:"):
                data = base64.b64decode(buffer.uri.split(",", 1)[1])
            else:
                path = _uri_path(self.base_dir, buffer.uri)
                if not path.is_file():
                    raise GltfDataError(f"buffer {index} file {buffer.uri!r} not found")
                data = path.read_bytes()
            self._buffers[index] = data
        return self._buffers[index]

    def read(self, index: int) -> npt.NDArray[np.float64]:
        """Accessor ``index`` as a (count, components) float array, normalised when flagged."""
        accessor = self.gltf.accessors[index]
        width = _COMPONENTS[accessor.type]
        dtype = np.dtype(_COMPONENT_TYPES[accessor.componentType]).newbyteorder("<")
        if accessor.bufferView is None:  # all zeros unless sparse (sparse is not decoded)
            return np.zeros((accessor.count, width))
        view = self.gltf.bufferViews[accessor.bufferView]
        data = self.buffer(view.buffer)
        start = (view.byteOffset or 0) + (accessor.byteOffset or 0)
        stride = view.byteStride or dtype.itemsize * width
        end = start + stride * (accessor.count - 1) + dtype.itemsize * width
        if accessor.count and end > len(data):
            raise GltfDataError(f"accessor {index} reads past the end of buffer {view.buffer}")
        array = np.ndarray(
            (accessor.count, width),
            dtype,
            buffer=data,
            offset=start,
            strides=(stride, dtype.itemsize),
        ).astype(np.float64)
        if accessor.normalized and dtype.kind in "iu":
            array /= float(np.iinfo(dtype).max)  # type: ignore[type-var]
        return array
