"""Reading glTF 2.0 structure and accessor data with pygltflib and numpy."""

from __future__ import annotations

import base64
import urllib.parse
from pathlib import Path

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


class AccessorReader:
    """Decodes accessors of one glTF document into numpy arrays (buffers cached)."""

    def __init__(self, gltf: pygltflib.GLTF2, base_dir: Path) -> None:
        self.gltf = gltf
        self.base_dir = base_dir
        self._buffers: dict[int, bytes] = {}

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
