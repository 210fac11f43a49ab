"""Printed output per case: the section marks (``sandbox.shared.output_mark``), their split by the monitor and
``judge.feedback.printed`` end to end in the sandbox (Run and Submit), and what is never shown."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest

from judge.core.grader import grade
from judge.core.problems import Problem, ProblemSet
from judge.core.results import GradeResult, OutputSection
from sandbox.host.resource_limits import SandboxLimits
from sandbox.session.pool import GradingPool
from sandbox.shared.output_mark import SectionSplitter, new_mark, section_mark
from tests.conftest import FIXTURE_SLUG, FIXTURES, default_backend

#: Tracer slots of this module's pool (the page's tests own 1660..1699).
SLOT_BASE = 1660

PROBLEM = ProblemSet(FIXTURES).get(FIXTURE_SLUG)

PRINTS = """\
import jax

print("loading")


def scale_tree(tree, factor):
    print("tracing", type(tree).__name__)
    jax.debug.print("first {f}", f=factor)
    jax.debug.print("second {f}", f=factor * 2)
    return jax.tree.map(lambda leaf: leaf * factor, tree)
"""
ORDERED = PRINTS.replace("f=factor)", "f=factor, ordered=True)").replace("* 2)", "* 2, ordered=True)")


def test_the_splitter_finds_marks_cut_anywhere_and_leaves_lookalikes_as_text() -> None:
    token = "0123abcd"
    end = new_mark()
    stream = (
        b"a\x00b"
        + section_mark(token, "load")
        + b"L\n"
        + section_mark("otherone", "run 1")  # another session's token: text
        + section_mark(token, "trace 0")
        + b"T"
        + end
        + section_mark(token, "run 0")
        + b"\x00[judge: output of "
    )
    for size in (1, 3, 16, len(stream)):
        splitter = SectionSplitter(token)
        pieces: list[bytes | str] = []
        for at in range(0, len(stream), size):
            pieces += splitter.feed(stream[at : at + size])
        tail = splitter.flush()
        labels = [p for p in pieces if isinstance(p, str)]
        text = b"".join(p for p in pieces if isinstance(p, bytes)) + tail
        assert labels == ["load", "trace 0", "run 0"], size
        assert (
            text == b"a\x00bL\n" + section_mark("otherone", "run 1") + b"T" + end + b"\x00[judge: output of "
        )


def test_the_splitter_never_holds_back_the_end_mark() -> None:
    """The judge waits for the end mark before it sends anything hidden: every byte of it must come out of
    the splitter as soon as it is read, whatever came before."""
    end = new_mark()
    for before in (b"", b"text", b"\x01[judge: out"):
        splitter = SectionSplitter("0123abcd")
        pieces = splitter.feed(before) + splitter.feed(end)
        assert b"".join(p for p in pieces if isinstance(p, bytes)).endswith(end)


@pytest.fixture(scope="module")
def graded() -> Iterator[Callable[..., GradeResult]]:
    backend = default_backend()
    pool = GradingPool(backend, SandboxLimits(), size=1, slot_base=SLOT_BASE, slots=16)

    def run(problem: Problem, code: str, **options: Any) -> GradeResult:
        return grade(problem, code, lambda limits: pool.acquire(180, limits), **options)

    try:
        yield run
    finally:
        pool.close()
        backend.close()


def _kinds(sections: list[OutputSection]) -> list[tuple[str, list[str]]]:
    return [(s.kind, s.cases) for s in sections]


def test_run_output_comes_per_case_in_the_order_printed(graded: Callable[..., GradeResult]) -> None:
    result = graded(PROBLEM, PRINTS, cases=PROBLEM.public_cases)
    sections = result.output
    kinds = _kinds(sections)
    assert kinds[0] == ("load", [])
    assert sections[0].text == "loading\n"
    traces = [s for s in sections if s.kind == "trace"]
    runs = [s for s in sections if s.kind == "run"]
    assert [s.cases for s in runs] == [["example_1"], ["example_2"]]
    assert all(s.text.startswith("tracing ") for s in traces)
    # The state check traces the last case's signature again: its prints come under their own heading.
    assert kinds[-1] == ("retrace", ["example_2"]) and sections[-1].text.startswith("tracing ")
    assert sorted(c for s in traces for c in s.cases) == ["example_1", "example_2"]
    for section in runs:
        assert sorted(line.split()[0] for line in section.text.splitlines()) == ["first", "second"]
        assert section.unordered  # two debug prints, neither ordered=True
        assert section.cut_bytes == 0
    # Nothing is lost or added: the sections are the whole output, in order.
    assert "".join(s.text for s in sections) == result.stdout


def test_ordered_debug_prints_carry_no_note(graded: Callable[..., GradeResult]) -> None:
    result = graded(PROBLEM, ORDERED, cases=PROBLEM.public_cases)
    runs = [s for s in result.output if s.kind == "run"]
    assert len(runs) == 2 and not any(s.unordered for s in runs)
    assert [line.split()[0] for line in runs[0].text.splitlines()] == ["first", "second"]


def test_submit_shows_public_sections_only(graded: Callable[..., GradeResult]) -> None:
    result = graded(PROBLEM, PRINTS)
    public = {c.name for c in PROBLEM.public_cases}
    assert result.output, "the public prints are shown"
    for section in result.output:
        assert set(section.cases) <= public, section  # no hidden case is named, nothing of one shown
    assert "".join(s.text for s in result.output) + "\n[" in result.stdout + "\n["
    assert not any(s.kind == "other" for s in result.output)


def test_output_past_the_limit_is_counted_in_its_section(graded: Callable[..., GradeResult]) -> None:
    flood = PRINTS.replace('print("loading")', 'print("x" * 100_000)')
    result = graded(PROBLEM, flood, cases=PROBLEM.public_cases)
    load = result.output[0]
    assert load.kind == "load"
    limit = PROBLEM.spec.limits.output_bytes
    assert len(load.text) == limit
    assert load.cut_bytes == 100_001 - limit
    assert all(s.text == "" and s.cut_bytes > 0 for s in result.output[1:])
