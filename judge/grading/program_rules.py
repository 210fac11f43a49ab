"""Rules that compare a case's program with the programs of earlier signatures (``require_batched``, and
``require_loop``'s bound on steps: ``judge.grading.transform_rules``), so a case's verdict waits for those."""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from judge.core.problems import Case
from judge.core.spec import BatchedRule, ForbidOpsRule, LoopRule, ProblemSpec
from judge.grading.compiled_rules import ProgramSummary
from judge.grading.transform_rules import (
    Peer,
    StepPeer,
    batch_size,
    batched_broken,
    held_key,
    loop_steps,
    outside_loops,
    unrolled_broken,
)
from sandbox.session.monitor import SessionJob
from sandbox.session.reports import Compiled, ProgramReport, RawRun


def peers_settled(raw: RawRun, job: SessionJob, sig: int) -> bool:
    """Every signature before ``sig`` has its program's outcome (the ``require_batched`` rule compares
    a program with those, so a case waits for them: its verdict must not depend on timing)."""
    for other in job.sigs:
        if other.id >= sig:
            continue
        report = raw.programs.get(other.id)
        if report is None or (report.compiled is None and report.refused is None and report.failure is None):
            return False
    return True


def unbatched(
    rule: BatchedRule,
    spec: ProblemSpec,
    job: SessionJob,
    cases: Sequence[Case],
    raw: RawRun,
    i: int,
    program: ProgramReport,
) -> str | None:
    """The ``require_batched`` rule on case i's program, against the programs of earlier signatures
    that hold every other size the same (``judge.grading.transform_rules.held_key``)."""
    ops = ProgramSummary.from_compiled(program.compiled).ops
    peers = []
    for first, compiled in _earlier_programs(job, raw, i):
        inputs = cases[first].inputs
        size, held = batch_size(rule, spec, inputs), held_key(rule, spec, inputs)
        if size is not None and held is not None:
            summary = ProgramSummary.from_wire(compiled.summary)
            peers.append(Peer(size, summary.ops, held, cases[first].name))
    inputs = cases[i].inputs
    return batched_broken(rule, batch_size(rule, spec, inputs), held_key(rule, spec, inputs), ops, peers)


def unrolled(
    rule: LoopRule | ForbidOpsRule,
    spec: ProblemSpec,
    job: SessionJob,
    cases: Sequence[Case],
    raw: RawRun,
    i: int,
    program: ProgramReport,
) -> str | None:
    """The ``require_loop`` rule's bound on steps on case i's program, against the programs of earlier
    signatures (``judge.grading.transform_rules.unrolled_broken``)."""
    summary = ProgramSummary.from_compiled(program.compiled)
    peers = []
    for first, compiled in _earlier_programs(job, raw, i):
        steps = loop_steps(rule, spec, cases[first].inputs)
        if steps is not None:
            theirs = ProgramSummary.from_wire(compiled.summary)
            peers.append(StepPeer(steps, outside_loops(theirs.ops, theirs.loop_ops), cases[first].name))
    steps = loop_steps(rule, spec, cases[i].inputs)
    return unrolled_broken(rule, steps, outside_loops(summary.ops, summary.loop_ops), peers)


def _earlier_programs(job: SessionJob, raw: RawRun, i: int) -> Iterator[tuple[int, Compiled]]:
    """The compiled programs of the signatures before case i's, each with the first case of its signature:
    the peers a transformation rule compares case i's program with."""
    sig = job.cases[i].sig
    for other in job.sigs:
        report = raw.programs.get(other.id)
        first = job.first_case(other.id)
        if other.id < sig and report is not None and report.compiled is not None and first is not None:
            yield first, report.compiled
