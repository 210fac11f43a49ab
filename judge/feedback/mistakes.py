"""Known mistakes' outputs: every shipped wrong solution run under ``jax.jit`` on the trusted side, cached.

The files under ``problems/<slug>/solutions/wrong_answer/`` are repository code, like the reference, so they
run in the judge's own process (``judge.core.expected``'s JAX, flags and lock) and never enter a sandbox.
Their outputs are cached per (solution source, case inputs, JAX version, XLA flags) as wire-encoded trees,
never pickle; a solution that raises on a case is remembered as failed there and names nothing on it.

``MistakeFinder`` is what the grader asks, for a case whose output is wrong, which known mistake that output
looks like (``judge.feedback.matching``). Outputs are computed only when asked, so an accepted submission
pays nothing; a file without a valid teaching note (which ``judge check`` reports) is left out. An answer
depends only on the case's candidates and the learner's output, so it is remembered in this process by both
(a Run again, or the Submit after it, with the same output pays two digests); the known mistakes are read
once per grading, and each case's output keys once.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from judge.core import expected as _expected
from judge.core import trusted_jax
from judge.core.compare import Checker, bind
from judge.core.errors import ReferenceFailure
from judge.core.gradients import accepts_with_gradient, gradient_checker
from judge.core.memo import BoundedMemo
from judge.core.problems import Case, Problem
from judge.feedback.matching import Candidate, Match, best_match, differing_leaves
from judge.feedback.notes import MistakeNote, NoteError, parse_note
from sandbox.host.command import FAST_COMPILE_XLA_FLAGS
from sandbox.shared.wire import ProtocolError, dumps_tree, loads_tree

FOLDER = "wrong_answer"
_FAILED = b"failed\n"
#: Outputs read or computed in this process, by ``output_key`` (None: failed there).
_MEMORY: BoundedMemo[str, Any] = BoundedMemo(4096)
#: Candidates per case (``MistakeFinder.candidates``), by ``_candidates_key``.
_CANDIDATES: BoundedMemo[str, list[Candidate]] = BoundedMemo(1024)
#: Answers (``MistakeFinder.match``) by (``_candidates_key``, digest of the learner's output).
_MATCHES: BoundedMemo[tuple[str, str], Match | None] = BoundedMemo(4096)
_JITTED: dict[tuple[str, str, str], Callable[..., Any]] = {}
_JITTED_LOCK = threading.Lock()


@dataclass(frozen=True)
class KnownMistake:
    """One shipped wrong solution and its teaching note."""

    path: Path
    source: str
    note: MistakeNote


def known_mistakes(problem: Problem) -> tuple[KnownMistake, ...]:
    """The problem's wrong solutions that carry a valid teaching note, in file order."""
    found: list[KnownMistake] = []
    for folder, path in problem.solutions():
        if folder != FOLDER:
            continue
        with contextlib.suppress(OSError, UnicodeDecodeError, NoteError):
            source = path.read_text(encoding="utf-8")
            found.append(KnownMistake(path, source, parse_note(source)))
    return tuple(found)


def output_key(problem: Problem, mistake: KnownMistake, case: Case) -> str:
    """The cache key of ``mistake``'s output on ``case``: what that output depends on (the solution's
    source, the case, the problem's function, menu and gradient, the JAX version and XLA flags). Also what
    the known mistakes' cost figures (``judge.feedback.known_costs``) are keyed by."""
    digest = hashlib.sha256()
    gradient = problem.spec.gradient
    parts = [
        "mistake",
        _expected._jax_version(),
        os.environ.get("XLA_FLAGS", FAST_COMPILE_XLA_FLAGS),
        problem.spec.function,
        mistake.source,
        case.dtype,
        case.args_json,
        problem.menu_source or "",
        gradient.model_dump_json() if gradient is not None else "",
        _expected._transforms_source() if gradient is not None else "",
    ]
    for part in parts:
        digest.update(part.encode())
        digest.update(b"\0")
    return digest.hexdigest()[:32]


def jitted_mistake(problem: Problem, mistake: KnownMistake) -> Callable[..., Any]:
    """The wrong solution's function (with its gradient, on a ``[gradient]`` problem) under one jit, made
    once per (file, source, gradient spec) in this process: what its outputs come from, and what
    ``judge.feedback.known_costs`` lowers and compiles to measure its cost. Raises ReferenceFailure when
    the file does not define the problem's function."""
    trusted_jax.import_jax()  # the XLA flags are set before the code imports JAX
    key = (
        str(mistake.path),
        mistake.source,
        problem.spec.gradient.model_dump_json() if problem.spec.gradient else "",
    )
    with _JITTED_LOCK:
        if key in _JITTED:
            return _JITTED[key]
    module = trusted_jax.import_file(str(mistake.path), mistake.source)
    fn = getattr(module, problem.spec.function, None)
    if not callable(fn):
        raise ReferenceFailure(f"{mistake.path} does not define `{problem.spec.function}`")
    jitted = _expected.jit_with_gradient(problem, fn)
    with _JITTED_LOCK:
        _JITTED[key] = jitted
    return jitted


def _run(problem: Problem, mistake: KnownMistake, case: Case) -> Any | None:
    """The wrong solution's output on ``case`` (host tree), or None when it fails there."""
    jax = trusted_jax.import_jax()
    try:
        fn = jitted_mistake(problem, mistake)
        menu = problem.menu()
        args = _expected.call_arguments(jax, problem, case, menu)
        return trusted_jax.to_host(jax.block_until_ready(fn(*args)))
    except Exception:  # a known mistake that cannot run here names nothing on this case
        return None


def mistake_output(problem: Problem, mistake: KnownMistake, case: Case, key: str | None = None) -> Any | None:
    """``mistake``'s output on ``case``, from the cache or computed and cached; None where it failed.
    ``key``: its ``output_key``, when the caller has it already."""
    key = output_key(problem, mistake, case) if key is None else key
    return _MEMORY.get_or_make(key, lambda: _read_or_run(problem, mistake, case, key))


def _read_or_run(problem: Problem, mistake: KnownMistake, case: Case, key: str) -> Any | None:
    """``mistake``'s output on ``case`` from the disk cache, or computed and written there."""
    file = _expected.cache_dir().parent / "mistakes" / problem.slug / f"{key}.frame"
    with contextlib.suppress(OSError, ValueError, ProtocolError):
        data = file.read_bytes()
        return None if data == _FAILED else loads_tree(data)
    with _expected.JAX_LOCK:
        output = _run(problem, mistake, case)
    with contextlib.suppress(OSError, ValueError, ProtocolError):
        file.parent.mkdir(parents=True, exist_ok=True)
        tmp = file.with_suffix(f".{os.getpid()}.{threading.get_ident()}.tmp")
        tmp.write_bytes(_FAILED if output is None else dumps_tree(output))
        tmp.replace(file)
    return output


def same_as(problem: Problem, scale: Any = None) -> Callable[[Any, Any], bool]:
    """``same(mistake_output, got)``: the problem's own comparison accepts ``got`` against the mistake's
    output (and, on a ``[gradient]`` problem, its gradient), with the case's magnitudes ``scale``
    (``judge.core.expected.expected_magnitudes``; None: the plain bound), as the grader compares."""
    checker = bind(problem.spec.compare, problem.spec.output)
    if problem.spec.gradient is None:
        return lambda reference, got: checker.accepts(reference, got, scale)
    return lambda reference, got: accepts_with_gradient(checker, reference[0], reference[1], got, scale)


def _leaf_same(problem: Problem) -> Callable[[Any, Any], bool]:
    checker: Checker = gradient_checker(bind(problem.spec.compare, problem.spec.output))
    return checker.accepts


@dataclass
class MistakeFinder:
    """For the grader: which known mistake a wrong output on case ``i`` looks like (None: none). One per
    grading: the known mistakes are read on the first question, each case's keys made once."""

    problem: Problem
    cases: Sequence[Case]
    #: The reference's output per case (and gradient, on a ``[gradient]`` problem): what a mistake must
    #: differ from to name anything.
    expected: Sequence[Any]
    gradients: Sequence[Any] | None = None
    #: The magnitudes of the reference's output per case (``judge.core.expected.expected_magnitudes``), or
    #: None: "right" and "the same as a mistake" are decided with the bound the grader uses.
    scales: Sequence[Any] | None = None
    _known: tuple[KnownMistake, ...] | None = field(default=None, init=False)
    #: ``output_key`` of each known mistake, per case.
    _output_keys: dict[int, tuple[str, ...]] = field(default_factory=dict, init=False)
    #: ``_candidates_key`` per case (None: nothing remembered by it).
    _by_case: dict[int, str | None] = field(default_factory=dict, init=False)
    _candidates: dict[int, list[Candidate]] = field(default_factory=dict, init=False)
    _matches: dict[tuple[int, str], Match | None] = field(default_factory=dict, init=False)

    def __call__(self, i: int, got: Any) -> Match | None:
        """``match``, remembered per case and output in this grading (the grader asks again for the same
        run as it streams) and by the case's candidates and the output in this process (the same output
        run again, or submitted after a Run, gets the same answer)."""
        try:
            digest = hashlib.sha256(dumps_tree(got)).hexdigest()
        except (ProtocolError, TypeError, ValueError):  # not a tree of arrays: not worth remembering
            return self.match(i, got)
        if (i, digest) not in self._matches:
            self._matches[(i, digest)] = self._remembered(i, got, digest)
        return self._matches[(i, digest)]

    def _remembered(self, i: int, got: Any, digest: str) -> Match | None:
        if not self.known() or self._reference(i) is None:  # nothing to look up: nothing to remember
            return self.match(i, got)
        by = self._candidates_key(i)
        if by is None:
            return self.match(i, got)
        return _MATCHES.get_or_make((by, digest), lambda: self.match(i, got))

    def match(self, i: int, got: Any) -> Match | None:
        """The known mistake ``got`` (a wrong output on case i) looks like, looked up afresh: None when the
        problem has none, when the reference failed on the case or when ``got`` is right."""
        mistakes = self.known()
        if not mistakes:
            return None
        same = same_as(self.problem, self._scale(i))
        reference = self._reference(i)
        if reference is None or same(reference, got):  # the reference's output is right, whatever else
            return None
        return best_match(self.candidates(i, mistakes), got, same)

    def known(self) -> tuple[KnownMistake, ...]:
        """The problem's known mistakes (``known_mistakes_cached``), read once per finder."""
        if self._known is None:
            self._known = known_mistakes_cached(self.problem)
        return self._known

    def _reference(self, i: int) -> Any | None:
        """The reference's result on case i as a program returns it (with its gradient), or None."""
        reference = self.expected[i]
        if isinstance(reference, ReferenceFailure):
            return None
        if self.gradients is None:
            return reference
        gradient = self.gradients[i]
        return None if isinstance(gradient, ReferenceFailure) else (reference, gradient)

    def _scale(self, i: int) -> Any:
        """The magnitudes of case i's output, or None (none declared, or the magnitude function failed)."""
        scale = self.scales[i] if self.scales is not None else None
        return None if isinstance(scale, ReferenceFailure) else scale

    def _keys(self, i: int) -> tuple[str, ...]:
        """``output_key`` of each known mistake on case i, made once per case."""
        if i not in self._output_keys:
            case = self.cases[i]
            self._output_keys[i] = tuple(output_key(self.problem, m, case) for m in self.known())
        return self._output_keys[i]

    def _candidates_key(self, i: int) -> str | None:
        """``_candidates_key`` of case i and the known mistakes, made once per case."""
        if i not in self._by_case:
            self._by_case[i] = _candidates_key(
                self.problem, self._keys(i), self._reference(i), self._scale(i) is not None
            )
        return self._by_case[i]

    def candidates(self, i: int, mistakes: Sequence[KnownMistake]) -> list[Candidate]:
        """Each mistake's output on case i and how far it is from the reference's; the same for every
        learner, so remembered in this process across gradings (by what it depends on)."""
        if i in self._candidates:
            return self._candidates[i]
        reference = self._reference(i)
        if tuple(mistakes) == self.known():
            keys, key = self._keys(i), self._candidates_key(i)
        else:
            keys = tuple(output_key(self.problem, m, self.cases[i]) for m in mistakes)
            key = _candidates_key(self.problem, keys, reference, self._scale(i) is not None)
        remembered = _CANDIDATES.get(key, None) if key is not None else None
        if remembered is not None:
            self._candidates[i] = remembered
            return remembered
        found: list[Candidate] = []
        if reference is not None:
            leaf_same, same = _leaf_same(self.problem), same_as(self.problem, self._scale(i))
            for mistake, output_at in zip(mistakes, keys, strict=True):
                output = mistake_output(self.problem, mistake, self.cases[i], output_at)
                if output is None:
                    continue
                # A mistake whose output the problem accepts here is right on this case: it names nothing.
                right = _safely(same, reference, output)
                count = 0 if right else max(1, differing_leaves(reference, output, leaf_same))
                found.append(Candidate(mistake.note, output, count))
        self._candidates[i] = found
        if key is not None:
            _CANDIDATES.put(key, found)
        return found


def _candidates_key(
    problem: Problem, output_keys: Sequence[str], reference: Any, scaled: bool = False
) -> str | None:
    """What a case's candidates depend on: each mistake's output key on it (``output_key``), the
    reference's output and the problem's comparison, with or without the case's magnitudes (``scaled``:
    which outputs are right depends on it); None when the reference's output cannot be encoded (then
    nothing is remembered)."""
    try:
        encoded = dumps_tree(reference)
    except (ProtocolError, TypeError, ValueError):
        return None
    digest = hashlib.sha256(encoded)
    digest.update(b"scaled" if scaled else b"plain")
    digest.update(problem.spec.compare.model_dump_json().encode())
    digest.update(problem.spec.output.model_dump_json().encode())
    for key in output_keys:
        digest.update(key.encode())
    return digest.hexdigest()


def _safely(same: Callable[[Any, Any], bool], a: Any, b: Any) -> bool:
    try:
        return same(a, b)
    except Exception:  # not comparable: not the same
        return False


_KNOWN: dict[str, tuple[tuple[tuple[str, int, int], ...], tuple[KnownMistake, ...]]] = {}


def known_mistakes_cached(problem: Problem) -> tuple[KnownMistake, ...]:
    """``known_mistakes``, read again only when a file of the folder changed (by name, size and mtime)."""
    folder = problem.root / "solutions" / FOLDER
    try:
        stamp = tuple(sorted((p.name, p.stat().st_mtime_ns, p.stat().st_size) for p in folder.glob("*.py")))
    except OSError:
        return ()
    seen = _KNOWN.get(str(problem.root))
    if seen is not None and seen[0] == stamp:
        return seen[1]
    mistakes = known_mistakes(problem)
    _KNOWN[str(problem.root)] = (stamp, mistakes)
    return mistakes
