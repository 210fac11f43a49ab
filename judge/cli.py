"""The ``judge`` command line: grade files, list problems (and, later, check problems and the sandbox)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated

import typer

from judge.errors import JudgeError, ProblemError, SandboxRefused
from judge.problems import ProblemSet
from judge.sandboxes import choose_backend, insecure_from_env

app = typer.Typer(add_completion=False, no_args_is_help=True, help="JAX practice judge.")

EXIT_ACCEPTED, EXIT_REJECTED, EXIT_USAGE = 0, 1, 2

SandboxOpt = Annotated[
    str | None,
    typer.Option(
        "--sandbox", help="Sandbox backend: auto (default: bwrap, then docker), bwrap, docker, process."
    ),
]
InsecureOpt = Annotated[
    bool,
    typer.Option("--insecure", help="Allow the 'process' backend, which isolates nothing (development)."),
]
ProblemsOpt = Annotated[
    Path | None, typer.Option("--problems", help="Problems folder (default: the repository's problems/).")
]


def _fail(message: str, code: int = EXIT_USAGE) -> typer.Exit:
    typer.echo(f"error: {message}", err=True)
    return typer.Exit(code)


def _problems(directory: Path | None) -> ProblemSet:
    try:
        return ProblemSet(directory)
    except ProblemError as exc:
        raise _fail(f"invalid problem package: {exc}") from None


@app.command()
def grade(
    slug: Annotated[str, typer.Argument(help="Problem slug, e.g. global-norm-clipping.")],
    file: Annotated[Path, typer.Argument(help="The solution file to grade ('-' for stdin).")],
    as_json: Annotated[
        bool, typer.Option("--json", help="Print one JSON object instead of a report.")
    ] = False,
    sandbox: SandboxOpt = None,
    insecure: InsecureOpt = False,
    problems: ProblemsOpt = None,
) -> None:
    """Grade FILE against every public and hidden case of problem SLUG."""
    from judge.grader import MAX_CODE_BYTES
    from judge.grader import grade as run_grade
    from judge.report import text_report

    problem_set = _problems(problems)
    try:
        problem = problem_set.get(slug)
    except ProblemError as exc:
        raise _fail(str(exc)) from None
    try:
        data = sys.stdin.buffer.read() if str(file) == "-" else file.read_bytes()
    except OSError as exc:
        raise _fail(f"cannot read {file}: {exc.strerror}") from None
    if len(data) > MAX_CODE_BYTES:
        raise _fail(f"{file} is {len(data)} bytes; the limit is {MAX_CODE_BYTES}")
    try:
        code = data.decode("utf-8")
    except UnicodeDecodeError:
        raise _fail(f"{file} is not UTF-8 text") from None
    try:
        backend = choose_backend(sandbox, allow_insecure=insecure or insecure_from_env())
    except SandboxRefused as exc:
        raise _fail(str(exc)) from None
    try:
        result = run_grade(problem, code, lambda limits: backend.start(limits))
    except JudgeError as exc:
        raise _fail(f"the judge failed: {exc}", code=EXIT_USAGE) from None
    if as_json:
        typer.echo(json.dumps(result.model_dump(mode="json", by_alias=True), indent=None))
    else:
        typer.echo(text_report(problem, result))
    raise typer.Exit(EXIT_ACCEPTED if result.accepted else EXIT_REJECTED)


@app.command("problems")
def list_problems(
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
    problems: ProblemsOpt = None,
) -> None:
    """List the problems."""
    problem_set = _problems(problems)
    rows = [
        {
            "slug": p.slug,
            "title": p.spec.title,
            "difficulty": p.spec.difficulty,
            "function": f"{p.spec.function}({', '.join(a.name for a in p.spec.args)})",
            "cases": {"public": len(p.public_cases), "hidden": len(p.hidden_cases)},
        }
        for p in problem_set
    ]
    if as_json:
        typer.echo(json.dumps(rows))
        return
    for row in rows:
        cases = row["cases"]
        typer.echo(
            f"{row['slug']:<24} {row['difficulty']:<7} {row['function']:<60} "
            f"{cases['public']} public, {cases['hidden']} hidden"  # type: ignore[index]
        )


def main() -> None:
    app()
