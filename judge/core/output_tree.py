"""The learner's output tree put together on the trusted side: the tracer's output skeleton (the tree's
structure, untrusted) with the executor's output leaves in place. Used by grading (``judge.core.grader``) and
by the output shardings' check (``judge.core.shardings``), which place the same skeleton over the layouts."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from sandbox.shared.tree import BadLeaf, OtherNode
from sandbox.shared.wire import ProtocolError, TreeLimits, decode_dict_node, key_array


def assemble(skeleton: Any, outputs: Sequence[np.ndarray[Any, Any]], max_bytes: int) -> Any:
    """The tracer's output skeleton with the executor's output leaves in place: a host tree for the checker.

    The skeleton is untrusted (it only arranges outputs the executor computed, so lying hurts the liar):
    each ``{"out": i}`` must use a distinct existing output, every output must be used, and the usual tree
    limits (depth, size) apply; ``{"key": {"impl": name, "out": i}}`` is a typed key output, whose data
    must be uint32 of that implementation's width (``sandbox.shared.tree.KeyArray``). Raises ProtocolError.
    """
    limits = TreeLimits(max_leaves=100_000, max_bytes=max_bytes)
    used: set[int] = set()

    def build(node: Any, depth: int) -> Any:
        if depth > limits.max_depth:
            raise ProtocolError(f"the output is nested deeper than {limits.max_depth}")
        if not isinstance(node, dict) or len(node) != 1:
            raise ProtocolError("output node is not a one-key object")
        ((tag, body),) = node.items()
        if tag == "out":
            if (
                not isinstance(body, int)
                or isinstance(body, bool)
                or not 0 <= body < len(outputs)
                or body in used
            ):
                raise ProtocolError("output leaf index is out of range or repeated")
            used.add(body)
            return outputs[body]
        if tag == "dict":
            return decode_dict_node(body, lambda child: build(child, depth + 1))
        if tag in ("list", "tuple"):
            if not isinstance(body, list):
                raise ProtocolError(f"{tag} node body is not a list")
            children = [build(c, depth + 1) for c in body]
            return children if tag == "list" else tuple(children)
        if tag == "none":
            return None
        if tag == "node":
            if (
                not isinstance(body, dict)
                or not isinstance(body.get("type"), str)
                or not isinstance(body.get("children"), list)
            ):
                raise ProtocolError("node body is malformed")
            return OtherNode(body["type"][:200], tuple(build(c, depth + 1) for c in body["children"]))
        if tag == "bad":
            return BadLeaf(str(body)[:100])
        if tag == "key":
            # A typed key output: the program returned its uint32 data; wrap it again as a key array.
            if not isinstance(body, dict) or set(body) != {"impl", "out"}:
                raise ProtocolError("key node body is malformed")
            data = build({"out": body["out"]}, depth + 1)
            return key_array(body["impl"], data)
        raise ProtocolError(f"unknown output node {str(tag)[:40]!r}")

    tree = build(skeleton, 0)
    if len(used) != len(outputs):
        raise ProtocolError(
            f"the program has {len(outputs)} outputs, the output structure places {len(used)}"
        )
    return tree
