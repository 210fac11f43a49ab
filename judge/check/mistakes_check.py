"""Check ``mistakes``: every known mistake carries a teaching note, and which ones the examples tell apart.

A file under ``solutions/wrong_answer/`` is a mistake learners make; the judge names it to a learner whose
output matches its output (``judge.feedback.mistakes``), so it must start with a teaching note
(``judge.feedback.notes``): an error without one. The check then runs every such solution on the public
cases on the trusted side, as the judge will, and reports how many pairs of known mistakes give the same
output on every public example (a learner who makes either is told "it looks like one of these"), and
how many give the reference's output on every example (they can only be named on a hidden case). An
author who wants them named apart adds an example that separates them.
"""

from __future__ import annotations

from judge.check.context import CheckContext
from judge.core.expected import expected_gradients, expected_magnitudes, expected_outputs
from judge.feedback.matching import indistinguishable_pairs
from judge.feedback.mistakes import FOLDER, MistakeFinder, known_mistakes, mistake_output, same_as
from judge.feedback.notes import NoteError, parse_note

NAME = "mistakes"


def check(ctx: CheckContext) -> None:
    problem = ctx.loaded
    for folder, path in problem.solutions():
        if folder != FOLDER:
            continue
        try:
            parse_note(path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError) as exc:
            ctx.diag.error(f"cannot read the file: {exc}", file=path)
        except NoteError as exc:
            ctx.diag.error(f"no teaching note: {exc}", file=path, at="line 1")
    mistakes = known_mistakes(problem)
    public = list(problem.public_cases)
    if not mistakes or not public:
        return
    expected = expected_outputs(problem, public)
    finder = MistakeFinder(
        problem, public, expected, expected_gradients(problem, public), expected_magnitudes(problem, public)
    )
    distinct = [False] * len(mistakes)
    for i in range(len(public)):
        by_note = {c.mistake: c for c in finder.candidates(i, mistakes)}
        for m, mistake in enumerate(mistakes):
            candidate = by_note.get(mistake.note)
            distinct[m] |= candidate is not None and candidate.differing_leaves > 0
    named = [m for m in range(len(mistakes)) if distinct[m]]
    outputs = [[mistake_output(problem, mistakes[m], case) for case in public] for m in named]
    pairs = indistinguishable_pairs([mistakes[m].path.stem for m in named], outputs, same_as(problem))
    quiet = len(mistakes) - len(named)
    ctx.diag.note(
        f"{len(named)} of {len(mistakes)} known mistakes differ from the reference on a public example; "
        f"{len(pairs)} pairs of them the examples cannot tell apart"
        + (
            ": " + ", ".join(f"{a} = {b}" for a, b in pairs[:8]) + (" ..." if len(pairs) > 8 else "")
            if pairs
            else ""
        )
        + (f"; {quiet} are only named on hidden cases" if quiet else "")
    )
