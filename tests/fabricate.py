"""Helpers that fabricate what the sandboxed programs send, for tests of the judge's side."""

from __future__ import annotations

from typing import Any

import numpy as np

from sandbox.shared.tree import OtherNode
from sandbox.shared.wire import encode_key


def skeletonize(tree: Any) -> tuple[Any, list[np.ndarray[Any, Any]]]:
    """A host output tree -> (the tracer's output skeleton, the executor's flat output leaves)."""
    leaves: list[np.ndarray[Any, Any]] = []

    def walk(node: Any) -> Any:
        if isinstance(node, dict):
            return {"dict": [[encode_key(k), walk(v)] for k, v in node.items()]}
        if isinstance(node, list):
            return {"list": [walk(v) for v in node]}
        if isinstance(node, tuple):
            return {"tuple": [walk(v) for v in node]}
        if node is None:
            return {"none": True}
        if isinstance(node, OtherNode):
            return {"node": {"type": node.type_name, "children": [walk(c) for c in node.children]}}
        leaves.append(np.asarray(node))
        return {"out": len(leaves) - 1}

    return walk(tree), leaves
