"""Every argument kind, by the name a spec writes: the one list of kinds (``judge.core.spec.ArgKind`` is built
from it). A new kind is a module beside this one and a line here."""

from __future__ import annotations

from types import MappingProxyType

from judge.kinds.array import ArrayKind
from judge.kinds.base import Kind
from judge.kinds.bool_ import BoolKind
from judge.kinds.float_tuple import FloatTupleKind
from judge.kinds.function import FunctionKind
from judge.kinds.int_ import IntKind
from judge.kinds.int_tuple import IntTupleKind
from judge.kinds.key import KeyKind
from judge.kinds.number import NumberKind
from judge.kinds.pytree import PytreeKind
from judge.kinds.str_ import StrKind

_ALL: tuple[Kind, ...] = (
    PytreeKind(),
    NumberKind(),
    ArrayKind(),
    IntKind(),
    IntTupleKind(),
    BoolKind(),
    StrKind(),
    FunctionKind(),
    KeyKind(),
    FloatTupleKind(),
)

#: Kind name -> kind, in the order the docs and the API list them.
KINDS = MappingProxyType({kind.name: kind for kind in _ALL})
#: The kind names, in order.
KIND_NAMES: tuple[str, ...] = tuple(KINDS)


def kind_of(name: str) -> Kind:
    """The kind a spec names (``KeyError`` for a name no kind has: the spec's validation refuses it)."""
    return KINDS[name]


def users_of(field: str) -> list[str]:
    """The kinds that use an optional ``ArgSpec`` field, in order."""
    return [kind.name for kind in _ALL if field in kind.fields]
