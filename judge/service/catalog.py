"""The problems as the API shows them: summaries, and details with the statement rendered once.

Details need the reference's outputs for the examples (computed on the trusted side, cached on disk), so
``prepare`` builds them all at start-up, before the service reports ready.
"""

from __future__ import annotations

import threading
from collections.abc import Collection, Iterator
from pathlib import Path
from typing import TypeVar

from judge.authoring import markdown
from judge.core.errors import ReferenceFailure
from judge.core.problem_hash import problem_hash
from judge.core.problems import Problem, Problems
from judge.core.results import LeafValue
from judge.kinds.registry import kind_of
from judge.service.schemas import (
    ArgumentPublic,
    ExamplePublic,
    LimitsPublic,
    OutputPublic,
    ProblemDetail,
    ProblemSummary,
    ProblemVersion,
)


def version(problem: Problem) -> ProblemVersion:
    content = problem_hash(problem)
    return ProblemVersion(hash=content, revision=problem.spec.revision, short_hash=content[:12])


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
    from judge.authoring.statement import fill_statement, render_examples
    from judge.core.expected import expected_outputs

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
                dtype=a.dtype if "dtype" in kind_of(a.kind).fields else None,
                ndim=kind_of(a.kind).ranks(a),
                key_impl=a.impl if "impl" in kind_of(a.kind).fields else None,
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


_Body = TypeVar("_Body", ProblemSummary, ProblemDetail)


class Catalog:
    """Thread-safe; details are built on first use or by ``prepare``, once per package folder (a new
    version of a problem is a new folder, so its detail is its own). ``problems`` may change under it
    (``judge.dispatch.live_problems.LiveProblems``): the summaries follow its ``generation``."""

    def __init__(self, problems: Problems) -> None:
        self.problems = problems
        self._details: dict[Path, ProblemDetail] = {}
        self._summaries: tuple[int, list[ProblemSummary]] | None = None
        self._lock = threading.Lock()

    def __iter__(self) -> Iterator[Problem]:
        return iter(self.problems)

    def get(self, slug: str) -> Problem:
        """The problem; raises ProblemNotFound."""
        return self.problems.get(slug)

    def visible(self, slug: str, tenant: str | None) -> bool:
        """Whether ``slug`` is shown to a caller of ``tenant`` (None: no tenant, or anonymous)."""
        scope = self.problems.scope(slug)
        return scope is None or (tenant is not None and tenant in scope)

    def summaries(self, tenant: str | None = None, *, all_tenants: bool = False) -> list[ProblemSummary]:
        """The problems served that ``tenant`` sees (None: no tenant, as the web pages), or every one
        (``all_tenants``: an operator)."""
        generation = self.problems.generation
        cached = self._summaries
        if cached is None or cached[0] != generation:
            cached = (generation, [summary(p) for p in self.problems])
            self._summaries = cached
        return [
            self._linked(s, tenant, all_tenants)
            for s in cached[1]
            if all_tenants or self.visible(s.slug, tenant)
        ]

    def detail(self, slug: str, tenant: str | None = None, *, all_tenants: bool = False) -> ProblemDetail:
        """The detail, its ``similar`` links to problems ``tenant`` does not see left out."""
        return self._linked(self._detail(self.get(slug)), tenant, all_tenants)

    def _linked(self, body: _Body, tenant: str | None, all_tenants: bool) -> _Body:
        """``body`` with ``similar`` links only to problems served now that ``tenant`` sees (every one
        served: ``all_tenants``). Bodies are cached with every link the spec declares; the problems served
        change at runtime (``judge.dispatch.live_problems``), so the links are chosen as each is read."""
        shown = [
            slug
            for slug in body.similar
            if self.problems.versions(slug) and (all_tenants or self.visible(slug, tenant))
        ]
        return body if shown == body.similar else body.model_copy(update={"similar": shown})

    def _detail(self, problem: Problem) -> ProblemDetail:
        with self._lock:
            if problem.root not in self._details:
                self._details[problem.root] = detail(problem)
            return self._details[problem.root]

    def prepare(self) -> None:
        """Build every detail and, with them, warm the expected outputs of every case."""
        self.prepare_problems(list(self.problems))

    def prepare_problems(self, problems: list[Problem]) -> None:
        """Build these problems' details and warm their expected outputs (new versions, before they are
        served)."""
        from judge.core.expected import expected_outputs

        for problem in problems:
            self._detail(problem)
            expected_outputs(problem, problem.cases)
