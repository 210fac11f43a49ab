"""The wire format between the judge and the sandboxed harness: framed JSON, trees as data.

Frames are a 4-byte big-endian length followed by that many bytes of UTF-8 JSON. Trees travel as JSON
nodes whose array leaves carry dtype, shape and base64 bytes. Nothing is ever pickled, and the decoder
validates depth, leaf count, sizes, dtypes and shapes before building any array.

Both sides import this module: it needs only the standard library, numpy and ml_dtypes.
"""

from __future__ import annotations

import base64
import json
import math
import struct
from dataclasses import dataclass
from typing import Any, BinaryIO

import ml_dtypes
import numpy as np

from .tree import NonStrKey, OtherNode

_HEADER = struct.Struct(">I")

#: dtype name -> numpy dtype, the only dtypes a leaf may have on the wire.
DTYPES: dict[str, np.dtype[Any]] = {
    name: np.dtype(dt)
    for name, dt in {
        "float32": np.float32,
        "float64": np.float64,
        "float16": np.float16,
        "bfloat16": ml_dtypes.bfloat16,
        "int8": np.int8,
        "int16": np.int16,
        "int32": np.int32,
        "int64": np.int64,
        "uint8": np.uint8,
        "uint32": np.uint32,
        "bool": np.bool_,
        "complex64": np.complex64,
    }.items()
}


class ProtocolError(Exception):
    """A frame or tree that does not follow the wire format (never the user's fault to see as such)."""


@dataclass(frozen=True)
class TreeLimits:
    max_depth: int = 64
    max_leaves: int = 4096
    max_bytes: int = 64 * 1024 * 1024
    max_ndim: int = 8


def dtype_name(dtype: np.dtype[Any]) -> str:
    name = np.dtype(dtype).name
    return "bool" if name == "bool" else name


# ---------------------------------------------------------------------------------------------- framing


def encode_frame(message: dict[str, Any]) -> bytes:
    data = json.dumps(message, separators=(",", ":"), allow_nan=False).encode()
    return _HEADER.pack(len(data)) + data


def write_frame(stream: BinaryIO, message: dict[str, Any]) -> None:
    stream.write(encode_frame(message))
    stream.flush()


class FrameReader:
    """Incremental frame decoder: feed bytes as they arrive, take complete messages out."""

    def __init__(self, max_frame: int) -> None:
        self._buf = bytearray()
        self._max = max_frame

    def feed(self, data: bytes) -> list[dict[str, Any]]:
        self._buf += data
        out: list[dict[str, Any]] = []
        while len(self._buf) >= _HEADER.size:
            (size,) = _HEADER.unpack_from(self._buf)
            if size > self._max:
                raise ProtocolError(f"frame of {size} bytes exceeds the {self._max}-byte cap")
            if len(self._buf) < _HEADER.size + size:
                break
            raw = bytes(self._buf[_HEADER.size : _HEADER.size + size])
            del self._buf[: _HEADER.size + size]
            try:
                message = json.loads(raw)
            except ValueError as exc:
                raise ProtocolError(f"frame is not JSON: {exc}") from None
            if not isinstance(message, dict) or not isinstance(message.get("type"), str):
                raise ProtocolError("frame is not a typed message")
            out.append(message)
        return out

    @property
    def pending(self) -> int:
        return len(self._buf)


def read_frame(stream: BinaryIO, max_frame: int) -> dict[str, Any]:
    header = stream.read(_HEADER.size)
    if len(header) < _HEADER.size:
        raise EOFError("channel closed")
    (size,) = _HEADER.unpack(header)
    if size > max_frame:
        raise ProtocolError(f"frame of {size} bytes exceeds the {max_frame}-byte cap")
    data = stream.read(size)
    if len(data) < size:
        raise EOFError("channel closed mid-frame")
    messages = FrameReader(max_frame).feed(header + data)
    return messages[0]


# ---------------------------------------------------------------------------------------------- trees


def encode_leaf(array: np.ndarray[Any, Any]) -> dict[str, Any]:
    array = np.asarray(array)
    if not array.flags.c_contiguous:
        array = array.copy(order="C")
    name = dtype_name(array.dtype)
    if name not in DTYPES:
        raise ProtocolError(f"dtype {name} cannot be sent")
    return {
        "leaf": {
            "dtype": name,
            "shape": list(array.shape),
            "data": base64.b64encode(array.tobytes()).decode("ascii"),
        }
    }


def encode_tree(tree: Any, leaf_to_numpy: Any = np.asarray) -> Any:
    """Encode a host tree (dict/list/tuple/None/OtherNode and array leaves) as JSON-able nodes."""
    if isinstance(tree, dict):
        items = []
        for key, value in tree.items():
            wire_key: Any = (
                key if isinstance(key, str) else {"repr": repr(key)[:200], "type": type(key).__name__}
            )
            items.append([wire_key, encode_tree(value, leaf_to_numpy)])
        return {"dict": items}
    if isinstance(tree, list):
        return {"list": [encode_tree(v, leaf_to_numpy) for v in tree]}
    if isinstance(tree, tuple) and not hasattr(tree, "_fields"):
        return {"tuple": [encode_tree(v, leaf_to_numpy) for v in tree]}
    if tree is None:
        return {"none": True}
    if isinstance(tree, OtherNode):
        return {
            "node": {
                "type": tree.type_name,
                "children": [encode_tree(c, leaf_to_numpy) for c in tree.children],
            }
        }
    return encode_leaf(leaf_to_numpy(tree))


class _Budget:
    def __init__(self, limits: TreeLimits) -> None:
        self.limits = limits
        self.leaves = 0
        self.bytes = 0


def decode_tree(node: Any, limits: TreeLimits = TreeLimits()) -> Any:
    """Decode and validate a wire tree. Raises ProtocolError on anything malformed or over the limits."""
    return _decode(node, _Budget(limits), 0)


def _decode(node: Any, budget: _Budget, depth: int) -> Any:
    if depth > budget.limits.max_depth:
        raise ProtocolError(f"tree deeper than {budget.limits.max_depth}")
    if not isinstance(node, dict) or len(node) != 1:
        raise ProtocolError("tree node is not a one-key object")
    ((tag, body),) = node.items()
    if tag == "leaf":
        return _decode_leaf(body, budget)
    if tag == "dict":
        if not isinstance(body, list):
            raise ProtocolError("dict node body is not a list")
        out: dict[Any, Any] = {}
        for item in body:
            if not isinstance(item, list) or len(item) != 2:
                raise ProtocolError("dict item is not a pair")
            key = _decode_key(item[0])
            out[key] = _decode(item[1], budget, depth + 1)
        return out
    if tag in ("list", "tuple"):
        if not isinstance(body, list):
            raise ProtocolError(f"{tag} node body is not a list")
        children = [_decode(c, budget, depth + 1) for c in body]
        return children if tag == "list" else tuple(children)
    if tag == "none":
        return None
    if tag == "node":
        if not isinstance(body, dict) or not isinstance(body.get("type"), str):
            raise ProtocolError("node body is malformed")
        kids = body.get("children")
        if not isinstance(kids, list):
            raise ProtocolError("node children is not a list")
        return OtherNode(body["type"][:200], tuple(_decode(c, budget, depth + 1) for c in kids))
    raise ProtocolError(f"unknown tree node {tag!r}")


def _decode_key(key: Any) -> Any:
    if isinstance(key, str):
        return key
    if isinstance(key, dict) and isinstance(key.get("repr"), str) and isinstance(key.get("type"), str):
        return NonStrKey(key["repr"][:200], key["type"][:100])
    raise ProtocolError("dict key is malformed")


def _decode_leaf(body: Any, budget: _Budget) -> np.ndarray[Any, Any]:
    if not isinstance(body, dict):
        raise ProtocolError("leaf body is not an object")
    name, shape, data = body.get("dtype"), body.get("shape"), body.get("data")
    if not isinstance(name, str) or name not in DTYPES:
        raise ProtocolError(f"leaf dtype {name!r} is not allowed")
    if (
        not isinstance(shape, list)
        or len(shape) > budget.limits.max_ndim
        or not all(isinstance(d, int) and not isinstance(d, bool) and d >= 0 for d in shape)
    ):
        raise ProtocolError("leaf shape is malformed")
    if not isinstance(data, str):
        raise ProtocolError("leaf data is not a string")
    dtype = DTYPES[name]
    nbytes = math.prod(shape) * dtype.itemsize
    budget.leaves += 1
    budget.bytes += nbytes
    if budget.leaves > budget.limits.max_leaves:
        raise ProtocolError(f"tree has more than {budget.limits.max_leaves} leaves")
    if budget.bytes > budget.limits.max_bytes:
        raise ProtocolError(f"tree holds more than {budget.limits.max_bytes} bytes")
    if len(data) > 4 * ((nbytes + 2) // 3) + 4:
        raise ProtocolError("leaf data is longer than its shape allows")
    try:
        raw = base64.b64decode(data, validate=True)
    except ValueError:
        raise ProtocolError("leaf data is not base64") from None
    if len(raw) != nbytes:
        raise ProtocolError(f"leaf data has {len(raw)} bytes, shape {tuple(shape)} of {name} needs {nbytes}")
    return np.frombuffer(raw, dtype=dtype).reshape(shape).copy()
