"""The problems as the API shows them: summaries, and details with the statement rendered once.

Details need the reference's outputs for the examples (computed on the trusted side, cached on disk), so
``prepare`` builds them all at start-up, before the service reports ready.
"""

from __future__ import annotations

import threading
from collections.abc import Collection, Iterator
from typing import Any

from judge.errors import ReferenceFailure
from judge.problems import Problem, ProblemSet
from judge.results import LeafValue
from judge.service import markdown
from judge.service.schemas import (
    ArgumentPublic,
    ExamplePublic,
    LimitsPublic,
    OutputPublic,
    ProblemDetail,
    ProblemSummary,
    ProblemVersion,
)
from judge.store.manifest import problem_hash


def version(problem: Problem) -> ProblemVersion:
    content = problem_hash(problem)
    return ProblemVersion(hash=content, revision=problem.spec.revision, short_hash=content[:12])


def served_versions(problems: ProblemSet) -> dict[str, dict[str, Any]]:
    """slug -> ``{"revision", "hash"}`` of every problem served (what a grading node reports)."""
    return {p.slug: {"revision": p.spec.revision, "hash": problem_hash(p)} for p in problems}


def summary(problem: Problem, known: Collection[str] | None = None) -> ProblemSummary:
    """``known``: the catalog's slugs; a ``similar`` link to any other slug is left out."""
    spec = problem.spec
    return ProblemSummary(
        slug=spec.slug,
        title=spec.title,
        difficulty=spec.difficulty,
        tags=list(spec.tags),
        similar=[slug for slug in spec.similar if known is None or slug in known],
        function=spec.function,
        signature=f"{spec.function}({', '.join(a.name for a in spec.args)})",
        version=version(problem),
    )


def detail(problem: Problem, known: Collection[str] | None = None) -> ProblemDetail:
    """Everything a page needs to show the problem (expected example outputs from the reference)."""
    from judge.expected import expected_outputs
    from judge.statement import fill_statement, render_examples

    spec = problem.spec
    public = problem.public_cases
    outputs = expected_outputs(problem, public)
    statement = fill_statement(problem, render_examples(problem, outputs))
    examples = [
        ExamplePublic(
            name=case.name,
            dtype=case.dtype,
            input=dict(case.definition.args),
            expected=None if isinstance(output, ReferenceFailure) else LeafValue.of(output),
            explanation=case.definition.explanation,
        )
        for case, output in zip(public, outputs, strict=True)
    ]
    return ProblemDetail(
        **summary(problem, known).model_dump(),
        statement_markdown=statement,
        statement_html=markdown.to_html(statement),
        arguments=[
            ArgumentPublic(
                name=a.name,
                kind=a.kind,
                accepts=list(a.accepts),  # type: ignore[arg-type]
                kind_text=a.describe_kind(),
                dtype=a.dtype if a.kind == "array" else None,
                ndim=list(a.key_ranks if a.kind == "key" else a.ndim),
                key_impl=a.impl if a.kind == "key" else None,
                traced=a.traced,
                description=a.description,
                choices=list(a.choices),
            )
            for a in spec.args
        ],
        output=OutputPublic(kind=spec.output.kind, names=list(spec.output.names)),
        examples=examples,
        hints=list(spec.hints),
        requirements=markdown.section_items(problem.statement_source, "Requirements"),
        constraints=markdown.section_items(problem.statement_source, "Constraints"),
        starter_code=problem.starter,
        run_panel_dtype=spec.dtypes.run_panel,
        run_dtypes=list(spec.dtypes.allowed),
        limits=LimitsPublic(
            case_time_s=spec.limits.case_time_s,
            wall_time_s=spec.limits.wall_time_s,
            memory_mb=spec.limits.memory_mb,
            output_bytes=spec.limits.output_bytes,
        ),
    )


class Catalog:
    """Thread-safe; details are built on first use or by ``prepare``."""

    def __init__(self, problems: ProblemSet) -> None:
        self.problems = problems
        self._slugs = frozenset(p.slug for p in problems)
        self._summaries = [summary(p, self._slugs) for p in problems]
        self._details: dict[str, ProblemDetail] = {}
        self._lock = threading.Lock()

    def __iter__(self) -> Iterator[Problem]:
        return iter(self.problems)

    def get(self, slug: str) -> Problem:
        """The problem; raises ProblemNotFound."""
        return self.problems.get(slug)

    def summaries(self) -> list[ProblemSummary]:
        return list(self._summaries)

    def detail(self, slug: str) -> ProblemDetail:
        problem = self.get(slug)
        with self._lock:
            if slug not in self._details:
                self._details[slug] = detail(problem, self._slugs)
            return self._details[slug]

    def prepare(self) -> None:
        """Build every detail and, with them, warm the expected outputs of every case."""
        from judge.expected import expected_outputs

        for problem in self.problems:
            self.detail(problem.slug)
            expected_outputs(problem, problem.cases)
