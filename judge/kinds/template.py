"""What ``judge new`` writes for the kinds: the values its scaffolds use (menus, strings, bounds) and the
helpers that shape example and edge values (``judge.authoring.scaffold_kinds`` declares the arguments)."""

from __future__ import annotations

#: The menu ``judge new`` writes for ``function`` arguments (``functions.py``).
MENU = ("square", "sine")
#: The choices ``judge new`` declares for ``str`` arguments.
STRINGS = ("low", "high")
#: Bounds the scaffold's validator puts on static ints (and tuple items) and on int32 array elements.
INT_LOW, INT_HIGH = 1, 8
INT_BOUND = 1000
#: The static tuples cases use, in turn (the first two are the examples').
INT_TUPLES = ([2, 4], [1, 3, 5], [1, 2, 4, 8], [3], [2, 3, 7])
#: The largest uint32 value: raw key data at the limit.
UINT32_MAX = 2**32 - 1
#: At most this many ranks in an array's ndim: the generator's 8 float32 cases must cover each.
MAX_RANKS = 8


class Code(str):
    """Python source written as is (a constant's name) by ``judge.authoring.scaffold_kinds.py_literal``."""


def case_shape(rank: int, index: int) -> tuple[int, ...]:
    """The shape of an array argument of ``rank`` in case ``index`` (the generator holds the same rule)."""
    return (2 + index % 3, *([2] * (rank - 1))) if rank else ()


def nest(rank: int, items: list[object]) -> object:
    """``items`` as the innermost list of an array of ``rank`` (its first item alone for rank 0)."""
    if rank == 0:
        return items[0]
    value: object = items
    for _ in range(rank - 1):
        value = [value]
    return value


def filled(rank: int, size: int, item: object) -> object:
    """An array of ``rank`` with ``size`` entries along its first axis, all ``item``."""
    return nest(rank, [item] * size)


def shaped(flat: list[object], shape: tuple[int, ...]) -> object:
    if not shape:
        return flat[0]
    step = len(flat) // shape[0]
    return [shaped(flat[i * step : (i + 1) * step], shape[1:]) for i in range(shape[0])]
