"""Function arguments: a case names a function of the problem's menu module, the function itself is passed.

A problem with a ``function`` argument (``judge.core.spec.ArgSpec.kind``) ships a menu module in its package
(``ProblemSpec.functions``, e.g. ``functions.py``): plain functions of JAX arrays, such as the ``f`` of a
Hessian-vector product. A case (or a Run-panel input) names one with a JSON string; the converter turns it
into a ``MenuChoice``. The menu is PROBLEM code, not reference code: its source goes into the sandbox, where
the tracer executes it in a module of its own and passes the named function to the user's code as a static
argument (``sandbox.inside.tracer.load_menu``); on the trusted side the reference gets the same function
from the same file (``menu_functions``).

What a submission can do with the menu: it receives one function object, whose module globals hold the
other menu functions, so nothing stops it from calling another one. It gains nothing by that: the judge
compares its outputs with the reference's on the function the case names, so calling any other function
is a wrong answer (tests/test_function_args.py grades such a submission).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from judge.core.errors import ProblemError


@dataclass(frozen=True)
class MenuChoice:
    """A converted ``function`` argument: the name of a menu function (hashable, so static under jit)."""

    name: str

    def __str__(self) -> str:
        return self.name


class MenuError(ValueError):
    """A JSON value that names no menu function of the argument."""


def to_choice(choices: Sequence[str], value: Any) -> MenuChoice:
    """The ``MenuChoice`` a JSON value names; raises ``MenuError`` with a reason for anything else."""
    options = ", ".join(choices)
    if not isinstance(value, str):
        raise MenuError(f"expected the name of a function as a string (one of: {options})")
    if value not in choices:
        raise MenuError(f"unknown function {value[:60]!r} (one of: {options})")
    return MenuChoice(value)


def menu_functions(module: Any, names: list[str], where: str) -> dict[str, Callable[..., Any]]:
    """The named functions of a loaded menu module; ``ProblemError`` when one is missing or not callable."""
    found: dict[str, Callable[..., Any]] = {}
    for name in names:
        fn = getattr(module, name, None)
        if not callable(fn):
            raise ProblemError(where, f"the menu module defines no function {name!r}")
        found[name] = fn
    return found
