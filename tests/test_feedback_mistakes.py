"""Naming the known mistake (issue 25, point 1): teaching notes, the pure matcher, the trusted outputs of the
shipped wrong solutions over every problem, ``judge check``'s ``mistakes`` check, and end to end in the
sandbox (a public case names the mistake with its note; a hidden case names it without any value)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from judge.core.expected import expected_gradients, expected_outputs
from judge.core.grader import ProcessesSource, grade
from judge.core.problems import Problem, ProblemSet, default_problems_dir
from judge.core.results import GradeResult
from judge.core.verdicts import Verdict
from judge.feedback.matching import Candidate, best_match, differing_leaves, indistinguishable_pairs
from judge.feedback.mistakes import KnownMistake, MistakeFinder, known_mistakes, mistake_output
from judge.feedback.notes import MistakeNote, NoteError, parse_note
from tests.conftest import FIXTURE_SLUG, FIXTURES
from tests.program_pool import default_pool, pool_source

#: Tracer slots of this module's pool (the feedback tests' range is 1400-1499).
SLOT_BASE = 1400

REPO = ProblemSet(default_problems_dir())
SLUGS = [p.slug for p in REPO]
WRONG_FILES = sorted(Path(default_problems_dir()).glob("*/solutions/wrong_answer/*.py"))


# ---------------------------------------------------------------------------------------- notes


def test_a_note_is_read_from_the_docstring() -> None:
    source = (
        '"""Mistake: No bias correction\n\nUses the raw moments.\nDivide by 1 - b ** t first.\n"""\nx = 1\n'
    )
    assert parse_note(source) == MistakeNote(
        "No bias correction", "Uses the raw moments. Divide by 1 - b ** t first."
    )


@pytest.mark.parametrize(
    ("source", "says"),
    [
        ("# Wrong: a comment, not a docstring.\nx = 1\n", "must start with a docstring"),
        ('"""Forgets the bias correction.\n\nA note.\n"""\n', "first line must be `Mistake:"),
        ('"""Mistake:\n\nA note.\n"""\n', "names no mistake"),
        ('"""Mistake: Name\n"""\n', "no teaching note"),
        ('"""Mistake: Name\nA note right below.\n"""\n', "blank line"),
        ('"""Mistake: Name\n\nOne. Two. Three. Four. Five.\n"""\n', "5 sentences"),
        ('"""Mistake: ' + "x" * 81 + '\n\nA note.\n"""\n', "more than 80"),
        ("def f(:\n", "does not parse"),
        ("", "must start with a docstring"),
    ],
)
def test_a_bad_note_says_what_is_wrong(source: str, says: str) -> None:
    with pytest.raises(NoteError) as caught:
        parse_note(source)
    assert says in str(caught.value)


@pytest.mark.parametrize("path", WRONG_FILES, ids=[f"{p.parts[-4]}/{p.stem}" for p in WRONG_FILES])
def test_every_shipped_wrong_solution_has_a_note(path: Path) -> None:
    note = parse_note(path.read_text(encoding="utf-8"))
    assert note.name and note.note


# ---------------------------------------------------------------------------------------- matching


def _same(a: Any, b: Any) -> bool:
    return bool(np.allclose(np.asarray(a), np.asarray(b), rtol=1e-5, atol=1e-6))


def _note(name: str) -> MistakeNote:
    return MistakeNote(name, f"note of {name}")


def test_the_most_specific_match_wins_and_the_others_are_counted() -> None:
    got = np.array([1.0, 2.0])
    candidates = [
        Candidate(_note("broad"), np.array([1.0, 2.0]), differing_leaves=3),
        Candidate(_note("narrow"), np.array([1.0, 2.0]), differing_leaves=1),
        Candidate(_note("elsewhere"), np.array([9.0, 2.0]), differing_leaves=1),
    ]
    match = best_match(candidates, got, _same)
    assert match is not None and match.mistake.name == "narrow" and match.others == 1


def test_a_mistake_that_gives_the_right_answer_names_nothing() -> None:
    right = Candidate(_note("right here"), np.array([1.0]), differing_leaves=0)
    assert best_match([right], np.array([1.0]), _same) is None


def test_a_comparison_that_raises_names_nothing() -> None:
    def boom(a: Any, b: Any) -> bool:
        raise ValueError("cannot compare")

    assert best_match([Candidate(_note("x"), 1.0, 1)], 1.0, boom) is None


def test_differing_leaves_counts_leaves_and_whole_trees_on_another_structure() -> None:
    ref = {"a": np.zeros(2), "b": [np.ones(1), np.ones(1)]}
    assert differing_leaves(ref, {"a": np.zeros(2), "b": [np.ones(1), np.zeros(1)]}, _same) == 1
    assert differing_leaves(ref, ref, _same) == 0
    assert differing_leaves(ref, {"a": np.zeros(2)}, _same) == 3
    assert differing_leaves(ref, ("a", object()), _same) == 3


def test_indistinguishable_pairs_are_those_equal_on_every_case() -> None:
    outputs: list[list[Any]] = [[1.0, 2.0], [1.0, 2.0], [1.0, 3.0], [None, 2.0]]
    assert indistinguishable_pairs(["a", "b", "c", "d"], outputs, _same) == [("a", "b")]


# ------------------------------------------------------------- the shipped mistakes, on every problem


def _as_solution(path: Path) -> KnownMistake:
    """Any solution file run by the trusted mistake runner (for accepted ones: a note for the test)."""
    return KnownMistake(path, path.read_text(encoding="utf-8"), MistakeNote(path.stem, "accepted"))


def _finder(problem: Problem, cases: list[Any]) -> MistakeFinder:
    expected = expected_outputs(problem, cases)
    return MistakeFinder(problem, cases, expected, expected_gradients(problem, cases))


@pytest.mark.slow
@pytest.mark.parametrize("slug", SLUGS)
def test_every_distinctive_mistake_is_named_on_the_public_cases(slug: str) -> None:
    """A learner whose output is a shipped mistake's, where that output is not the reference's, is told
    that mistake (or, when several mistakes give this output, one of them and that there are others)."""
    problem = REPO.get(slug)
    _needs_its_devices(problem)
    cases = list(problem.public_cases)
    finder = _finder(problem, cases)
    mistakes = known_mistakes(problem)
    assert mistakes, f"{slug} ships no wrong solution with a note"
    named = 0
    for i, case in enumerate(cases):
        by_note = {c.mistake: c for c in finder.candidates(i, mistakes)}
        for mistake in mistakes:
            candidate = by_note.get(mistake.note)
            if candidate is None or candidate.differing_leaves == 0:
                continue
            match = finder(i, candidate.output)
            assert match is not None, f"{mistake.path.stem} on {case.name} names nothing"
            assert match.mistake == mistake.note or match.others >= 1, (mistake.path.stem, match)
            named += 1
    assert named > 0, f"no mistake of {slug} is distinctive on a public case"


def _needs_its_devices(problem: Problem) -> None:
    """Known mistakes run in the judge's process, which starts JAX with enough CPU devices for a mesh
    problem (``judge.core.expected``); a test process whose JAX started first may have fewer."""
    import jax

    if jax.device_count() < problem.spec.sandbox.devices:
        pytest.skip(
            f"this process has {jax.device_count()} JAX devices, {problem.slug} needs "
            f"{problem.spec.sandbox.devices}"
        )


@pytest.mark.slow
@pytest.mark.parametrize("slug", SLUGS)
def test_an_accepted_solution_is_never_told_it_looks_like_a_mistake(slug: str) -> None:
    problem = REPO.get(slug)
    _needs_its_devices(problem)
    cases = list(problem.cases)
    finder = _finder(problem, cases)
    accepted = [path for folder, path in problem.solutions() if folder == "accepted"]
    for path in accepted:
        solution = _as_solution(path)
        for i, case in enumerate(cases):
            output = mistake_output(problem, solution, case)
            assert output is not None, f"{path.stem} failed on {case.name}"
            assert finder(i, output) is None, f"{path.stem} on {case.name} was named a mistake"


def _shifted(tree: Any) -> Any:
    """``tree`` with 1 added to every array leaf (an output no known mistake gives)."""
    if isinstance(tree, dict):
        return {k: _shifted(v) for k, v in tree.items()}
    if isinstance(tree, list | tuple):
        return type(tree)(_shifted(v) for v in tree)
    return np.asarray(tree) + np.asarray(1, dtype=np.asarray(tree).dtype)


def test_an_answer_is_remembered_across_gradings_by_the_cases_candidates_and_the_output(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The same output on the same case in a later grading (a Run again, the Submit after it) gets the
    answer the lookup gave without looking it up again; another output is looked up afresh."""
    from judge.feedback import mistakes as module

    problem = ProblemSet(FIXTURES).get(FIXTURE_SLUG)
    cases = list(problem.public_cases)
    (wrong,) = known_mistakes(problem)
    outputs = [mistake_output(problem, wrong, case) for case in cases]
    first = _finder(problem, cases)
    answers = [first(i, output) for i, output in enumerate(outputs)]
    assert any(a is not None and a.mistake == wrong.note for a in answers), answers
    assert answers == [first.match(i, output) for i, output in enumerate(outputs)]
    looked_up: list[int] = []
    lookup = best_match

    def counted(*args: Any) -> Any:
        looked_up.append(1)
        return lookup(*args)

    monkeypatch.setattr(module, "best_match", counted)
    again = _finder(problem, cases)
    assert [again(i, output) for i, output in enumerate(outputs)] == answers
    assert looked_up == []
    assert again(0, _shifted(outputs[0])) is None
    assert looked_up == [1]


def test_a_finder_reads_the_known_mistakes_once(monkeypatch: pytest.MonkeyPatch) -> None:
    from judge.feedback import mistakes as module

    problem = ProblemSet(FIXTURES).get(FIXTURE_SLUG)
    cases = list(problem.public_cases)
    reads: list[str] = []
    read = module.known_mistakes_cached

    def counted(problem: Problem) -> tuple[KnownMistake, ...]:
        reads.append(problem.slug)
        return read(problem)

    monkeypatch.setattr(module, "known_mistakes_cached", counted)
    finder = _finder(problem, cases)
    (wrong,) = known_mistakes(problem)
    for i, case in enumerate(cases):
        output = mistake_output(problem, wrong, case)
        finder.match(i, output)
        finder(i, _shifted(output))
    assert reads == [FIXTURE_SLUG]


# ------------------------------------------------------------------------------------ judge check


def test_judge_check_requires_a_note_and_counts_what_the_examples_cannot_tell_apart(
    tmp_path: Path,
) -> None:
    import shutil

    from judge.check.runner import run_checks

    root = tmp_path / "problems" / FIXTURE_SLUG
    shutil.copytree(FIXTURES / FIXTURE_SLUG, root)
    shutil.copytree(FIXTURES.parent / "reference", tmp_path / "reference")
    twin = root / "solutions" / "wrong_answer" / "adds_factor_again.py"
    twin.write_text((root / "solutions" / "wrong_answer" / "adds_factor.py").read_text())
    bare = root / "solutions" / "wrong_answer" / "no_note.py"
    bare.write_text("# Wrong: no docstring.\ndef scale_tree(tree, factor):\n    return tree\n")
    report = run_checks([root], backend=None)
    outcome = report.problems[0].check("mistakes")
    errors = [f for f in outcome.findings if f.severity.value == "error"]
    assert len(errors) == 1 and "no_note.py" in errors[0].location and "no teaching note" in errors[0].message
    (fact,) = outcome.notes
    assert "1 pairs of them the examples cannot tell apart: adds_factor = adds_factor_again" in fact


# --------------------------------------------------------------------------------- in the sandbox


@pytest.fixture(scope="module")
def source() -> Iterator[ProcessesSource]:
    """A one-pair warm pool of the default backend (tracer slots from ``SLOT_BASE``) as a pair source."""
    with default_pool(SLOT_BASE) as pool:
        yield pool_source(pool)


@pytest.fixture(scope="module")
def graded(source: ProcessesSource) -> Callable[[Problem, str], GradeResult]:
    return lambda problem, code: grade(problem, code, source)


@pytest.mark.slow
def test_a_submitted_mistake_is_named_with_its_note_and_hidden_cases_show_no_value(
    graded: Callable[[Problem, str], GradeResult],
) -> None:
    problem = ProblemSet(FIXTURES).get(FIXTURE_SLUG)
    wrong = FIXTURES / FIXTURE_SLUG / "solutions" / "wrong_answer" / "adds_factor.py"
    note = parse_note(wrong.read_text())
    result = graded(problem, wrong.read_text().replace(note.note, "a learner's own words"))
    assert result.verdict is Verdict.WRONG_ANSWER
    named = [c for c in result.cases if c.mistake is not None]
    assert named, result.model_dump_json(indent=1)
    for case in named:
        assert case.mistake is not None
        assert (case.mistake.name, case.mistake.note, case.mistake.others) == (note.name, note.note, 0)
    hidden = [c for c in result.cases if c.visibility == "hidden" and c.mistake is not None]
    assert hidden, "no hidden case named the mistake"
    for case in hidden:
        assert case.input is None and case.output is None and case.expected is None
        assert set(case.model_dump()["mistake"]) == {"name", "note", "others"}
    accepted = (FIXTURES / FIXTURE_SLUG / "solutions" / "accepted" / "tree_util_map.py").read_text()
    right = graded(problem, accepted)
    assert right.verdict is Verdict.ACCEPTED and all(c.mistake is None for c in right.cases)


@pytest.mark.slow
def test_a_mistake_is_named_on_a_custom_run_input(source: ProcessesSource) -> None:
    """A learner's own Run-panel input, on which the shipped mistake's output is its own (adding 3 gives
    [4, 5, 5.5] where multiplying by 3 gives [3, 6, 7.5]), names the mistake with its note; an accepted
    solution on the same input is named nothing."""
    problem = ProblemSet(FIXTURES).get(FIXTURE_SLUG)
    inputs = {"tree": {"w": [1.0, 2.0], "b": 2.5}, "factor": 3.0}
    wrong = FIXTURES / FIXTURE_SLUG / "solutions" / "wrong_answer" / "adds_factor.py"
    note = parse_note(wrong.read_text())
    code = wrong.read_text().replace(note.note, "a learner's own words")

    def run(source_code: str) -> GradeResult:
        return grade(problem, source_code, source, cases=(), custom=(problem.custom_case(inputs),))

    result = run(code)
    assert result.verdict is Verdict.WRONG_ANSWER, result.message
    (case,) = result.cases
    assert case.visibility == "custom" and case.verdict is Verdict.WRONG_ANSWER
    assert case.output is not None and case.expected is not None  # a custom case shows its values
    assert case.mistake is not None, result.model_dump_json(indent=1)
    assert (case.mistake.name, case.mistake.note, case.mistake.others) == (note.name, note.note, 0)
    accepted = (FIXTURES / FIXTURE_SLUG / "solutions" / "accepted" / "tree_util_map.py").read_text()
    right = run(accepted)
    assert right.verdict is Verdict.ACCEPTED, right.message
    assert [c.mistake for c in right.cases] == [None]
