"""Request limits that pydantic cannot express because they are settings: code size, Run input size,
nesting depth and number count. Each violation is a 4xx naming the limit and where it was exceeded."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from judge.core.errors import InputError
from judge.core.settings import Settings
from judge.service.api_errors import ApiError, input_error
from judge.service.source import source_from_json


@dataclass(frozen=True)
class RequestLimits:
    max_code_bytes: int
    max_input_bytes: int
    max_input_depth: int
    max_input_elements: int

    @classmethod
    def from_settings(cls, settings: Settings) -> RequestLimits:
        return cls(
            max_code_bytes=settings.max_code_bytes,
            max_input_bytes=settings.max_input_bytes,
            max_input_depth=settings.max_input_depth,
            max_input_elements=settings.max_input_elements,
        )


def checked_code(code: str, limits: RequestLimits) -> str:
    """The source to grade; 422 when it is too large, not UTF-8 or holds a NUL (with the line)."""
    size = len(code.encode("utf-8", "surrogatepass"))
    if size > limits.max_code_bytes:
        raise ApiError(
            422,
            "limit_exceeded",
            f"code: {size} bytes, at most {limits.max_code_bytes} allowed",
            path="code",
            limit="max_code_bytes",
        )
    try:
        return source_from_json(code)
    except InputError as exc:
        raise ApiError(422, "invalid_code", str(exc), path="code") from None


def _key(key: Any) -> str:
    return f"[{json.dumps(key, ensure_ascii=False)}]" if isinstance(key, str) else f"[{key}]"


def check_inputs(inputs: dict[str, Any], limits: RequestLimits) -> None:
    """Bound the Run inputs before any conversion: 422 naming the limit, the argument and the path."""
    try:
        size = len(json.dumps(inputs, ensure_ascii=False, allow_nan=False).encode("utf-8", "surrogatepass"))
    except ValueError:
        raise input_error(InputError("inputs", "holds a value JSON cannot represent")) from None
    if size > limits.max_input_bytes:
        raise ApiError(
            422,
            "limit_exceeded",
            f"inputs: {size} bytes of JSON, at most {limits.max_input_bytes} allowed",
            path="inputs",
            limit="max_input_bytes",
        )
    elements = 0
    # Iterative walk: (value, path, depth of containers above it).
    stack: list[tuple[Any, str, int]] = [(value, name, 0) for name, value in inputs.items()]
    while stack:
        value, path, depth = stack.pop()
        if isinstance(value, dict | list):
            if depth + 1 > limits.max_input_depth:
                raise ApiError(
                    422,
                    "limit_exceeded",
                    f"{path}: nested deeper than {limits.max_input_depth} levels",
                    argument=path.split("[", 1)[0],
                    path=path,
                    limit="max_input_depth",
                )
            items = value.items() if isinstance(value, dict) else enumerate(value)
            stack.extend((item, path + _key(key), depth + 1) for key, item in items)
        elif isinstance(value, int | float) and not isinstance(value, bool):
            elements += 1
            if elements > limits.max_input_elements:
                raise ApiError(
                    422,
                    "limit_exceeded",
                    f"inputs: more than {limits.max_input_elements} numbers in all",
                    argument=path.split("[", 1)[0],
                    path=path,
                    limit="max_input_elements",
                )
