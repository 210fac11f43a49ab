"""The checker: compare a user's decoded output tree with the reference's, leaf path by leaf path.

A pure function of ``(expected, got, tolerance)`` that returns a frozen ``CompareResult``; ``bind`` fixes a
problem's parameters once and gives back a ``Checker`` (DMOJ's checkers work the same way). It runs on the
judge's trusted side on decoded trees (see ``sandbox.shared.tree``), so it uses numpy and ml_dtypes, never
jax.

Order, stopping at the first failure (docs/architecture.md, "Comparison"):

1. structure: dict keys, list and tuple lengths, tuple vs list, ``None``, ``OtherNode`` type names;
2. per leaf, in flatten order: leaf type (an array), shape, dtype;
3. values, with the tolerance of the EXPECTED leaf's dtype (``judge.core.spec.Tolerance``): an element passes
   iff ``|got - exp| <= max(atol + rtol * |exp|, ulps * ulp(exp), floor_ulps * ulp(m))`` in float64, where
   ``m`` is the largest finite ``|exp|`` over the leaves of that dtype in the same top-level entry of the
   output and ``ulp`` the spacing of the dtype there; NaN only matches NaN at the same place and an
   infinity only the same infinity. Integer and bool leaves compare exactly. With a ``scale`` tree (the
   problem's magnitude function, ``judge.core.spec.CompareSpec.magnitude``: per element the sum of the
   absolute values of the terms that make it), ``rtol`` applies to ``max(|exp|, scale)`` instead of ``|exp|``:
   an element that cancels keeps the bound of the terms it cancelled, which any order of the additions meets.
   The first failing leaf (dict keys sorted, as in JAX) is reported, but every leaf is measured for
   ``max_error_ratio``.

Typed PRNG key leaves (``sandbox.shared.tree.KeyArray``) compare as keys: a key where a key is expected (not
its raw uint32 data), the same implementation and key-array shape, then every key's data exactly; messages
speak of keys (``new_key: got the key with data [0, 42], expected [2718, 3141]; 1 of 1 keys differ``).

Paths: the root is ``output``; a top-level dict's identifier keys are bare (``clipped["dense"]["w"]``,
``global_norm``); a top-level tuple's elements take ``root_names`` (``new_params["w"]``); element indexes
use numpy form (``[1, 0]``).

The result always words the comparison for someone who may see the values (public and custom cases, a
problem's author). A hidden case's comparison is worded only by ``judge.core.hidden.hidden_message``, which
keeps the leaf and the kind of mismatch and replaces every value, index, count and exact ratio by a coarse
bucket.

A malformed EXPECTED tree (an unknown node, a complex or string leaf, a float dtype without a tolerance) is
the judge's fault: ``compare`` raises ``TypeError`` or ``KeyError`` for the harness to report as
``internal_error``. Nothing in ``got`` makes it raise.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, TypeAlias

import ml_dtypes
import numpy as np

from judge.core.spec import CompareSpec, OutputSpec, Tolerance
from judge.core.verdicts import WrongAnswerReason
from sandbox.shared.tree import KeyArray, NonStrKey, OtherNode

__all__ = [
    "ROOT",
    "Checker",
    "CompareResult",
    "LeafError",
    "PathEntry",
    "Tree",
    "bind",
    "compare",
    "element_bounds",
    "format_path",
    "scale_leaves",
    "ulp",
]

#: A decoded tree: nested dict / list / tuple / None / OtherNode with ``numpy.ndarray`` leaves.
Tree: TypeAlias = Any
#: One step of a leaf path: a dict key (``str`` or ``NonStrKey``) or a list/tuple/OtherNode index.
PathEntry: TypeAlias = str | NonStrKey | int

#: Name of the whole output in paths.
ROOT = "output"

_MAX_LISTED_KEYS = 5
_MAX_NAME_CHARS = 40
# A failing element's ratio is at least this, so that ``ok`` iff ``max_error_ratio <= 1`` even when
# ``err / bound`` rounds down to 1.0.
_JUST_OVER_ONE = float(np.nextafter(1.0, 2.0))
# ml_dtypes ships no type hints; these raise ValueError for a dtype of the other kind.
_ml_finfo: Callable[[np.dtype[Any]], object] = ml_dtypes.finfo
_ml_iinfo: Callable[[np.dtype[Any]], object] = ml_dtypes.iinfo


@dataclass(frozen=True)
class LeafError:
    """One element and how far it is from the expected value.

    ``got`` and ``expected`` are Python floats (ints or bools for integer and bool leaves; for a key leaf,
    0 and 1 with the keys' data in ``key_data``). ``tol`` is the
    element's bound (see the module docstring; 0 for exact leaves) and ``ratio`` is ``abs_err / tol``
    (``inf`` for a NaN or infinity mismatch or a differing exact element; 0 when equal). ``ulp`` is the
    spacing of the leaf's dtype at ``expected`` when the tolerance counts in ulps, else 0.
    """

    path: str
    index: tuple[int, ...]
    got: float
    expected: float
    abs_err: float
    tol: float
    ratio: float
    ulp: float = 0.0
    #: A key leaf's element (one key): its data as (got, expected) words; None for an array leaf.
    key_data: tuple[tuple[int, ...], tuple[int, ...]] | None = None


@dataclass(frozen=True)
class CompareResult:
    """The outcome of one comparison.

    ``max_error_ratio`` is the largest ``|got - exp| / bound`` (``bound``: the element's tolerance) over
    every compared element (0.0 if there were none; ``inf`` on a NaN/infinity or exact mismatch, or when
    the check stopped before the values). ``ok`` iff ``max_error_ratio <= 1``. ``worst`` is the element
    with that ratio, and ``None`` when there was none or when the check stopped before the values.
    """

    ok: bool
    reason: WrongAnswerReason | None
    path: str | None
    message: str
    max_error_ratio: float
    worst: LeafError | None = None


def format_path(entries: Sequence[PathEntry], root_names: Sequence[str] = ()) -> str:
    """Format a leaf path: ``output``, ``output[0]``, ``new_params["w"]``, ``clipped["dense"]["w"]``."""
    if not entries:
        return ROOT
    head, *rest = entries
    if isinstance(head, int) and 0 <= head < len(root_names):
        root = root_names[head]
    elif isinstance(head, str) and head.isidentifier():
        root = head
    else:
        root = ROOT + _entry_text(head)
    return root + "".join(_entry_text(entry) for entry in rest)


def compare(
    expected: Tree,
    got: Tree,
    *,
    tolerance: Mapping[str, Tolerance],
    root_names: Sequence[str] = (),
    tuple_as_list: bool = False,
    scale: Tree = None,
) -> CompareResult:
    """Compare ``got`` with ``expected``: structure, then leaf type/shape/dtype, then values. ``scale``: the
    magnitude tree of the expected output (``scale_leaves``), or None."""
    for leaf in _expected_leaves(expected, ()):
        _check_expected_dtype(leaf.dtype, tolerance)
    pairs: list[_Pair] = []
    mismatch = _match(expected, got, (), tuple_as_list, pairs)
    pairs = _with_scales(pairs, scale)
    if mismatch is None:
        mismatch = _first_leaf_mismatch(pairs)
    if mismatch is not None:
        path = format_path(mismatch.at, root_names)
        return CompareResult(False, mismatch.reason, path, f"{path}: {mismatch.detail}", math.inf)
    return _compare_values(pairs, tolerance, root_names)


def accepts(
    expected: Tree,
    got: Tree,
    *,
    tolerance: Mapping[str, Tolerance],
    tuple_as_list: bool = False,
    scale: Tree = None,
) -> bool:
    """Whether ``compare(expected, got, ...)`` is ok: the same steps and bounds, no message, and it stops at
    the first leaf that fails."""
    for leaf in _expected_leaves(expected, ()):
        _check_expected_dtype(leaf.dtype, tolerance)
    pairs: list[_Pair] = []
    if _match(expected, got, (), tuple_as_list, pairs) is not None or _first_leaf_mismatch(pairs) is not None:
        return False
    pairs = _with_scales(pairs, scale)
    magnitudes = _magnitudes(pairs)
    return not any(_leaf_fails(pair, tolerance, magnitudes[_group(pair)]) for pair in pairs)


@dataclass(frozen=True)
class Checker:
    """A checker with a problem's parameters bound (see ``bind``)."""

    tolerance: Mapping[str, Tolerance]
    root_names: tuple[str, ...] = ()
    tuple_as_list: bool = False

    def __call__(self, expected: Tree, got: Tree, scale: Tree = None) -> CompareResult:
        return compare(
            expected,
            got,
            tolerance=self.tolerance,
            root_names=self.root_names,
            tuple_as_list=self.tuple_as_list,
            scale=scale,
        )

    def accepts(self, expected: Tree, got: Tree, scale: Tree = None) -> bool:
        """``self(expected, got).ok``, without building a message: stops at the first failing leaf. For
        callers that only need the answer many times over (matching an output against known mistakes)."""
        return accepts(expected, got, tolerance=self.tolerance, tuple_as_list=self.tuple_as_list, scale=scale)


def bind(spec: CompareSpec, output: OutputSpec) -> Checker:
    """Bind a problem's compare settings and output names once; call the result per case."""
    names = tuple(output.names) if output.kind == "tuple" else ()
    return Checker(tolerance=dict(spec.tolerance), root_names=names, tuple_as_list=spec.tuple_as_list)


# --- paths and descriptions ---------------------------------------------------------------------------


def _clip(text: str) -> str:
    return text if len(text) <= _MAX_NAME_CHARS else text[: _MAX_NAME_CHARS - 3] + "..."


def _key_text(key: object) -> str:
    if isinstance(key, str):
        return json.dumps(_clip(key), ensure_ascii=False)
    if isinstance(key, NonStrKey):
        return _clip(key.text)
    return _clip(repr(key))


def _entry_text(entry: PathEntry) -> str:
    return f"[{entry}]" if isinstance(entry, int) else f"[{_key_text(entry)}]"


def _key_order(key: object) -> tuple[int, str, str | int]:
    """Sort dict keys like JAX: strings first, in order; then other keys by type, ints numerically."""
    if isinstance(key, str):
        return (0, "", key)
    if isinstance(key, NonStrKey):
        if key.type_name == "int":
            try:
                return (1, key.type_name, int(key.text))
            except ValueError:
                pass
        return (1, key.type_name, key.text)
    return (2, type(key).__name__, repr(key))


def _listed_keys(keys: Sequence[object]) -> str:
    shown = ", ".join(_key_text(k) for k in keys[:_MAX_LISTED_KEYS])
    more = len(keys) - _MAX_LISTED_KEYS
    return shown + (f" and {more} more" if more > 0 else "")


def _node_name(node: OtherNode) -> str:
    name = _clip(node.type_name)
    return f"{'an' if name[:1].lower() in 'aeiou' else 'a'} {name} node"


def _describe_sequence(node: list[Any] | tuple[Any, ...]) -> str:
    kind = "list" if isinstance(node, list) else "tuple"
    return f"a {kind} of {len(node)}" if node else f"an empty {kind}"


def _describe(node: object) -> str:
    """How a node of ``got`` reads in a message (its shape only, never its contents)."""
    if node is None:
        return "None"
    if isinstance(node, KeyArray):
        return _key_words(node)
    if isinstance(node, np.ndarray):
        return f"an array of shape {node.shape}"
    if isinstance(node, dict):
        keys = sorted(node, key=_key_order)
        return f"a dict with keys [{_listed_keys(keys)}]" if keys else "an empty dict"
    if isinstance(node, list | tuple):
        return _describe_sequence(node)
    if isinstance(node, OtherNode):
        return _node_name(node)
    if isinstance(node, np.generic):
        return f"a numpy {node.dtype} scalar"
    return f"a value of type {_clip(type(node).__name__)}"


def _key_words(node: KeyArray) -> str:
    """``one PRNG key`` or ``a PRNG key array of shape (3,)``."""
    return "one PRNG key" if not node.shape else f"a PRNG key array of shape {node.shape}"


def _describe_expected(node: object) -> str:
    if isinstance(node, KeyArray):
        return _key_words(node)
    if isinstance(node, np.ndarray):
        return "an array"
    if isinstance(node, dict):
        return "a dict"
    return _describe(node)


# --- the expected tree --------------------------------------------------------------------------------


def _expected_leaves(node: Tree, at: tuple[PathEntry, ...]) -> Iterator[np.ndarray]:
    if isinstance(node, np.ndarray):
        yield node
    elif isinstance(node, dict):
        for key, child in node.items():
            yield from _expected_leaves(child, (*at, key))
    elif isinstance(node, list | tuple):
        for i, child in enumerate(node):
            yield from _expected_leaves(child, (*at, i))
    elif isinstance(node, OtherNode):
        for i, child in enumerate(node.children):
            yield from _expected_leaves(child, (*at, i))
    elif node is not None and not isinstance(node, KeyArray):  # a key leaf has no dtype to check
        raise TypeError(f"expected tree: unsupported node {type(node).__name__} at {format_path(at)}")


def _is_float(dtype: np.dtype[Any]) -> bool:
    if dtype.kind == "f":
        return True
    if dtype.kind != "V":
        return False
    try:
        _ml_finfo(dtype)
    except ValueError:
        return False
    return True


def _is_exact(dtype: np.dtype[Any]) -> bool:
    if dtype.kind in "biu":
        return True
    if dtype.kind != "V":
        return False
    try:
        _ml_iinfo(dtype)
    except ValueError:
        return False
    return True


def _check_expected_dtype(dtype: np.dtype[Any], tolerance: Mapping[str, Tolerance]) -> None:
    if _is_float(dtype):
        if dtype.name not in tolerance:
            raise KeyError(f"no tolerance for expected dtype {dtype.name!r} (have {sorted(tolerance)})")
    elif not _is_exact(dtype):
        raise TypeError(f"expected tree: unsupported leaf dtype {dtype.name!r}")


# --- steps 1 and 2: structure, then leaf type/shape/dtype ----------------------------------------------


@dataclass(frozen=True)
class _Pair:
    at: tuple[PathEntry, ...]
    expected: np.ndarray | KeyArray
    got: object
    #: Per element, the magnitude of the terms that make the expected value (``scale_leaves``), or None.
    scale: np.ndarray | None = None


def scale_leaves(scale: Tree) -> dict[tuple[PathEntry, ...], np.ndarray]:
    """The float array leaves of a magnitude tree by leaf path (the paths ``compare`` gives the expected
    tree's leaves); anything else in it is left out, so a leaf without a magnitude keeps its plain bound."""
    out: dict[tuple[PathEntry, ...], np.ndarray] = {}

    def walk(node: Tree, at: tuple[PathEntry, ...]) -> None:
        if isinstance(node, np.ndarray):
            if _is_float(node.dtype):
                out[at] = node
        elif isinstance(node, dict):
            for key, child in node.items():
                walk(child, (*at, key))
        elif isinstance(node, list | tuple):
            for i, child in enumerate(node):
                walk(child, (*at, i))
        elif isinstance(node, OtherNode):
            for i, child in enumerate(node.children):
                walk(child, (*at, i))

    walk(scale, ())
    return out


def _with_scales(pairs: list[_Pair], scale: Tree) -> list[_Pair]:
    """The pairs with each float leaf's magnitude from ``scale`` where it has one of the leaf's shape."""
    if scale is None:
        return pairs
    leaves = scale_leaves(scale)
    out = []
    for pair in pairs:
        found = leaves.get(pair.at)
        exp = pair.expected
        if found is not None and isinstance(exp, np.ndarray) and found.shape == exp.shape:
            pair = replace(pair, scale=np.abs(found.astype(np.float64)))
        out.append(pair)
    return out


@dataclass(frozen=True)
class _Mismatch:
    reason: WrongAnswerReason
    at: tuple[PathEntry, ...]
    detail: str


def _structure(at: tuple[PathEntry, ...], expected: object, got: object) -> _Mismatch:
    detail = f"expected {_describe_expected(expected)}, got {_describe(got)}"
    return _Mismatch(WrongAnswerReason.STRUCTURE, at, detail)


def _match(
    exp: Tree, got: Tree, at: tuple[PathEntry, ...], tuple_as_list: bool, pairs: list[_Pair]
) -> _Mismatch | None:
    """Walk both trees in flatten order, collect leaf pairs, and return the first structure mismatch."""
    if isinstance(exp, np.ndarray | KeyArray):
        if got is None or isinstance(got, dict | list | tuple | OtherNode):
            return _structure(at, exp, got)
        pairs.append(_Pair(at, exp, got))
        return None
    if exp is None:
        return None if got is None else _structure(at, exp, got)
    if isinstance(exp, dict):
        return _match_dict(exp, got, at, tuple_as_list, pairs)
    if isinstance(exp, list | tuple):
        kinds_ok = isinstance(got, list | tuple) if tuple_as_list else type(got) is type(exp)
        if not kinds_ok or len(got) != len(exp):
            return _structure(at, exp, got)
        return _match_children(exp, got, at, tuple_as_list, pairs)
    assert isinstance(exp, OtherNode)  # _expected_leaves rejected anything else
    if not isinstance(got, OtherNode) or got.type_name != exp.type_name:
        return _structure(at, exp, got)
    if len(got.children) != len(exp.children):
        detail = f"expected {_node_name(exp)} with {len(exp.children)} children, got {len(got.children)}"
        return _Mismatch(WrongAnswerReason.STRUCTURE, at, detail)
    return _match_children(exp.children, got.children, at, tuple_as_list, pairs)


def _match_dict(
    exp: dict[Any, Any], got: Tree, at: tuple[PathEntry, ...], tuple_as_list: bool, pairs: list[_Pair]
) -> _Mismatch | None:
    if not isinstance(got, dict):
        return _structure(at, exp, got)
    missing = sorted(exp.keys() - got.keys(), key=_key_order)
    extra = sorted(got.keys() - exp.keys(), key=_key_order)
    if missing or extra:
        parts = [
            f"{what} key{'s' if len(keys) > 1 else ''} {_listed_keys(keys)}"
            for what, keys in (("missing", missing), ("unexpected", extra))
            if keys
        ]
        return _Mismatch(WrongAnswerReason.STRUCTURE, at, "; ".join(parts))
    for key in sorted(exp, key=_key_order):
        mismatch = _match(exp[key], got[key], (*at, key), tuple_as_list, pairs)
        if mismatch is not None:
            return mismatch
    return None


def _match_children(
    exp: Sequence[Any], got: Sequence[Any], at: tuple[PathEntry, ...], tuple_as_list: bool, pairs: list[_Pair]
) -> _Mismatch | None:
    for i, (exp_child, got_child) in enumerate(zip(exp, got, strict=True)):
        mismatch = _match(exp_child, got_child, (*at, i), tuple_as_list, pairs)
        if mismatch is not None:
            return mismatch
    return None


def _key_mismatch(at: tuple[PathEntry, ...], exp: KeyArray, got: object) -> _Mismatch | None:
    """Step 2 for a key leaf: a key array (not its raw data) of the same implementation and shape."""
    if not isinstance(got, KeyArray):
        detail = f"expected {_key_words(exp)} (a typed key, {exp.impl}), got {_describe(got)}"
        if isinstance(got, np.ndarray):
            detail += f" of {got.dtype}"
            if got.dtype == np.uint32 and got.shape == exp.data.shape:
                detail += (
                    ", which looks like raw key data: return typed keys as jax.random.split, fold_in and "
                    "key make them, not jax.random.key_data(...) or legacy jax.random.PRNGKey keys"
                )
        return _Mismatch(WrongAnswerReason.TYPE, at, detail)
    if got.impl != exp.impl:
        return _Mismatch(WrongAnswerReason.DTYPE, at, f"a {got.impl} key, expected a {exp.impl} key")
    if got.shape != exp.shape:
        return _Mismatch(WrongAnswerReason.SHAPE, at, f"{_key_words(got)}, expected {_key_words(exp)}")
    return None


def _leaf_mismatch(pair: _Pair) -> _Mismatch | None:
    exp, got = pair.expected, pair.got
    if isinstance(exp, KeyArray):
        return _key_mismatch(pair.at, exp, got)
    if isinstance(got, KeyArray):
        detail = f"expected a {exp.dtype} array, got {_key_words(got)} (a typed key, not an array of numbers)"
        return _Mismatch(WrongAnswerReason.TYPE, pair.at, detail)
    if not isinstance(got, np.ndarray):
        return _Mismatch(WrongAnswerReason.TYPE, pair.at, f"expected an array, got {_describe(got)}")
    if got.shape != exp.shape:
        return _Mismatch(WrongAnswerReason.SHAPE, pair.at, f"shape {got.shape}, expected {exp.shape}")
    if got.dtype != exp.dtype:
        return _Mismatch(WrongAnswerReason.DTYPE, pair.at, f"dtype {got.dtype}, expected {exp.dtype}")
    return None


def _first_leaf_mismatch(pairs: Sequence[_Pair]) -> _Mismatch | None:
    for pair in pairs:
        mismatch = _leaf_mismatch(pair)
        if mismatch is not None:
            return mismatch
    return None


# --- step 3: values -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class _LeafCheck:
    """The values of one leaf: how many elements fail and the worst element (``None`` if empty)."""

    failing: int
    size: int
    worst: LeafError | None


def ulp(values: np.ndarray, dtype: np.dtype[Any]) -> np.ndarray:
    """The spacing of float ``dtype`` at each ``|value|`` (float64): ``2**floor(log2 |v|) * eps``, and the
    smallest subnormal below the normal range (0 included). Non-finite values give NaN."""
    info: Any = _ml_finfo(dtype)
    eps, tiny = float(info.eps), float(info.smallest_normal)
    magnitude = np.abs(np.asarray(values, np.float64))
    finite = np.isfinite(magnitude)
    exponent = np.floor(np.log2(np.maximum(np.where(finite, magnitude, tiny), tiny))).astype(np.int64)
    return np.where(finite, np.ldexp(eps, exponent), np.nan)


def _bounds(
    exp: np.ndarray, tol: Tolerance, magnitude: float, scale: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """Per element: (bound on |got - exp|, ulp of exp or 0), in float64; ``magnitude`` is the ``m`` of the
    floor, ``scale`` the element's terms' magnitude (see the module docstring)."""
    return element_bounds(exp, exp.dtype, tol, magnitude, scale)


def element_bounds(
    values: np.ndarray,
    dtype: np.dtype[Any],
    tol: Tolerance,
    magnitude: float,
    scale: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Per element of ``values`` (any float dtype, e.g. a float64 oracle of a float32 result): (the bound
    ``tol`` puts on an element of ``dtype`` expected to equal it, the ulp of ``dtype`` there or 0).
    ``scale``: per element, the sum of the absolute values of the terms that make it (the problem's
    magnitude function), or None; ``rtol`` then applies to ``max(|value|, scale)``, so an element whose
    terms cancel is allowed the rounding error of the terms themselves, in whatever order they are added.
    Pure: a per-backend factor can be applied to the bound this returns."""
    e = np.abs(np.asarray(values).astype(np.float64))
    relative = e if scale is None else np.maximum(e, np.nan_to_num(np.abs(scale), nan=0.0, posinf=0.0))
    bound = tol.atol + tol.rtol * relative
    if not tol.uses_ulps:
        return bound, np.zeros_like(e)
    spacing = ulp(e, dtype)
    floor = float(ulp(np.asarray(magnitude), dtype))
    return np.maximum(np.maximum(bound, tol.ulps * spacing), tol.floor_ulps * floor), spacing


def _largest_finite(leaf: np.ndarray | KeyArray) -> float:
    if isinstance(leaf, KeyArray) or leaf.size == 0 or not _is_float(leaf.dtype):
        return 0.0
    e = np.abs(leaf.astype(np.float64))
    finite = e[np.isfinite(e)]
    return float(finite.max()) if finite.size else 0.0


def _magnitudes(pairs: Sequence[_Pair]) -> dict[tuple[object, str], float]:
    """(top-level entry of the output, dtype) -> the largest finite |expected| among its leaves."""
    out: dict[tuple[object, str], float] = {}
    for pair in pairs:
        key = _group(pair)
        out[key] = max(out.get(key, 0.0), _largest_finite(pair.expected))
    return out


def _group(pair: _Pair) -> tuple[object, str]:
    kind = "key" if isinstance(pair.expected, KeyArray) else pair.expected.dtype.name
    return (pair.at[0] if pair.at else None, kind)


def _float_ratios(exp: np.ndarray, got: np.ndarray, bound: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per element, given each element's bound (``_bounds``): (failing mask, error ratio), in float64."""
    e = exp.astype(np.float64)
    g = got.astype(np.float64)
    with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
        err = np.abs(g - e)
        same = (e == g) | (np.isnan(e) & np.isnan(g))
        finite = np.isfinite(e) & np.isfinite(g)
        failing = ~same & ~(finite & (err <= bound))
        ratio = np.where(same, 0.0, np.where(finite, err / bound, np.inf))
    ratio = np.where(failing, np.maximum(ratio, _JUST_OVER_ONE), ratio)
    return failing, ratio


def _leaf_fails(pair: _Pair, tolerance: Mapping[str, Tolerance], magnitude: float) -> bool:
    """Whether any element of the leaf fails (``_check_leaf``'s ``failing`` is non-zero), and no more."""
    exp = pair.expected
    got = pair.got
    if isinstance(exp, KeyArray):
        assert isinstance(got, KeyArray)  # step 2 passed
        return bool(np.any(got.data != exp.data))
    assert isinstance(got, np.ndarray)  # step 2 passed
    if exp.size == 0:
        return False
    if not _is_float(exp.dtype):
        return bool(np.any(got != exp))
    with np.errstate(invalid="ignore", over="ignore"):
        bound = _bounds(exp, tolerance[exp.dtype.name], magnitude, pair.scale)[0]
    return bool(np.any(_float_ratios(exp, got, bound)[0]))


def _check_keys(exp: KeyArray, got: KeyArray, path: str) -> _LeafCheck:
    """A key leaf's values: each key's data exactly; the first differing key is the worst."""
    size = int(np.prod(exp.shape, dtype=np.int64))
    if size == 0:
        return _LeafCheck(0, 0, None)
    differs = np.any(got.data != exp.data, axis=-1).reshape(exp.shape)
    flat = int(np.argmax(differs.ravel())) if differs.any() else 0
    index = tuple(int(i) for i in np.unravel_index(flat, exp.shape))
    wrong = bool(differs[index])
    words = (tuple(int(w) for w in got.data[index]), tuple(int(w) for w in exp.data[index]))
    ratio = math.inf if wrong else 0.0
    worst = LeafError(path, index, int(wrong), 0, float(wrong), 0.0, ratio, 0.0, words)
    return _LeafCheck(int(np.count_nonzero(differs)), size, worst)


def _check_leaf(pair: _Pair, path: str, tolerance: Mapping[str, Tolerance], magnitude: float) -> _LeafCheck:
    exp = pair.expected
    got = pair.got
    if isinstance(exp, KeyArray):
        assert isinstance(got, KeyArray)  # step 2 passed
        return _check_keys(exp, got, path)
    assert isinstance(got, np.ndarray)  # step 2 passed
    if exp.size == 0:
        return _LeafCheck(0, 0, None)
    if got.dtype == exp.dtype and got.shape == exp.shape and got.tobytes() == exp.tobytes():
        return _identical_leaf(exp, path, tolerance, magnitude, pair.scale)
    return _check_values(exp, got, path, tolerance, magnitude, pair.scale)


def _identical_leaf(
    exp: np.ndarray,
    path: str,
    tolerance: Mapping[str, Tolerance],
    magnitude: float,
    scale: np.ndarray | None = None,
) -> _LeafCheck:
    """A leaf whose values are bit for bit the expected ones (a right answer's usual case): what
    ``_check_values`` finds for it, element by element (nothing fails, every ratio is 0, so the worst
    element is the first), with the bounds of that element only."""
    first = exp.reshape(-1)[:1]
    bounds = None
    if _is_float(exp.dtype):
        first_scale = None if scale is None else scale.reshape(-1)[:1]
        with np.errstate(invalid="ignore", over="ignore"):
            bounds = _bounds(first, tolerance[exp.dtype.name], magnitude, first_scale)
    worst = _element(path, (0,), first, first, 0.0, bounds)
    return _LeafCheck(0, exp.size, replace(worst, index=(0,) * exp.ndim))


def _check_values(
    exp: np.ndarray,
    got: np.ndarray,
    path: str,
    tolerance: Mapping[str, Tolerance],
    magnitude: float,
    scale: np.ndarray | None = None,
) -> _LeafCheck:
    """Every element of a non-empty array leaf against its bound: how many fail, and the worst."""
    if _is_float(exp.dtype):
        with np.errstate(invalid="ignore", over="ignore"):
            bounds = _bounds(exp, tolerance[exp.dtype.name], magnitude, scale)
        failing, ratio = _float_ratios(exp, got, bounds[0])
    else:
        bounds = None
        failing = np.asarray(got != exp)
        ratio = np.where(failing, np.inf, 0.0)
    index = tuple(int(i) for i in np.unravel_index(int(np.argmax(ratio)), exp.shape))
    worst = _element(path, index, exp, got, float(ratio[index]), bounds)
    return _LeafCheck(int(np.count_nonzero(failing)), exp.size, worst)


def _element(
    path: str,
    index: tuple[int, ...],
    exp: np.ndarray,
    got: np.ndarray,
    ratio: float,
    bounds: tuple[np.ndarray, np.ndarray] | None,
) -> LeafError:
    """The element at ``index``; ``bounds`` are a float leaf's (bound, ulp) per element, None if exact."""
    if bounds is not None:
        e: float = float(exp[index])
        g: float = float(got[index])
        abs_err = 0.0 if e == g else abs(g - e)
        bound, spacing = bounds
        return LeafError(path, index, g, e, abs_err, float(bound[index]), ratio, float(spacing[index]))
    e_exact: int = exp[index].item()
    g_exact: int = got[index].item()
    return LeafError(path, index, g_exact, e_exact, float(abs(g_exact - e_exact)), 0.0, ratio)


def _number(value: float) -> str:
    return str(value) if isinstance(value, int) else f"{value:.6g}"


def _index_suffix(index: tuple[int, ...]) -> str:
    return f"[{', '.join(str(i) for i in index)}]" if index else ""


def _revealed_detail(worst: LeafError) -> str:
    head = f"got {_number(worst.got)}, expected {_number(worst.expected)}"
    if isinstance(worst.got, int):
        return head
    if math.isnan(worst.got) or math.isnan(worst.expected):
        return f"{head} (NaN only matches NaN)"
    if math.isinf(worst.got) or math.isinf(worst.expected):
        return f"{head} (an infinity only matches the same infinity)"
    if worst.ulp > 0:
        in_ulps = f"{worst.abs_err / worst.ulp:.3g} ulp > tol {worst.tol / worst.ulp:.3g} ulp"
        return f"{head} (abs err {worst.abs_err:.6g} = {in_ulps}, {worst.ratio:.3g}x the tolerance)"
    return f"{head} (abs err {worst.abs_err:.6g} > tol {worst.tol:.6g})"


def _value_message(check: _LeafCheck) -> str:
    worst = check.worst
    assert worst is not None  # a failing leaf has elements
    if worst.key_data is not None:
        count = f"{check.failing} of {check.size} key{'' if check.size == 1 else 's'} differ"
        got, expected = (f"[{', '.join(map(str, words))}]" for words in worst.key_data)
        where = f"{worst.path}{_index_suffix(worst.index)}"
        return f"{where}: got the key with data {got}, expected {expected}; {count}"
    count = f"{check.failing} of {check.size} elements differ"
    return f"{worst.path}{_index_suffix(worst.index)}: {_revealed_detail(worst)}; {count}"


def _compare_values(
    pairs: Sequence[_Pair], tolerance: Mapping[str, Tolerance], root_names: Sequence[str]
) -> CompareResult:
    first_failure: _LeafCheck | None = None
    worst: LeafError | None = None
    elements = 0
    magnitudes = _magnitudes(pairs)
    for pair in pairs:
        check = _check_leaf(pair, format_path(pair.at, root_names), tolerance, magnitudes[_group(pair)])
        elements += check.size
        if check.worst is None:
            continue
        if worst is None or check.worst.ratio > worst.ratio:
            worst = check.worst
        if first_failure is None and check.failing:
            first_failure = check
    ratio = 0.0 if worst is None else worst.ratio
    if first_failure is None:
        message = f"all {elements} elements match (worst error is {ratio:.3g}x the tolerance)"
        return CompareResult(True, None, None, message, ratio, worst)
    assert first_failure.worst is not None
    message = _value_message(first_failure)
    return CompareResult(False, WrongAnswerReason.VALUE, first_failure.worst.path, message, ratio, worst)
