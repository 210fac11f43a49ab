"""What the judge can say about a compile that ended the executor process: XLA's own reason, read from the
executor's output, and whether the program's size is a plausible cause.

XLA's CPU compiler can abort on a program that is neither large nor wrong (jax 0.10.2: an empty slice of a
concatenation, which ``jax.flatten_util.ravel_pytree`` makes when an empty leaf is not a tree's first,
throws ``std::length_error`` inside XLA and the process gets SIGABRT). Blaming the program's size there
misleads; so the judge quotes what XLA said, and names the size only when the program is large.

The executor runs no user code, so its output is XLA's (and the C++ runtime's). The reason's *kind* (a C++
exception type, the source line of a failed check, "an LLVM error") comes from XLA's code and is safe to show
on a hidden case; its *detail* (``what()``, the check's text) may print the program's shapes, so it is shown
on public cases only, escaped and bounded.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

#: A program of at least this many bytes (MLIR bytecode of its StableHLO module, as the tracer sends it) is
#: large. Measured with jax 0.10.2: the catalog's references and accepted solutions lower to 2-8 KiB (an
#: attention batch of (8, 64, 64), a second-order hvp on a 7-leaf tree, a scan over 254 steps), while a
#: Python loop over 254 steps of a (4, 4) state unrolls to 40 KiB (28 KiB with scan's unroll=True), and
#: compiles for over a minute on a busy 2-core host.
LARGE_PROGRAM_BYTES = 16 * 1024
#: The most characters of XLA's own words a message quotes.
MAX_DETAIL_CHARS = 300

_TERMINATE = re.compile(
    r"terminate called after throwing an instance of '([^'\n]{1,200})'"
    r"(?:[ \t]*\n[ \t]*what\(\):[ \t]*([^\n]*))?"
)
#: absl's fatal log line: ``F1206 07:01:02.123456   12345 some/file.cc:123] Check failed: ...``.
_FATAL = re.compile(r"^F\d{4} [\d:.]+ +\d+ ([\w./+-]{1,200}:\d{1,7})\] ?([^\n]*)", re.MULTILINE)
_LLVM = re.compile(r"LLVM ERROR: ([^\n]*)")
#: A C++ type name as the runtime prints it (``std::length_error``, ``absl::lts_2024::BadStatusOrAccess``).
_TYPE_NAME = re.compile(r"[A-Za-z_][\w:]{0,99}")
_OUTPUT_PREFIX = "executor output: "


@dataclass(frozen=True)
class XlaReason:
    """Why XLA ended the process. ``kind`` names it in XLA's terms and may be shown on any case; ``detail``
    is XLA's own text, escaped and bounded, for public cases only ("" when there is none)."""

    kind: str
    detail: str = ""

    def said(self, *, hidden: bool) -> str:
        """``kind: detail``, or the kind alone (with a note) on a hidden case."""
        if not self.detail:
            return self.kind
        if hidden:
            return f"{self.kind} (details are not shown for hidden cases)"
        return f"{self.kind}: {self.detail}"


def xla_reason(notes: Sequence[str]) -> XlaReason | None:
    """XLA's reason for ending the process, from the executor's output among a stop's ``notes``; None when
    it gave none the judge recognises (a signal alone, a stack overflow)."""
    text = "\n".join(n[len(_OUTPUT_PREFIX) :] for n in notes if n.startswith(_OUTPUT_PREFIX))
    if not text:
        return None
    match = _TERMINATE.search(text)
    if match is not None:
        name = match.group(1)
        kind = name if _TYPE_NAME.fullmatch(name) else "a C++ exception"
        return XlaReason(kind, escaped(match.group(2) or ""))
    match = _FATAL.search(text)
    if match is not None:
        return XlaReason(f"a failed check at {match.group(1)}", escaped(match.group(2)))
    match = _LLVM.search(text)
    if match is not None:
        return XlaReason("an LLVM error", escaped(match.group(1)))
    return None


def escaped(text: str, limit: int = MAX_DETAIL_CHARS) -> str:
    """``text`` on one line, control and other unprintable characters escaped (``\\x1b``), backticks and
    quotes left as they are, and at most ``limit`` characters (cut with "...")."""
    out: list[str] = []
    for ch in " ".join(text.split()):
        out.append(ch if ch.isprintable() else ascii(ch)[1:-1])
    flat = "".join(out)
    return flat if len(flat) <= limit else flat[: limit - 3].rstrip() + "..."


def is_large(program_bytes: int | None) -> bool | None:
    """Whether a program of ``program_bytes`` is large (None: its size is not known)."""
    return None if program_bytes is None else program_bytes >= LARGE_PROGRAM_BYTES


#: What to do about a large program (``LARGE_PROGRAM_BYTES``).
_LOOP_ADVICE = (
    "a Python loop is unrolled into one copy of its body per iteration (and a jitted helper called in a "
    "loop into one copy per call). Use jax.lax.fori_loop or jax.lax.scan for loops, and jax.vmap instead of "
    "looping over array elements"
)
#: Why a compile takes too long or too much when the program's size is not known, and what to do instead.
_UNKNOWN_SIZE_ADVICE = f"This usually means the traced program is very large: {_LOOP_ADVICE}"
#: The same when the program is known to be large.
_LARGE_ADVICE = (
    f"The program is large (over {LARGE_PROGRAM_BYTES // 1024} KiB of StableHLO), which usually means "
    f"{_LOOP_ADVICE}"
)


def size_advice(program_bytes: int | None) -> str:
    """The advice (with a leading space) for a compile that ran out of time or memory: about the program's
    size when it is large or not known, none for a program known to be small."""
    large = is_large(program_bytes)
    return {True: f" {_LARGE_ADVICE}", None: f" {_UNKNOWN_SIZE_ADVICE}", False: ""}[large]


def compile_crash(notes: Sequence[str], what: str, program_bytes: int | None, *, hidden: bool) -> str:
    """The message of a compile that ended the executor (``what``: the signal or exit code): XLA's own
    reason read from the executor's output ``notes`` (its kind alone on a hidden case), and the size advice
    only for a program known to be large."""
    reason = xla_reason(notes)
    if reason is None:
        text = f"XLA failed to compile the program: its compiler crashed ({what}) without saying why"
    else:
        text = (
            f"XLA failed to compile the program: its compiler ended the process ({what}) with "
            f"{reason.said(hidden=hidden)}. This is an error inside XLA, not one your code raised; "
            "the same computation written another way may compile"
        )
    return f"{text}.{f' {_LARGE_ADVICE}' if is_large(program_bytes) else ''}"
