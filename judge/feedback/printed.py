"""What a submission printed, split where it was printed: per case, in the order printed.

The tracer is the only process that runs user Python, and the only one whose output is shown. Before it
loads the code, before it traces each public signature, before it runs each public case for its
``jax.debug`` output and before it traces one signature again (the state check), it writes a section mark
into its output (``sandbox.shared.output_mark``); the monitor records where each mark stood in the stream
(``RawRun.sections``) and where the public output ends (the end mark, written before the tracer is given
anything hidden). This module turns that record into
``OutputSection``s: each one's text is the kept output between its mark and the next (never past the
public end: nothing printed once a hidden signature reached the tracer is shown, and the tracer never
holds a hidden value), with the bytes printed past the output limit counted. The executor prints
nothing (a compiled program has its debug calls stripped), so no shown output can come from a process
that held hidden values.

A mark is the tracer's claim and user code could forge one, which only mislabels its own public prints;
a label naming no shown case becomes ``other``.
"""

from __future__ import annotations

from collections.abc import Sequence

from judge.core.results import OutputKind, OutputSection, Visibility
from sandbox.session.monitor import RawRun, SessionJob


def printed_sections(raw: RawRun, job: SessionJob, visibility: Sequence[Visibility]) -> list[OutputSection]:
    """The public output as sections, in stream order; empty sections are left out."""
    public_end = raw.output_cut_stream if raw.output_cut_stream is not None else raw.output_total
    marks = list(raw.sections)
    if not marks or marks[0][0] > 0:
        marks.insert(0, (0, "other"))
    kept = len(raw.output)
    sections: list[OutputSection] = []
    for number, (start, label) in enumerate(marks):
        end = min(marks[number + 1][0] if number + 1 < len(marks) else raw.output_total, public_end)
        if end <= start:
            continue
        text = raw.output[min(start, kept) : min(end, kept)]
        kind, cases, unordered = _label(label, raw, job, visibility)
        sections.append(
            OutputSection(
                kind=kind,
                cases=cases,
                text=text.decode(errors="replace"),
                cut_bytes=(end - start) - len(text),
                unordered=unordered,
            )
        )
    return sections


def _label(
    label: str, raw: RawRun, job: SessionJob, visibility: Sequence[Visibility]
) -> tuple[OutputKind, list[str], bool]:
    """(kind, the shown cases it belongs to, whether its debug prints may be reordered) of a mark's label."""
    word, _, number = label.partition(" ")
    if word == "load" and not number:
        return "load", [], False
    if word in ("trace", "retrace", "run") and number.isdigit() and len(number) < 10:
        index = int(number)
        shown = [c for c in job.cases if visibility[c.index] != "hidden"]
        if word in ("trace", "retrace"):
            cases = [c.name for c in shown if c.sig == index]
            if cases:
                return "trace" if word == "trace" else "retrace", cases, False
        elif index < len(job.cases) and visibility[index] != "hidden":
            plan = job.cases[index]
            program = raw.programs.get(plan.sig)
            return "run", [plan.name], program is not None and program.debug_unordered
    return "other", [], False
