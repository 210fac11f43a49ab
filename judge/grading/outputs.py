"""Reading a program's result: its output tree from the executor's leaves, or the outcome that it failed;
and counting the leaves of a decoded tree (for the loop check's per-leaf flags)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from judge.core.output_tree import assemble
from judge.core.verdicts import Verdict, WrongAnswerReason
from judge.grading.outcome import Outcome
from sandbox.session.reports import CaseReport, ProgramReport
from sandbox.shared.tree import BadLeaf, OtherNode
from sandbox.shared.wire import ProtocolError


def read_output(
    program: ProgramReport, run: CaseReport, *, hidden: bool, memory_mb: int, max_output_bytes: int
) -> Any:
    """The host output tree of a run, or the outcome that it failed."""
    if run.error is not None:
        if run.error.kind == "memory":
            return Outcome(
                Verdict.MEMORY_LIMIT_EXCEEDED,
                f"used more than the {memory_mb} MiB memory limit",
            )
        detail = "" if hidden else f": {run.error.message}"
        return Outcome(Verdict.RUNTIME_ERROR, f"the compiled program failed while running{detail}")
    try:
        got = assemble(program.skeleton, run.outputs or [], max_output_bytes)
    except ProtocolError as exc:
        return Outcome(Verdict.RUNTIME_ERROR, f"the output could not be read: {exc}")
    bad = bad_leaf(got)
    if bad is not None:
        return Outcome(
            Verdict.WRONG_ANSWER,
            f"the function returned a {bad} where every leaf must be a JAX array",
            WrongAnswerReason.TYPE,
        )
    return got


def leaf_count(tree: Any) -> int:
    """The array leaves of a decoded tree (an expected output), in flatten order as the program's outputs."""
    if isinstance(tree, dict):
        return sum(leaf_count(v) for v in tree.values())
    if isinstance(tree, list | tuple):
        return sum(leaf_count(v) for v in tree)
    if isinstance(tree, OtherNode):
        return sum(leaf_count(v) for v in tree.children)
    return 0 if tree is None else 1


def leaf_sizes(tree: Any) -> list[int]:
    """The element count of each array leaf of a decoded tree, in the order of ``leaf_count``."""
    if isinstance(tree, dict):
        return [n for v in tree.values() for n in leaf_sizes(v)]
    if isinstance(tree, list | tuple):
        return [n for v in tree for n in leaf_sizes(v)]
    if isinstance(tree, OtherNode):
        return [n for v in tree.children for n in leaf_sizes(v)]
    return [] if tree is None else [int(np.size(tree))]


def empty_leaves_matter(loops_matter: Sequence[bool] | None, sizes: Sequence[int]) -> list[bool] | None:
    """The loop check's verdict per output leaf, every leaf counted as mattering when the whole output is
    empty: an empty output has no bit a perturbed loop could change (a loop over an empty array), so it
    cannot show that the loop is idle. With one non-empty leaf, the non-empty leaves decide."""
    if loops_matter is None:
        return None
    if all(size == 0 for size in sizes):
        return [True] * len(loops_matter)
    return list(loops_matter)


def bad_leaf(tree: Any) -> str | None:
    stack = [tree]
    while stack:
        node = stack.pop()
        if isinstance(node, BadLeaf):
            return node.type_name
        if isinstance(node, dict):
            stack.extend(node.values())
        elif isinstance(node, list | tuple):
            stack.extend(node)
        elif isinstance(node, OtherNode):
            stack.extend(node.children)
    return None
