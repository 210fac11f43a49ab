"""Small helpers for problem validators (``problems/<slug>/validator.py``).

A validator checks the CONVERTED inputs of a case (``Case.inputs`` keyed by argument name: trees of numpy
arrays, one numpy array for ``array`` arguments, Python floats for ``number`` arguments, ints and
tuples of ints for the static ``int`` and ``int_tuple`` ones) against its problem's Constraints section.
Each helper returns a list of violations, each ``"<path>: <reason>"`` where the path names the argument
and the place in it, e.g. ``grads["w"]: 4 dimensions, at most 3 allowed``, so a validator is a few lines of
``errors += helper(...)``, and ``split_violation`` turns a violation back into (path, reason) for the
``InputError`` a custom Run input gets.

Each bounding helper also notes, while ``recording_bounds()`` is active, the bound it checked and the
extreme the value reached (``Bound``): the ``reach`` check of ``judge check`` runs the validator on every
hidden case under a recorder and reports how close the cases come to each stated bound. Outside a recorder
(a custom Run input) nothing is noted.

Trees follow the Run-panel rule (``judge.core.pytree_json``): dicts (string keys, visited sorted like JAX) and
lists are nodes, numpy arrays are leaves.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np

from judge.core.pytree_json import PathKey, path_str

__all__ = [
    "Bound",
    "BoundRecorder",
    "all_zero",
    "check_derived",
    "check_dtype",
    "check_finite",
    "check_has_leaves",
    "check_int",
    "check_int_range",
    "check_int_tuple",
    "check_max_abs",
    "check_max_elements",
    "check_ndim",
    "check_number",
    "check_same_structure",
    "check_size",
    "empty_leaf_not_first",
    "in_dtype",
    "leaves_with_paths",
    "longest_list",
    "nesting_depth",
    "recording_bounds",
    "split_violation",
    "tree_signature",
]


# ------------------------------------------------------------------------------ bounds the cases reach

#: ``upper``/``lower``: a value bound (approached within a factor); ``count``: a small count such as a rank,
#: which the cases must reach exactly.
BoundSide = Literal["upper", "lower", "count_max", "count_min"]


@dataclass
class Bound:
    """One stated bound a validator checked, and the value that came closest to it.

    A bound whose limit depends on the case (``lengths`` at most the row length) keeps the case that came
    closest in proportion: ``limit`` and ``reached`` are that case's."""

    #: What is bounded, e.g. ``step: at most`` or ``grads: magnitude at most``.
    key: str
    side: BoundSide
    limit: float
    #: The value that came closest; None before any value.
    reached: float | None = None
    #: The bound is strict (``gt``/``lt``): the limit itself is never allowed.
    strict: bool = False
    #: The limit was not the same for every value noted.
    varies: bool = False

    @property
    def closeness(self) -> float:
        """How close ``reached`` comes to ``limit``, larger the closer (comparable between bounds of one key
        and one sign of limit); -inf before any value."""
        return -math.inf if self.reached is None else _closeness(self.side, self.limit, self.reached)

    def add(self, limit: float, value: float) -> None:
        if self.reached is not None and limit != self.limit:
            self.varies = True
        if self.reached is None or _closeness(self.side, limit, value) > _closeness(
            self.side, self.limit, self.reached
        ):
            self.limit, self.reached = limit, value


def _closeness(side: BoundSide, limit: float, value: float) -> float:
    """Larger the closer ``value`` is to ``limit``, comparable across limits of one sign."""
    if side in ("lower", "count_min"):
        return _closeness("upper", -limit, -value)
    if limit > 0:
        return value / limit
    if limit < 0:
        return limit / value if value < 0 else 0.0
    return value


@dataclass
class BoundRecorder:
    """The bounds noted while it was active, by key, in the order first noted."""

    bounds: dict[str, Bound] = field(default_factory=dict)

    def note(self, key: str, side: BoundSide, limit: float, value: float, *, strict: bool = False) -> None:
        bound = self.bounds.get(key)
        if bound is None:
            bound = self.bounds[key] = Bound(key, side, float(limit), strict=strict)
        bound.add(float(limit), float(value))


_RECORDER: ContextVar[BoundRecorder | None] = ContextVar("bound_recorder", default=None)


@contextmanager
def recording_bounds() -> Iterator[BoundRecorder]:
    """Note every bound the helpers check, and the extremes reached, until the block ends."""
    recorder = BoundRecorder()
    token = _RECORDER.set(recorder)
    try:
        yield recorder
    finally:
        _RECORDER.reset(token)


def _note(key: str, side: BoundSide, limit: float | None, value: float, *, strict: bool = False) -> None:
    recorder = _RECORDER.get()
    if recorder is not None and limit is not None and math.isfinite(value):
        recorder.note(key, side, limit, value, strict=strict)


def _walk(tree: Any, keys: tuple[PathKey, ...]) -> Iterator[tuple[tuple[PathKey, ...], Any]]:
    if isinstance(tree, dict):
        for key in sorted(tree):
            yield from _walk(tree[key], (*keys, key))
    elif isinstance(tree, list | tuple):
        for i, item in enumerate(tree):
            yield from _walk(item, (*keys, i))
    else:
        yield keys, tree


def leaves_with_paths(tree: Any, root: str) -> list[tuple[str, Any]]:
    """``(path, leaf)`` for every leaf in JAX flatten order, e.g. ``('grads["w"]', array([...]))``."""
    return [(path_str(root, keys), leaf) for keys, leaf in _walk(tree, ())]


def _array(leaf: Any) -> np.ndarray[Any, Any] | None:
    return leaf if isinstance(leaf, np.ndarray) else None


def check_has_leaves(tree: Any, root: str) -> list[str]:
    """The tree holds at least one array leaf (``{}`` and ``[]``-only containers do not)."""
    if any(_array(leaf) is not None for _, leaf in leaves_with_paths(tree, root)):
        return []
    return [f"{root}: the tree has no leaf, at least one is required"]


def check_ndim(tree: Any, root: str, *, max_ndim: int, min_ndim: int = 0) -> list[str]:
    """Every leaf is an array with ``min_ndim`` to ``max_ndim`` dimensions."""
    errors = []
    for path, leaf in leaves_with_paths(tree, root):
        array = _array(leaf)
        if array is not None:
            _note(f"{root}: leaf dimensions at most", "count_max", max_ndim, array.ndim)
            _note(f"{root}: leaf dimensions at least", "count_min", min_ndim, array.ndim)
        if array is None:
            errors.append(f"{path}: expected an array leaf, got {type(leaf).__name__}")
        elif array.ndim > max_ndim:
            errors.append(f"{path}: {array.ndim} dimensions, at most {max_ndim} allowed")
        elif array.ndim < min_ndim:
            errors.append(f"{path}: {array.ndim} dimensions, at least {min_ndim} required")
    return errors


def check_dtype(tree: Any, root: str, dtype: str) -> list[str]:
    """Every array leaf has the case dtype (one dtype per case)."""
    return [
        f"{path}: dtype {leaf.dtype}, the case dtype is {dtype}"
        for path, leaf in leaves_with_paths(tree, root)
        if isinstance(leaf, np.ndarray) and leaf.dtype.name != dtype
    ]


def check_finite(tree: Any, root: str) -> list[str]:
    """Every element of every leaf is finite (no NaN, no infinity)."""
    errors = []
    for path, leaf in leaves_with_paths(tree, root):
        array = _array(leaf)
        if array is None or array.size == 0:
            continue
        finite = np.isfinite(array.astype(np.float64))
        if not finite.all():
            index = tuple(int(i) for i in np.unravel_index(int(np.argmin(finite)), array.shape))
            at = f"[{', '.join(map(str, index))}]" if index else ""
            errors.append(f"{path}{at}: non-finite value {float(array[index])!r}")
    return errors


def in_dtype(limit: float, dtype: Any) -> float:
    """``limit`` as the nearest value of the float ``dtype`` the case's values have (``"float32"``, a numpy
    dtype, ``"bfloat16"``): the bound a stated decimal such as 0.1 means for values of that dtype, since
    ``float32(0.1)`` is 0.10000000149 and would fail ``<= 0.1`` compared in float64. Other dtypes (ints,
    None) leave it as it is."""
    if dtype is None:
        return limit
    if isinstance(dtype, str) and dtype == "bfloat16":
        import ml_dtypes

        dtype = ml_dtypes.bfloat16
    try:
        kind = np.dtype(dtype)
    except TypeError:
        return limit
    if kind.kind != "f" and kind.name != "bfloat16":
        return limit
    return float(np.asarray(limit, dtype=np.float64).astype(kind))


def check_max_abs(tree: Any, root: str, limit: float) -> list[str]:
    """Every element of every leaf has a magnitude of at most ``limit`` (the first offending element),
    compared in the leaf's own dtype (``in_dtype``), so a decimal bound holds for its rounded value."""
    errors = []
    for path, leaf in leaves_with_paths(tree, root):
        array = _array(leaf)
        if array is None or array.size == 0:
            continue
        magnitude = np.abs(array.astype(np.float64))
        _note(f"{root}: magnitude at most", "upper", limit, float(np.nanmax(magnitude)))
        with np.errstate(invalid="ignore"):
            over = ~(magnitude <= max(limit, in_dtype(limit, array.dtype)))
        if over.any():
            index = tuple(int(i) for i in np.unravel_index(int(np.argmax(over)), array.shape))
            at = f"[{', '.join(map(str, index))}]" if index else ""
            errors.append(f"{path}{at}: {float(array[index]):.6g} is larger in magnitude than {limit:g}")
    return errors


def check_max_elements(trees: dict[str, Any], limit: int) -> list[str]:
    """All leaves of all the given trees together hold at most ``limit`` elements."""
    total = sum(
        leaf.size
        for name, tree in trees.items()
        for _, leaf in leaves_with_paths(tree, name)
        if isinstance(leaf, np.ndarray)
    )
    _note(f"{', '.join(trees)}: elements in total at most", "upper", limit, total)
    if total > limit:
        return [f"{', '.join(trees)}: {total} elements in total, at most {limit} allowed"]
    return []


def check_number(
    value: Any,
    name: str,
    *,
    gt: float | None = None,
    ge: float | None = None,
    lt: float | None = None,
    le: float | None = None,
    dtype: Any = None,
) -> list[str]:
    """A ``number`` argument is a finite float within the given bounds. With ``dtype`` (a case dtype such
    as ``"float32"``: a traced number arrives as a float32 scalar, and a generator may write the float32
    value of a decimal), each bound is compared as its nearest value in that dtype (``in_dtype``)."""
    if not isinstance(value, int | float) or isinstance(value, bool):
        return [f"{name}: expected a number, got {type(value).__name__}"]
    gt, ge, lt, le = (None if b is None else in_dtype(b, dtype) for b in (gt, ge, lt, le))
    if not math.isfinite(value):
        return [f"{name}: non-finite value {value!r}"]
    _note(f"{name}: greater than", "lower", gt, value, strict=True)
    _note(f"{name}: at least", "lower", ge, value)
    _note(f"{name}: less than", "upper", lt, value, strict=True)
    _note(f"{name}: at most", "upper", le, value)
    errors = []
    if gt is not None and not value > gt:
        errors.append(f"{name}: {value!r}, must be greater than {gt!r}")
    if ge is not None and not value >= ge:
        errors.append(f"{name}: {value!r}, must be at least {ge!r}")
    if lt is not None and not value < lt:
        errors.append(f"{name}: {value!r}, must be less than {lt!r}")
    if le is not None and not value <= le:
        errors.append(f"{name}: {value!r}, must be at most {le!r}")
    return errors


def check_int(value: Any, name: str, *, ge: int | None = None, le: int | None = None) -> list[str]:
    """A static ``int`` argument is a Python int (not a bool) within the given bounds."""
    if not isinstance(value, int) or isinstance(value, bool):
        return [f"{name}: expected an integer, got {type(value).__name__}"]
    _note(f"{_items(name)}: at least", "lower", ge, value)
    _note(f"{_items(name)}: at most", "upper", le, value)
    errors = []
    if ge is not None and value < ge:
        errors.append(f"{name}: {value}, must be at least {ge}")
    if le is not None and value > le:
        errors.append(f"{name}: {value}, must be at most {le}")
    return errors


def check_size(
    value: int, name: str, what: str, *, ge: int | None = None, le: int | None = None
) -> list[str]:
    """A size read from an argument's shape (a batch size, a length, a feature size) within the bounds:
    ``check_size(q.shape[0], "q", "the batch size B", ge=1, le=8)`` -> ``q: the batch size B is 9, 1 to 8
    allowed``. A size is a small count: the hidden cases must reach each of its bounds exactly (like a rank
    bound), since a mistake at the largest size (a hard-coded length, a loop bound) lives at that size only.
    """
    _note(f"{name}: {what} at least", "count_min", ge, value)
    _note(f"{name}: {what} at most", "count_max", le, value)
    if (ge is None or value >= ge) and (le is None or value <= le):
        return []
    if ge is not None and le is not None:
        allowed = f"{ge} to {le} allowed"
    else:
        allowed = f"at least {ge} required" if ge is not None else f"at most {le} allowed"
    return [f"{name}: {what} is {value}, {allowed}"]


def check_derived(
    value: float,
    name: str,
    what: str,
    *,
    gt: float | None = None,
    ge: float | None = None,
    lt: float | None = None,
    le: float | None = None,
    dtype: Any = None,
) -> list[str]:
    """A quantity the validator derives from the arguments (the largest attention score ``|q.k| / sqrt(d)``,
    the smallest nonzero distance) within the bounds the statement states or implies for it, so the
    ``reach`` check sees how close the hidden cases come: ``check_derived(smallest, "x, y", "the smallest
    nonzero distance", gt=0.0)``. ``name`` names the arguments it comes from (the violation's path).
    With ``dtype`` (the case dtype, when the value is one of the case's elements such as its smallest
    entry), each bound is compared as its nearest value in that dtype (``in_dtype``): a stated ``ge=0.7``
    then accepts ``float32(0.7)``, 0.69999998807."""
    value = float(value)
    gt, ge, lt, le = (None if b is None else in_dtype(b, dtype) for b in (gt, ge, lt, le))
    if not math.isfinite(value):
        return [f"{name}: {what} is {value!r}, a finite value is required"]
    _note(f"{name}: {what} greater than", "lower", gt, value, strict=True)
    _note(f"{name}: {what} at least", "lower", ge, value)
    _note(f"{name}: {what} less than", "upper", lt, value, strict=True)
    _note(f"{name}: {what} at most", "upper", le, value)
    errors = []
    for bad, words, limit in (
        (gt is not None and not value > gt, "must be greater than", gt),
        (ge is not None and not value >= ge, "must be at least", ge),
        (lt is not None and not value < lt, "must be less than", lt),
        (le is not None and not value <= le, "must be at most", le),
    ):
        if bad:
            errors.append(f"{name}: {what} is {value:.6g}, {words} {limit:g}")
    return errors


def check_int_tuple(
    value: Any,
    name: str,
    *,
    min_items: int = 0,
    max_items: int | None = None,
    ge: int | None = None,
    le: int | None = None,
    increasing: bool = False,
) -> list[str]:
    """A static ``int_tuple`` argument: a tuple of ints, ``min_items`` to ``max_items`` long, each within
    the bounds (named by index, ``buckets[2]: 0, must be at least 1``), strictly increasing if asked."""
    if not isinstance(value, tuple):
        return [f"{name}: expected a tuple of integers, got {type(value).__name__}"]
    if min_items:
        _note(f"{name}: items at least", "lower", min_items, len(value))
    _note(f"{name}: items at most", "upper", max_items, len(value))
    errors = []
    if len(value) < min_items:
        errors.append(f"{name}: {len(value)} items, at least {min_items} required")
    if max_items is not None and len(value) > max_items:
        errors.append(f"{name}: {len(value)} items, at most {max_items} allowed")
    for i, item in enumerate(value):
        errors += check_int(item, f"{name}[{i}]", ge=ge, le=le)
    if increasing and not errors:
        for i in range(1, len(value)):
            if value[i] <= value[i - 1]:
                errors.append(
                    f"{name}[{i}]: {value[i]}, must be larger than {name}[{i - 1}] = {value[i - 1]}"
                )
                break
    return errors


def check_int_range(tree: Any, root: str, *, ge: int | None = None, le: int | None = None) -> list[str]:
    """Every element of every integer leaf is within the bounds (the first offending element, by index)."""
    errors = []
    for path, leaf in leaves_with_paths(tree, root):
        array = _array(leaf)
        if array is None or array.size == 0 or array.dtype.kind not in "iu":
            continue
        wide = array.astype(np.int64)
        _note(f"{root}: at least", "lower", ge, int(wide.min()))
        _note(f"{root}: at most", "upper", le, int(wide.max()))
        bad = np.zeros(wide.shape, dtype=bool)
        if ge is not None:
            bad |= wide < ge
        if le is not None:
            bad |= wide > le
        if bad.any():
            index = tuple(int(i) for i in np.unravel_index(int(np.argmax(bad)), array.shape))
            at = f"[{', '.join(map(str, index))}]" if index else ""
            bounds = " and ".join(
                part
                for part in (
                    f"at least {ge}" if ge is not None else "",
                    f"at most {le}" if le is not None else "",
                )
                if part
            )
            errors.append(f"{path}{at}: {int(wide[index])}, must be {bounds}")
    return errors


def _items(name: str) -> str:
    """``buckets[2]`` -> ``buckets[*]``: the items of a tuple share their bounds."""
    return name[: name.index("[")] + "[*]" if name.endswith("]") and "[" in name else name


def _describe(node: Any) -> str:
    if isinstance(node, dict):
        return f"a dict with keys {sorted(node)}"
    if isinstance(node, list | tuple):
        return f"a list of {len(node)}"
    if isinstance(node, np.ndarray):
        return f"an array of shape {node.shape}"
    return type(node).__name__


def check_same_structure(
    first: Any, first_name: str, other: Any, other_name: str, *, shapes: bool = True
) -> list[str]:
    """``other`` has exactly the tree structure of ``first`` (and, with ``shapes``, equal leaf shapes)."""
    errors: list[str] = []
    _same(first, other, first_name, other_name, (), shapes, errors)
    return errors


def _same(
    a: Any, b: Any, a_name: str, b_name: str, keys: tuple[PathKey, ...], shapes: bool, errors: list[str]
) -> None:
    here = path_str(b_name, keys)
    there = path_str(a_name, keys)
    if isinstance(a, dict) and isinstance(b, dict):
        if set(a) != set(b):
            missing, extra = sorted(set(a) - set(b)), sorted(set(b) - set(a))
            detail = "; ".join(
                part
                for part in (
                    f"missing keys {missing}" if missing else "",
                    f"extra keys {extra}" if extra else "",
                )
                if part
            )
            errors.append(f"{here}: keys differ from {there} ({detail})")
            return
        for key in sorted(a):
            _same(a[key], b[key], a_name, b_name, (*keys, key), shapes, errors)
        return
    if isinstance(a, list) and isinstance(b, list):
        if len(a) != len(b):
            errors.append(f"{here}: a list of {len(b)}, {there} is a list of {len(a)}")
            return
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            _same(x, y, a_name, b_name, (*keys, i), shapes, errors)
        return
    if isinstance(a, np.ndarray) and isinstance(b, np.ndarray):
        if shapes and a.shape != b.shape:
            errors.append(f"{here}: shape {b.shape}, {there} has shape {a.shape}")
        return
    errors.append(f"{here}: {_describe(b)}, {there} is {_describe(a)}")


# ------------------------------------------------------------------------------------- tree shape facts


def empty_leaf_not_first(tree: Any) -> bool:
    """Whether some leaf of the tree is empty (a 0 in its shape) and is not its first leaf in JAX flatten
    order: what a statement's "a leaf may be empty" promises, where code that only handles an empty leaf
    at the front (or flattens and splits by offsets) goes wrong. For ``[[promises]]`` predicates."""
    leaves = [leaf for _, leaf in leaves_with_paths(tree, "") if isinstance(leaf, np.ndarray)]
    return any(leaf.size == 0 for leaf in leaves[1:])


def all_zero(tree: Any) -> bool:
    """Whether every element of every leaf is zero (and there is at least one element)."""
    leaves = [leaf for _, leaf in leaves_with_paths(tree, "") if isinstance(leaf, np.ndarray)]
    return any(leaf.size for leaf in leaves) and all(not np.any(leaf) for leaf in leaves)


def tree_signature(tree: Any) -> tuple[Any, ...]:
    """What a traced function can see of a converted tree: its containers (dict keys, list lengths) and
    each leaf's shape and dtype, never a value. Two trees with equal signatures trace identically."""
    if isinstance(tree, dict):
        return ("dict", tuple((key, tree_signature(tree[key])) for key in sorted(tree)))
    if isinstance(tree, list | tuple):
        return ("list", tuple(tree_signature(item) for item in tree))
    if isinstance(tree, np.ndarray):
        return ("leaf", tree.shape, tree.dtype.name)
    return ("value", type(tree).__name__)


def longest_list(tree: Any) -> int:
    """The most items of any list node in the tree (0 when it has none)."""
    if isinstance(tree, dict):
        return max((longest_list(v) for v in tree.values()), default=0)
    if isinstance(tree, list | tuple):
        return max([len(tree), *(longest_list(v) for v in tree)])
    return 0


def nesting_depth(tree: Any) -> int:
    """Containers (dicts and lists) on the longest path from the root to a leaf: 0 for a bare array,
    1 for ``{"w": array}``; an empty container counts as one level."""
    if isinstance(tree, dict | list | tuple):
        children = tree.values() if isinstance(tree, dict) else tree
        return 1 + max((nesting_depth(v) for v in children), default=0)
    return 0


def split_violation(text: str) -> tuple[str, str]:
    """``'grads["a: b"][0]: too big'`` -> ``('grads["a: b"][0]', 'too big')``: the first ``": "`` outside
    brackets and quotes ends the path. Text without one is all reason, with the path ``"args"``."""
    depth = 0
    quoted = escaped = False
    for i, char in enumerate(text):
        if quoted:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                quoted = False
        elif char == '"':
            quoted = True
        elif char == "[":
            depth += 1
        elif char == "]":
            depth = max(0, depth - 1)
        elif char == ":" and depth == 0 and text[i + 1 : i + 2] == " ":
            return text[:i], text[i + 2 :]
    return "args", text
