"""The program a learner's function became, as text with its telling lines marked: a pure function.

The text is the tracer's (the jaxpr as JAX prints it and the StableHLO of the same trace, sent for public
and custom-case signatures only, before the tracer learns anything hidden). It is a claim of a process
user code controls, so it is only ever shown back to that learner, escaped; nothing is decided from it.
Marks name the lines where a loop, a custom call, a host callback or a dtype conversion appears. The marks
of a text are remembered in this process by its digest (a learner who runs the same code again sends the
same text), so a text is scanned once.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from typing import Literal

from judge.core.memo import BoundedMemo

MarkKind = Literal["loop", "custom_call", "host_callback", "convert"]

#: Primitives of ``jax.lax.linalg`` that lower to a LAPACK custom call on CPU (``lapack_spotrf_ffi``...).
#: Not ``custom_jvp_call`` or ``custom_vjp_call``: those are custom derivatives (``jax.nn.relu`` has one)
#: and lower to plain StableHLO, no custom call.
_LAPACK = (
    "cholesky|eigh|eig|lu|qr|svd|schur|hessenberg|tridiagonal|tridiagonal_solve|triangular_solve"
    "|geqrf|geqp3|householder_product"
)

#: (kind, pattern) per dialect, tried in order; the first that matches names the line.
_JAXPR: tuple[tuple[MarkKind, re.Pattern[str]], ...] = (
    (
        "host_callback",
        re.compile(r"\b(pure_callback|io_callback|debug_callback|debug_print|callback)\["),
    ),
    # ``ffi_call[``, or an equation of a LAPACK primitive: ``b:f32[3,3] = cholesky a`` (no parameters, no
    # bracket) or ``c:f32[3] b:f32[3,3] = eigh[`` (not ``name=cholesky`` inside a ``jit[...]``).
    ("custom_call", re.compile(rf"\bffi_call\[|= (?:{_LAPACK})(?:\[|\s|$)")),
    ("loop", re.compile(r"\b(while|scan)\[")),
    ("convert", re.compile(r"\bconvert_element_type\[")),
)
_STABLEHLO: tuple[tuple[MarkKind, re.Pattern[str]], ...] = (
    ("host_callback", re.compile(r"stablehlo\.custom_call\s+@\w*callback\w*")),
    ("custom_call", re.compile(r"stablehlo\.custom_call\b")),
    ("loop", re.compile(r"stablehlo\.while\b")),
    ("convert", re.compile(r"stablehlo\.convert\b")),
)


@dataclass(frozen=True)
class Mark:
    #: 1-based line of the text.
    line: int
    kind: MarkKind


#: Marks by (dialect, digest of the text).
_MARKS: BoundedMemo[tuple[str, str], tuple[Mark, ...]] = BoundedMemo(1024)


def marks(text: str, dialect: Literal["jaxpr", "stablehlo"]) -> list[Mark]:
    """The marked lines of a program text, in order (one mark per line: the first kind that matches)."""
    key = (dialect, hashlib.sha256(text.encode(errors="surrogatepass")).hexdigest())
    return list(_MARKS.get_or_make(key, lambda: tuple(_scan(text, dialect))))


def _scan(text: str, dialect: Literal["jaxpr", "stablehlo"]) -> list[Mark]:
    patterns = _JAXPR if dialect == "jaxpr" else _STABLEHLO
    found: list[Mark] = []
    for number, line in enumerate(text.splitlines(), start=1):
        for kind, pattern in patterns:
            if pattern.search(line):
                found.append(Mark(number, kind))
                break
    return found
