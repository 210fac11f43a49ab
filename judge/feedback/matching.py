"""Which known mistake a learner's output looks like: a pure choice among the shipped wrong solutions.

A candidate is one wrong solution's output on one case (computed on the trusted side,
``judge.feedback.mistakes``) with the number of leaves where that output differs from the reference's. The
learner's output matches a candidate when the problem's own comparison accepts it against the candidate's
output (within tolerance on every leaf). Candidates whose output is the reference's (``differing_leaves ==
0``) name nothing: a learner who matches them is right. Of several matches the most specific wins (the fewest
differing leaves, then the name), and the result counts the others.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from judge.feedback.notes import MistakeNote


@dataclass(frozen=True)
class Candidate:
    """A known mistake's output on one case."""

    mistake: MistakeNote
    #: The wrong solution's result as the learner's program returns it (with its gradient on a problem
    #: that checks one); opaque here, read only by the ``same`` function the caller gives.
    output: Any
    #: Leaves of this output that differ from the reference's (the whole tree's count on a structure
    #: mismatch); 0: this mistake gives the right answer on this case.
    differing_leaves: int


@dataclass(frozen=True)
class Match:
    """The known mistake chosen for an output, and how many other known mistakes it matches as well."""

    mistake: MistakeNote
    others: int


def best_match(candidates: Iterable[Candidate], got: Any, same: Callable[[Any, Any], bool]) -> Match | None:
    """The most specific known mistake whose output ``got`` matches (``same(candidate_output, got)``), or
    None. ``same`` raising counts as no match: a comparison the judge cannot make names nothing."""
    matched: list[Candidate] = []
    for candidate in candidates:
        if candidate.differing_leaves <= 0:
            continue
        try:
            if same(candidate.output, got):
                matched.append(candidate)
        except Exception:  # a candidate whose output cannot be compared with this one names nothing
            continue
    if not matched:
        return None
    best = min(matched, key=lambda c: (c.differing_leaves, c.mistake.name))
    return Match(best.mistake, len(matched) - 1)


def leaves(tree: Any) -> list[tuple[tuple[Any, ...], Any]] | None:
    """(path, leaf) of a host tree (dicts by sorted key, lists and tuples by position, arrays and numbers as
    leaves); None for a node of another kind."""
    out: list[tuple[tuple[Any, ...], Any]] = []

    def walk(node: Any, at: tuple[Any, ...]) -> bool:
        if isinstance(node, dict):
            return all(walk(node[k], (*at, ("d", str(k)))) for k in sorted(node, key=str))
        if isinstance(node, list | tuple):
            kind = "t" if isinstance(node, tuple) else "l"
            return all(walk(child, (*at, (kind, i))) for i, child in enumerate(node))
        if isinstance(node, np.ndarray | np.generic | float | int):
            out.append((at, node))
            return True
        return False

    return out if walk(tree, ()) else None


def differing_leaves(reference: Any, output: Any, same: Callable[[Any, Any], bool]) -> int:
    """How many leaves of ``output`` differ from ``reference``'s (``same(ref_leaf, leaf)`` false, or a leaf
    the other tree lacks); on trees of other structures, every leaf of the larger one."""
    ours, theirs = leaves(reference), leaves(output)
    if ours is None or theirs is None:
        return max(len(ours or ()), len(theirs or ()), 1)
    if [p for p, _ in ours] != [p for p, _ in theirs]:
        return max(len(ours), len(theirs), 1)
    return sum(not _same_leaf(same, a, b) for (_, a), (_, b) in zip(ours, theirs, strict=True))


def _same_leaf(same: Callable[[Any, Any], bool], a: Any, b: Any) -> bool:
    try:
        return same(a, b)
    except Exception:
        return False


def indistinguishable_pairs(
    names: Sequence[str], outputs: Sequence[Sequence[Any]], same: Callable[[Any, Any], bool]
) -> list[tuple[str, str]]:
    """Pairs of mistakes whose outputs agree on every case given (``outputs[m][c]``: mistake ``m``'s output
    on case ``c``, None where it failed, which agrees with nothing)."""
    pairs: list[tuple[str, str]] = []
    for i in range(len(names)):
        for j in range(i + 1, len(names)):
            if all(
                a is not None and b is not None and _same_leaf(same, a, b)
                for a, b in zip(outputs[i], outputs[j], strict=True)
            ):
                pairs.append((names[i], names[j]))
    return pairs
