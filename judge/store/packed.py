"""A submission's result, stored compactly: the JSON a client reads, in fewer bytes.

PostgreSQL keeps it as JSONB (TOAST compresses a large document by itself). SQLite would keep the JSON
text as written (a result of public cases with their programs is 5 to 20 KB); there it is stored as
zlib-compressed compact JSON, a BLOB in the column still declared JSON (SQLite's columns take any value),
about a third of the text. Rows written before (JSON text) still read.

    PackedJson()     the column type (``models.Submission.result``)
    pack(value) / unpack(stored)     the SQLite form and back (the migration rewrites rows with them)
"""

from __future__ import annotations

import json
import zlib
from typing import Any

from sqlalchemy import JSON, TypeDecorator
from sqlalchemy.dialects.postgresql import JSONB
from sqlalchemy.engine import Dialect
from sqlalchemy.types import TypeEngine, UserDefinedType

#: zlib's level: 6 (its default) packs a result to about a third; 9 gains a few percent for twice the time.
LEVEL = 6


def pack(value: Any) -> bytes:
    return zlib.compress(json.dumps(value, separators=(",", ":"), allow_nan=False).encode(), LEVEL)


def unpack(stored: bytes | str) -> Any:
    """A stored value: packed bytes, or JSON text as rows written before packing hold it."""
    if isinstance(stored, bytes | bytearray | memoryview):
        return json.loads(zlib.decompress(bytes(stored)))
    return json.loads(stored)


class _SqliteJsonBlob(UserDefinedType[Any]):
    """SQLite's column as declared (``JSON``), handing values through as they are."""

    cache_ok = True

    def get_col_spec(self, **_kw: Any) -> str:
        return "JSON"


class PackedJson(TypeDecorator[Any]):
    """JSON documents: JSONB on PostgreSQL, packed (``pack``) on SQLite, JSON elsewhere. None is NULL."""

    impl = JSON
    cache_ok = True

    def load_dialect_impl(self, dialect: Dialect) -> TypeEngine[Any]:
        if dialect.name == "postgresql":
            return dialect.type_descriptor(JSONB())
        if dialect.name == "sqlite":
            return dialect.type_descriptor(_SqliteJsonBlob())
        return dialect.type_descriptor(JSON())

    def process_bind_param(self, value: Any, dialect: Dialect) -> Any:
        if value is None or dialect.name != "sqlite":
            return value
        return pack(value)

    def process_result_value(self, value: Any, dialect: Dialect) -> Any:
        if value is None or dialect.name != "sqlite":
            return value
        return unpack(value)
