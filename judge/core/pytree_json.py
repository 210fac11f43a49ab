"""Run-panel JSON <-> host pytrees, and rendering of trees for display.

Input conversion (``json_to_pytree``) follows docs/architecture.md, "Run-panel JSON to pytree":

- a JSON object becomes a dict node;
- a JSON list whose items are all objects (at least one item) becomes a list node;
- any other list, or a number, becomes ONE numpy array leaf of the case dtype. It must be rectangular and
  hold only numbers (not booleans); ``[]`` is a leaf of shape ``(0,)``, ``[[], []]`` one of shape ``(2, 0)``;
- everything else is rejected with a ``ConversionError`` naming the path, e.g.
  ``grads["layers"][2]: list mixes objects and numbers``.

The other argument kinds (``judge.core.spec.ArgSpec``) have converters of their own: ``json_to_number`` (a
Python float), ``json_to_array`` (ONE array of a declared dtype and rank, never a tree: ``int32`` takes
integral numbers only, ``bool`` takes ``true``/``false`` only), ``json_to_int`` and ``json_to_int_tuple``
(static Python ints and tuples of ints), ``json_to_bool`` and ``json_to_choice`` (a static Python bool, and
a static str that is one of the argument's choices). Every error names the path: ``step: 1.5 is not an
integer``, ``buckets[1]: expected an integer, got an array``.

Each leaf is validated by walking its nesting levels (type checks run at C speed over whole levels) and then
built with a single numpy call, so a 256x256 input is one leaf converted in a few milliseconds. Only when the
fast walk finds a problem does a slower recursive diagnosis run to name the exact place.

Output rendering (``pytree_to_json``, ``format_value``, ``describe_leaves``) accepts the decoded trees of
``sandbox.shared.tree``: dicts (string or ``NonStrKey`` keys), lists, tuples, ``None``, ``OtherNode`` and
numpy array leaves (bfloat16 via ``ml_dtypes``). This module never imports jax.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import Any, NoReturn, TypeAlias, TypeGuard

import ml_dtypes
import numpy as np
import numpy.typing as npt

from sandbox.shared.tree import KEY_IMPLS, KeyArray, NonStrKey, OtherNode

#: A JSON value as produced by ``json.loads`` (and accepted by ``json.dumps``).
JSON: TypeAlias = bool | int | float | str | list["JSON"] | dict[str, "JSON"] | None
#: A numpy array leaf.
Array: TypeAlias = npt.NDArray[Any]
#: A host pytree built from Run-panel JSON.
HostTree: TypeAlias = Array | dict[str, "HostTree"] | list["HostTree"]
#: One step of a path: a dict key, a list/array index, or a non-string key of a decoded tree.
PathKey: TypeAlias = str | int | NonStrKey

_DTYPES: dict[str, np.dtype[Any]] = {
    "float32": np.dtype(np.float32),
    "bfloat16": np.dtype(ml_dtypes.bfloat16),
    "float16": np.dtype(np.float16),
    "float64": np.dtype(np.float64),
    "int32": np.dtype(np.int32),
    "uint32": np.dtype(np.uint32),
    "bool": np.dtype(np.bool_),
}
_NUMBER_TYPES = frozenset({float, int})
_BOOL_TYPES = frozenset({bool})
#: Most items of an ``int_tuple`` argument.
MAX_TUPLE_ITEMS = 64
_INT32_MAX = 2**31 - 1
_MAX_DEPTH_CAP = 200  # keeps the recursive walk far below Python's recursion limit


class ConversionError(ValueError):
    """Run-panel JSON that cannot become an argument; ``str(e) == f"{e.path}: {e.reason}"``."""

    def __init__(self, path: str, reason: str) -> None:
        super().__init__(f"{path}: {reason}")
        self.path = path
        self.reason = reason

    def __reduce__(self) -> tuple[type[ConversionError], tuple[str, str]]:
        return (type(self), (self.path, self.reason))


@dataclass(frozen=True)
class ConversionLimits:
    """Bounds applied to one argument tree."""

    #: Deepest nesting of containers (objects and arrays, including the arrays inside a leaf).
    max_depth: int = 32
    #: Most array leaves in the tree.
    max_leaves: int = 256
    #: Most numbers over all leaves of the tree.
    max_elements: int = 65536
    #: Most dimensions of one leaf.
    max_ndim: int = 8

    def __post_init__(self) -> None:
        for name in ("max_depth", "max_leaves", "max_elements", "max_ndim"):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or value < 0:
                raise ValueError(f"ConversionLimits.{name} must be a non-negative int, got {value!r}")
        if self.max_depth > _MAX_DEPTH_CAP:
            raise ValueError(f"ConversionLimits.max_depth must be at most {_MAX_DEPTH_CAP}")


#: The dtype name JAX gives typed keys of each implementation (``str(jax.random.key(0).dtype)``).
KEY_DTYPE_NAMES = {"threefry2x32": "key<fry>"}


def key_dtype_name(impl: str) -> str:
    """``key<fry>`` for threefry2x32 keys: the name JAX prints for a typed key's dtype."""
    return KEY_DTYPE_NAMES.get(impl, f"key<{impl}>")


@dataclass(frozen=True)
class LeafInfo:
    """A leaf of a tree, for display: its path, dtype name and shape."""

    path: str
    dtype: str
    shape: tuple[int, ...]


# --------------------------------------------------------------------------------------------- paths


def _key_text(key: PathKey) -> str:
    if isinstance(key, NonStrKey):
        return key.text
    if isinstance(key, str):
        return json.dumps(key, ensure_ascii=False)
    return str(int(key))


def path_str(root: str, keys: Sequence[PathKey]) -> str:
    """``path_str("grads", ["layers", 2, "w"]) == 'grads["layers"][2]["w"]'``."""
    return root + "".join(f"[{_key_text(k)}]" for k in keys)


# ---------------------------------------------------------------------------------------- JSON -> tree


def json_kind(value: object) -> str:
    """The JSON type name with an article, for messages: 'a string', 'null', 'an object'."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, dict):
        return "an object"
    if isinstance(value, list | tuple):
        return "an array"
    return f"a Python {type(value).__name__}"


def _is_number(value: object) -> TypeGuard[int | float]:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _number_text(value: object) -> str:
    """A number as written in messages: floats by repr (1e+39), huge ints in short scientific form."""
    if isinstance(value, float):
        return repr(float(value))
    if isinstance(value, int) and not isinstance(value, bool):
        if -(10**17) < value < 10**17:
            return str(value)
        mantissa, exponent = f"{Decimal(value):.5e}".split("e")
        return f"{mantissa.rstrip('0').rstrip('.')}e{exponent}"
    return repr(value)


# Item kinds inside a JSON list that is (or is inside) an array leaf.
_NUMBER, _ARRAY, _OBJECT = "number", "array", "object"
_KIND_ARTICLE = {_NUMBER: "a number", _ARRAY: "an array", _OBJECT: "an object"}
_KIND_PLURAL = {_OBJECT: "objects", _NUMBER: "numbers", _ARRAY: "lists"}
_KIND_ORDER = (_OBJECT, _NUMBER, _ARRAY)


def _item_kind(value: object, boolean: bool = False) -> str | None:
    """A list item's kind inside an array leaf; ``_NUMBER`` is the leaf's scalar (a boolean when
    ``boolean``, where numbers are invalid items)."""
    if isinstance(value, bool):
        return _NUMBER if boolean else None
    if _is_number(value):
        return None if boolean else _NUMBER
    if isinstance(value, list):
        return _ARRAY
    if isinstance(value, dict):
        return _OBJECT
    return None


def _unravel(flat_index: int, shape: tuple[int, ...]) -> tuple[int, ...]:
    if not shape:
        return ()
    return tuple(int(i) for i in np.unravel_index(flat_index, shape))


class _Converter:
    def __init__(self, dtype: str, root: str, limits: ConversionLimits) -> None:
        if dtype not in _DTYPES:
            raise ValueError(f"unsupported leaf dtype {dtype!r}; expected one of {sorted(_DTYPES)}")
        self.dtype_name = dtype
        self.dtype = _DTYPES[dtype]
        self.boolean = self.dtype.kind == "b"
        self.scalar_types = _BOOL_TYPES if self.boolean else _NUMBER_TYPES
        self.scalar_word = (
            "true or false" if self.boolean else "an integer" if self.dtype.kind in "iu" else "a number"
        )
        self.root = root
        self.limits = limits
        self.leaves = 0
        self.elements = 0

    def fail(self, keys: Sequence[PathKey], reason: str) -> NoReturn:
        raise ConversionError(path_str(self.root, keys), reason)

    # ----- nodes

    def node(self, value: object, keys: tuple[PathKey, ...]) -> HostTree:
        if len(keys) > self.limits.max_depth:
            self.fail(keys, f"nesting deeper than {self.limits.max_depth} levels")
        if isinstance(value, dict):
            out: dict[str, HostTree] = {}
            for key, child in value.items():
                if not isinstance(key, str):
                    self.fail(keys, f"object key {key!r} is not a string")
                out[key] = self.node(child, (*keys, key))
            return out
        if isinstance(value, list):
            if value and all(isinstance(item, dict) for item in value):
                return [self.node(item, (*keys, i)) for i, item in enumerate(value)]
            return self.leaf(value, keys)
        if _is_number(value):
            return self.leaf(value, keys)
        self.fail(keys, f"expected an object, array or number, got {json_kind(value)}")

    # ----- leaves

    def leaf(self, value: object, keys: tuple[PathKey, ...]) -> Array:
        self.leaves += 1
        if self.leaves > self.limits.max_leaves:
            self.fail(keys, f"too many leaves (more than {self.limits.max_leaves})")
        shape, flat = self.scan(value, keys)
        self.elements += len(flat)
        return self.build(flat, shape, keys)

    def check_dim(self, ndim: int, keys: tuple[PathKey, ...]) -> None:
        if ndim > self.limits.max_ndim:
            self.fail(keys, f"array has more than {self.limits.max_ndim} dimensions")
        if len(keys) + ndim > self.limits.max_depth:
            self.fail(keys, f"nesting deeper than {self.limits.max_depth} levels")

    def check_budget(self, count: int, keys: tuple[PathKey, ...]) -> None:
        if self.elements + count > self.limits.max_elements:
            self.fail(keys, f"too many elements (more than {self.limits.max_elements} in total)")

    def scan(self, value: object, keys: tuple[PathKey, ...]) -> tuple[tuple[int, ...], list[Any]]:
        """Fast validation: the leaf's shape and its numbers in row-major order."""
        if not isinstance(value, list):
            self.check_budget(1, keys)
            return (), [value]
        shape: list[int] = []
        level: list[list[Any]] = [value]
        while True:
            self.check_dim(len(shape) + 1, keys)
            self.check_budget(sum(map(len, level)), keys)
            n = len(level[0])
            if any(len(item) != n for item in level):
                break  # ragged: diagnose below
            shape.append(n)
            children = [child for item in level for child in item]
            types = set(map(type, children))
            if types <= self.scalar_types:
                return tuple(shape), children
            if types == {list}:
                level = children
                continue
            break  # strings, booleans, objects, mixed items...: diagnose below
        return self.diagnose_leaf(value, keys)

    def diagnose_leaf(self, value: list[Any], keys: tuple[PathKey, ...]) -> tuple[tuple[int, ...], list[Any]]:
        """Slow validation naming the first problem; returns normally only for valid (unusual) input."""
        visited = [0]
        shape = self.diagnose(value, keys, (), visited)
        flat: list[Any] = value
        for _ in range(len(shape) - 1):
            flat = [child for item in flat for child in item]
        return shape, list(flat)

    def diagnose(
        self, value: list[Any], keys: tuple[PathKey, ...], index: tuple[int, ...], visited: list[int]
    ) -> tuple[int, ...]:
        self.check_dim(len(index) + 1, keys)
        visited[0] += len(value)
        self.check_budget(visited[0], keys)
        here = (*keys, *index)
        kinds = [_item_kind(item, self.boolean) for item in value]
        counts = {kind: kinds.count(kind) for kind in _KIND_ORDER if kind in kinds}
        # The most common kind is what the list "should" hold; a tie goes to the kind seen first.
        expected = max(counts, key=lambda k: (counts[k], -kinds.index(k))) if counts else _NUMBER
        for i, kind in enumerate(kinds):
            if kind is None:
                wanted = self.scalar_word if expected == _NUMBER else _KIND_ARTICLE[expected]
                self.fail((*here, i), f"expected {wanted}, got {json_kind(value[i])}")
        if len(counts) > 1:
            plural = {**_KIND_PLURAL, _NUMBER: "booleans"} if self.boolean else _KIND_PLURAL
            pair = " and ".join(plural[k] for k in _KIND_ORDER if k in counts)
            odd = next(i for i, kind in enumerate(kinds) if kind != expected)
            self.fail((*here, odd), f"list mixes {pair}")
        if expected == _OBJECT:
            self.fail((*here, 0), f"expected {self.scalar_word}, got an object")
        if expected == _NUMBER:
            return (len(value),)
        first: tuple[int, ...] = ()
        for i, item in enumerate(value):
            sub = self.diagnose(item, keys, (*index, i), visited)
            if i == 0:
                first = sub
            elif sub != first:
                if sub[:1] != first[:1]:
                    detail = f"item {i} has length {sub[0]}, item 0 has length {first[0]}"
                else:
                    detail = f"item {i} has shape {sub}, item 0 has shape {first}"
                self.fail(here, f"ragged list: {detail}")
        return (len(value), *first)

    def build(self, flat: list[Any], shape: tuple[int, ...], keys: tuple[PathKey, ...]) -> Array:
        """One numpy call for the whole leaf, then finiteness and range checks on the result."""
        if self.boolean:  # the scan admitted booleans only
            return np.array(flat, dtype=np.bool_).reshape(shape)
        try:
            wide = np.array(flat, dtype=np.float64)
        except OverflowError:
            for i, x in enumerate(flat):
                try:
                    float(x)
                except OverflowError:
                    self.fail((*keys, *_unravel(i, shape)), self.overflow(x))
            raise
        wide = wide.reshape(shape)
        finite = np.isfinite(wide)
        if not finite.all():
            i = int(np.argmin(finite.ravel()))
            self.fail((*keys, *_unravel(i, shape)), f"non-finite value {float(flat[i])!r}")
        if self.dtype.kind in "iu":
            info = np.iinfo(self.dtype)
            bad_int = np.trunc(wide) != wide
            if bad_int.any():
                i = int(np.argmax(bad_int.ravel()))
                self.fail((*keys, *_unravel(i, shape)), f"{_number_text(flat[i])} is not an integer")
            too_big = (wide < info.min) | (wide > info.max)
            if too_big.any():
                i = int(np.argmax(too_big.ravel()))
                span = f"the {self.dtype_name} range ({info.min} to {info.max})"
                reason = (
                    f"{_number_text(flat[i])} is outside {span}"
                    if self.dtype.kind == "u"
                    else f"{_number_text(flat[i])} overflows {self.dtype_name}"
                )
                self.fail((*keys, *_unravel(i, shape)), reason)
            return wide.astype(self.dtype)
        with np.errstate(over="ignore", invalid="ignore"):
            out: Array = wide.astype(self.dtype)
        overflow = np.isinf(out)
        if overflow.any():
            i = int(np.argmax(overflow.ravel()))
            self.fail((*keys, *_unravel(i, shape)), self.overflow(flat[i]))
        return out

    def overflow(self, value: object) -> str:
        return f"{_number_text(value)} overflows {self.dtype_name}"


def json_to_pytree(
    value: object, dtype: str, *, root: str, limits: ConversionLimits = ConversionLimits()
) -> HostTree:
    """Convert one Run-panel argument (parsed JSON) to a host pytree with numpy leaves of ``dtype``.

    ``dtype`` is ``"float32"`` or ``"bfloat16"`` (also ``"float16"``, ``"float64"``, ``"int32"``).
    ``root`` names the argument in error paths. Raises ``ConversionError`` for invalid input and
    ``ValueError`` for an unsupported dtype.
    """
    return _Converter(dtype, root, limits).node(value, ())


def json_to_array(
    value: object,
    dtype: str,
    *,
    root: str,
    ndim: Sequence[int] = (),
    limits: ConversionLimits = ConversionLimits(),
) -> Array:
    """An ``array`` argument: ONE numpy array of ``dtype`` (never a tree) with a rank in ``ndim`` (empty:
    any rank). For ``int32`` every number must be integral and fit (``step: 1.5 is not an integer``); for
    ``bool`` only JSON ``true``/``false`` are accepted, and booleans nowhere else. Raises
    ``ConversionError`` naming the path."""
    converter = _Converter(dtype, root, limits)
    if isinstance(value, dict):
        converter.fail((), "expected an array, got an object (this argument is one array, not a tree)")
    if isinstance(value, list) and value and all(isinstance(item, dict) for item in value):
        converter.fail(
            (), "expected an array, got a list of objects (this argument is one array, not a tree)"
        )
    if not isinstance(value, list):
        scalar_ok = isinstance(value, bool) if converter.boolean else _is_number(value)
        if not scalar_ok:
            converter.fail((), f"expected {converter.scalar_word} or an array, got {json_kind(value)}")
    array = converter.leaf(value, ())
    if ndim and array.ndim not in ndim:
        converter.fail((), f"expected {_rank_text(ndim, converter.scalar_word)}, got {_shape_text(array)}")
    return array


def _rank_text(ndim: Sequence[int], scalar_word: str) -> str:
    if list(ndim) == [0]:
        return scalar_word
    ranks = sorted(ndim)
    listed = " or ".join(str(n) for n in ranks)
    return f"an array with {listed} dimension{'' if ranks == [1] else 's'}"


def _shape_text(array: Array) -> str:
    if array.ndim == 0:
        return "a single value"
    plural = "" if array.ndim == 1 else "s"
    return f"an array of shape {tuple(int(n) for n in array.shape)} ({array.ndim} dimension{plural})"


def json_to_int(value: object, *, root: str) -> int:
    """An ``int`` argument (static): a JSON number with an integral value that fits int32 (not a boolean,
    not an array), returned as a Python ``int``."""
    if not _is_number(value):
        raise ConversionError(root, f"expected an integer, got {json_kind(value)}")
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ConversionError(root, f"non-finite value {value!r}")
        if not value.is_integer():
            raise ConversionError(root, f"{_number_text(value)} is not an integer")
    if not -_INT32_MAX - 1 <= value <= _INT32_MAX:
        raise ConversionError(root, f"{_number_text(value)} overflows int32")
    return int(value)


def json_to_int_tuple(value: object, *, root: str, max_items: int = MAX_TUPLE_ITEMS) -> tuple[int, ...]:
    """An ``int_tuple`` argument (static): a JSON array of integers, returned as a Python ``tuple`` of ints
    (hashable, as ``static_argnames`` needs). An item that is not an integer is named by its index:
    ``buckets[1]: expected an integer, got an array``."""
    if not isinstance(value, list):
        raise ConversionError(root, f"expected an array of integers, got {json_kind(value)}")
    if len(value) > max_items:
        raise ConversionError(root, f"too many items ({len(value)}, at most {max_items})")
    return tuple(json_to_int(item, root=f"{root}[{i}]") for i, item in enumerate(value))


_KEY_FORMS = '{"key": seed} or {"key_data": [...]}'
#: The seeds ``jax.random.key`` takes (x64 off: an int32 or a uint32 value, the same 32 bits).
_SEED_MIN = -(2**31)


def _seeds_as_uint32(item: object) -> object:
    """The seeds of a ``{"key": ...}`` form as ``jax.random.key`` reads them: a negative seed from -2**31 to
    -1 is the int32 whose 32 bits are the uint32 seed + 2**32 (``jax.random.key(-1)`` is
    ``jax.random.key(2**32 - 1)``, key data ``[0, 4294967295]``). Anything else is left for the uint32
    converter to accept or refuse."""
    if isinstance(item, list):
        return [_seeds_as_uint32(part) for part in item]
    if _is_number(item) and _SEED_MIN <= item < 0 and float(item).is_integer():
        return int(item) + 2**32
    return item


def json_to_key(
    value: object,
    *,
    root: str,
    impl: str = "threefry2x32",
    ndim: Sequence[int] = (0,),
    limits: ConversionLimits = ConversionLimits(),
) -> KeyArray:
    """A ``key`` argument: a typed PRNG key array of ``impl`` with a rank in ``ndim``, as ``KeyArray`` data.

    JSON forms: ``{"key": seed}`` (an integer from -2**31 to 2**32 - 1; the key ``jax.random.key(seed)``
    makes, whose threefry2x32 data is ``[0, seed]``, ``[0, seed + 2**32]`` for a negative seed), a bare
    integer (the same), ``{"key_data": [...]}`` (raw uint32 key data, as ``jax.random.key_data`` gives it:
    shape ``(*key shape, words)``); a batch of keys is ``{"key": [seed, ...]}`` or
    ``{"key_data": [[...], ...]}``. Errors name the path:
    ``key["key_data"]: key data of shape (3,): a threefry2x32 key is 2 uint32 words``."""
    words = KEY_IMPLS[impl]
    if isinstance(value, bool) or not isinstance(value, int | dict):
        hint = ' (raw key data is written {"key_data": [...]})' if isinstance(value, list) else ""
        raise ConversionError(root, f"expected a PRNG key, {_KEY_FORMS}, got {json_kind(value)}{hint}")
    if isinstance(value, int):
        value = {"key": value}
    forms = sorted(value)
    if len(forms) != 1 or forms[0] not in ("key", "key_data"):
        listed = ", ".join(json.dumps(k) for k in forms[:4]) or "none"
        raise ConversionError(root, f"expected a PRNG key, {_KEY_FORMS}, got an object with keys {listed}")
    (form,) = forms
    inner = f"{root}[{json.dumps(form)}]"
    converter = _Converter("uint32", inner, limits)
    item = value[form]
    if not isinstance(item, list) and not _is_number(item):
        converter.fail((), f"expected an integer or an array of integers, got {json_kind(item)}")
    if form == "key":
        item = _seeds_as_uint32(item)
    array = converter.leaf(item, ())
    if form == "key":
        data = np.stack([np.zeros_like(array), array], axis=-1)
    else:
        if array.ndim == 0 or array.shape[-1] != words:
            converter.fail(
                (),
                f"key data of shape {tuple(int(n) for n in array.shape)}: a {impl} key is {words} uint32 "
                f"words, so key data has shape (..., {words})",
            )
        data = array
    key = KeyArray(impl, np.ascontiguousarray(data, dtype=np.uint32))
    if key.data.ndim - 1 not in ndim:
        got = "one key" if not key.shape else f"a key array of shape {key.shape}"
        ranks = " or ".join(str(n) for n in sorted(ndim))
        wanted = "one key" if list(ndim) == [0] else f"a key array with {ranks} dimensions"
        raise ConversionError(root, f"expected {wanted}, got {got}")
    return key


def json_to_bool(value: object, *, root: str) -> bool:
    """A ``bool`` argument (static): JSON ``true`` or ``false`` only (not 0 or 1, not a string), returned as
    a Python ``bool``."""
    if not isinstance(value, bool):
        raise ConversionError(root, f"expected true or false, got {json_kind(value)}")
    return value


def json_to_choice(value: object, *, root: str, choices: Sequence[str]) -> str:
    """A ``str`` argument (static): a JSON string that is one of ``choices``, returned as a Python ``str``:
    ``mode: 'median' is not one of 'sum', 'mean'``."""
    listed = ", ".join(repr(c) for c in choices)
    if not isinstance(value, str):
        raise ConversionError(root, f"expected a string (one of {listed}), got {json_kind(value)}")
    if value not in choices:
        shown = value if len(value) <= 40 else value[:37] + "..."
        raise ConversionError(root, f"{shown!r} is not one of {listed}")
    return value


def json_to_number(value: object, *, root: str) -> float:
    """A ``number`` argument: a finite JSON number (not a boolean), returned as a Python float."""
    if not _is_number(value):
        raise ConversionError(root, f"expected a number, got {json_kind(value)}")
    try:
        number = float(value)
    except OverflowError:
        raise ConversionError(root, f"{_number_text(value)} overflows float64") from None
    if not math.isfinite(number):
        raise ConversionError(root, f"non-finite value {number!r}")
    return number


# ---------------------------------------------------------------------------------------- tree -> JSON


def _is_float_dtype(dtype: np.dtype[Any]) -> bool:
    if dtype.kind == "f":
        return True
    if dtype.kind != "V":
        return False
    finfo: Callable[[np.dtype[Any]], object] = ml_dtypes.finfo
    try:
        finfo(dtype)
    except (ValueError, TypeError, KeyError):
        return False
    return True


def _round(values: npt.NDArray[np.float64], decimals: int) -> npt.NDArray[np.float64]:
    """Round to ``decimals`` places where that is meaningful in float64; also turns -0.0 into 0.0."""
    limit = 2.0**52 * 10.0**-decimals
    with np.errstate(all="ignore"):
        rounded = np.where(np.abs(values) < limit, np.round(values, decimals), values)
    result: npt.NDArray[np.float64] = np.asarray(rounded + 0.0)  # stays an array when 0-d
    return result


def _as_float64(array: Array, decimals: int | None) -> npt.NDArray[np.float64]:
    wide = np.asarray(array, dtype=np.float64)
    return wide if decimals is None else _round(wide, decimals)


def _sorted_items(tree: dict[Any, Any]) -> list[tuple[Any, Any]]:
    """Dict items in JAX order: string keys sorted; trees with non-string keys keep their (decoded) order."""
    if all(isinstance(k, str) for k in tree):
        return sorted(tree.items())
    return list(tree.items())


def _leaf_array(tree: object) -> Array | None:
    if isinstance(tree, np.ndarray):
        return tree
    if isinstance(tree, np.generic):
        return np.asarray(tree)
    if isinstance(tree, float):
        return np.asarray(tree, dtype=np.float64)
    return None


def _array_to_json(array: Array, decimals: int | None) -> JSON:
    if array.dtype.kind in "biu":
        result: JSON = array.tolist()
        return result
    if _is_float_dtype(array.dtype):
        wide = _as_float64(array, decimals)
        finite = np.isfinite(wide)
        if finite.all():
            result = wide.tolist()
            return result
        objects = wide.astype(object)
        objects[np.isnan(wide)] = "NaN"
        objects[wide == np.inf] = "Infinity"
        objects[wide == -np.inf] = "-Infinity"
        result = objects.tolist()
        return result
    texts = np.vectorize(str, otypes=[object])(array) if array.size else array.astype(object)
    result = texts.tolist()
    return result


def pytree_to_json(tree: object, *, decimals: int | None = None) -> JSON:
    """A tree as JSON: arrays as nested lists (floats, or ints/bools for int/bool dtypes), dict keys sorted,
    tuples and ``OtherNode`` children as lists, ``None`` as null, NaN/inf as "NaN"/"Infinity"/"-Infinity",
    a typed key array as ``{"key_data": [...]}`` (the Run-panel form of a key).

    With ``decimals``, float values are rounded to that many places (and -0.0 becomes 0.0).
    """
    if decimals is not None and decimals < 0:
        raise ValueError("decimals must be non-negative")
    return _to_json(tree, decimals)


def _to_json(tree: object, decimals: int | None) -> JSON:
    if isinstance(tree, KeyArray):
        return {"key_data": _array_to_json(tree.data, None)}
    array = _leaf_array(tree)
    if array is not None:
        return _array_to_json(array, decimals)
    if tree is None or isinstance(tree, bool | int | str):
        return tree
    if isinstance(tree, dict):
        return {_json_key(k): _to_json(v, decimals) for k, v in _sorted_items(tree)}
    if isinstance(tree, list | tuple):
        return [_to_json(item, decimals) for item in tree]
    if isinstance(tree, OtherNode):
        return [_to_json(item, decimals) for item in tree.children]
    return repr(tree)


def _json_key(key: object) -> str:
    return key.text if isinstance(key, NonStrKey) else str(key)


# ---------------------------------------------------------------------------------------------- display


def describe_leaves(tree: object, *, root: str = "") -> list[LeafInfo]:
    """Every leaf of ``tree`` in JAX flatten order with its path (``root`` + keys), dtype and shape."""
    out: list[LeafInfo] = []
    _describe(tree, root, (), out)
    return out


def _describe(tree: object, root: str, keys: tuple[PathKey, ...], out: list[LeafInfo]) -> None:
    if tree is None:
        return
    if isinstance(tree, dict):
        for key, child in _sorted_items(tree):
            _describe(child, root, (*keys, _path_key(key)), out)
        return
    if isinstance(tree, list | tuple):
        children: Iterable[object] = tree
    elif isinstance(tree, OtherNode):
        children = tree.children
    elif isinstance(tree, KeyArray):
        out.append(LeafInfo(path_str(root, keys), key_dtype_name(tree.impl), tree.shape))
        return
    else:
        array = _leaf_array(tree)
        if array is None and isinstance(tree, bool | int):
            array = np.asarray(tree)
        if array is None:
            out.append(LeafInfo(path_str(root, keys), type(tree).__name__, ()))
        else:
            out.append(LeafInfo(path_str(root, keys), str(array.dtype), tuple(int(n) for n in array.shape)))
        return
    for i, child in enumerate(children):
        _describe(child, root, (*keys, i), out)


def _path_key(key: object) -> PathKey:
    if isinstance(key, str | NonStrKey):
        return key
    return NonStrKey(repr(key), type(key).__name__)


def format_value(tree: object, *, decimals: int = 6) -> str:
    """Python-like text of a tree for statements and reports, e.g. ``{"b": 0.8, "w": [0.6, 0.0]}``.

    Dict keys sorted and double-quoted, tuples as ``(a, b)``, ``OtherNode`` as ``TypeName(a, b)``, floats
    rounded to ``decimals`` places and printed in shortest repr form, ints and bools as such, 0-d arrays as
    a bare number, a typed key array as ``wrap_key_data([0, 42])`` (``jax.random.wrap_key_data`` of its
    data makes that key).
    """
    if decimals < 0:
        raise ValueError("decimals must be non-negative")
    return _format(tree, decimals)


def _format(tree: object, decimals: int) -> str:
    if isinstance(tree, KeyArray):
        impl = "" if tree.impl == "threefry2x32" else f", impl={json.dumps(tree.impl)}"
        return f"wrap_key_data({_format_array(tree.data, decimals)}{impl})"
    array = _leaf_array(tree)
    if array is not None:
        return _format_array(array, decimals)
    if tree is None or isinstance(tree, bool | int):
        return repr(tree)
    if isinstance(tree, str):
        return json.dumps(tree, ensure_ascii=False)
    if isinstance(tree, dict):
        items = (f"{_format_key(k)}: {_format(v, decimals)}" for k, v in _sorted_items(tree))
        return "{" + ", ".join(items) + "}"
    if isinstance(tree, list):
        return "[" + ", ".join(_format(item, decimals) for item in tree) + "]"
    if isinstance(tree, tuple):
        parts = [_format(item, decimals) for item in tree]
        return "(" + parts[0] + ",)" if len(parts) == 1 else "(" + ", ".join(parts) + ")"
    if isinstance(tree, OtherNode):
        return f"{tree.type_name}(" + ", ".join(_format(item, decimals) for item in tree.children) + ")"
    return repr(tree)


def _format_key(key: object) -> str:
    if isinstance(key, NonStrKey):
        return key.text
    if isinstance(key, str):
        return json.dumps(key, ensure_ascii=False)
    return repr(key)


def _format_array(array: Array, decimals: int) -> str:
    scalar: Callable[[Any], str]
    if array.dtype.kind in "biu":
        values: Any = array.tolist()
        scalar = str
    elif _is_float_dtype(array.dtype):
        values = _as_float64(array, decimals).tolist()
        scalar = repr
    else:
        values = array.astype(object).tolist()
        scalar = repr
    return _format_nested(values, array.ndim, scalar)


def _format_nested(values: Any, ndim: int, scalar: Callable[[Any], str]) -> str:
    if ndim == 0:
        return scalar(values)
    if ndim == 1:
        return "[" + ", ".join(map(scalar, values)) + "]"
    return "[" + ", ".join(_format_nested(row, ndim - 1, scalar) for row in values) + "]"
