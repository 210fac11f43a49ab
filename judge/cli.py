"""The ``judge`` command line: grade and run files, list problems, check problem packages, scaffold a new one,
serve the REST API."""

from __future__ import annotations

import json
import os
import sys
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from judge.display import escape_text, strict_json
from judge.errors import JudgeError, ProblemError, SandboxRefused
from judge.sandboxes import Prestarted, choose_backend, insecure_from_env
from sandbox.errors import SandboxError

if TYPE_CHECKING:
    from judge.problems import ProblemSet
    from judge.results import GradeResult

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


def result_json(result: GradeResult) -> dict[str, object]:
    """The ``--json`` object: strict JSON (non-finite numbers spelled out), the API's exact shape."""
    from judge.store.jsonsafe import result_json as strict

    return strict(result)


def _fail(message: str, code: int = EXIT_USAGE) -> typer.Exit:
    typer.echo(f"error: {message}", err=True)
    return typer.Exit(code)


def _problems(directory: Path | None) -> ProblemSet:
    from judge.problems import ProblemSet  # imported late: pydantic and numpy cost ~0.4 s to import

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
    from judge.source import SourceError, decode_source

    try:
        data = sys.stdin.buffer.read() if str(file) == "-" else file.read_bytes()
    except OSError as exc:
        raise _fail(f"cannot read {file}: {exc.strerror}") from None
    try:
        code = decode_source(data)
    except SourceError as exc:
        raise _fail(escape_text(f"{file}: {exc}")) from None
    try:
        backend = choose_backend(sandbox, allow_insecure=insecure or insecure_from_env())
        # Start the sandboxed tracer and executor now: they import JAX while this process loads the problems.
        source = Prestarted(backend)
    except SandboxRefused as exc:
        raise _fail(str(exc)) from None
    except SandboxError as exc:
        raise _fail(f"the sandbox failed to start: {exc}") from None
    try:
        from judge.grader import MAX_CODE_BYTES
        from judge.grader import grade as run_grade
        from judge.report import text_report

        if len(data) > MAX_CODE_BYTES:
            raise _fail(f"{file} is {len(data)} bytes; the limit is {MAX_CODE_BYTES}")
        problem = _problems(problems).get(slug)
        result = run_grade(problem, code, source)
    except ProblemError as exc:
        raise _fail(str(exc)) from None
    except (JudgeError, SandboxError) as exc:
        raise _fail(f"the judge failed: {exc}") from None
    finally:
        source.close()
    if as_json:
        typer.echo(strict_json(result_json(result)))
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


class CheckFormat(StrEnum):
    TEXT = "text"
    JSON = "json"
    JUNIT = "junit"
    GITHUB = "github"


ProblemsDirOpt = Annotated[
    Path | None,
    typer.Option(
        "--problems-dir", "--problems", help="Problems folder (default: the repository's problems/)."
    ),
]


@app.command()
def check(
    problem_dirs: Annotated[
        list[Path] | None, typer.Argument(help="Problem folders or slugs (default: every problem).")
    ] = None,
    fmt: Annotated[CheckFormat, typer.Option("--format", help="Output format.")] = CheckFormat.TEXT,
    werror: Annotated[bool, typer.Option("--werror", help="Treat warnings as errors.")] = False,
    junit_xml: Annotated[
        Path | None, typer.Option("--junit-xml", help="Also write a JUnit XML report to this file.")
    ] = None,
    jobs: Annotated[int, typer.Option("--jobs", "-j", min=1, max=16, help="Solutions graded at once.")] = 2,
    skip_solutions: Annotated[
        bool, typer.Option("--skip-solutions", help="Do not grade solutions (no sandbox needed).")
    ] = False,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="No progress lines on stderr.")] = False,
    sandbox: SandboxOpt = None,
    insecure: InsecureOpt = False,
    problems: ProblemsDirOpt = None,
) -> None:
    """Prove problem packages sound: spec, statement, starter, cases, reference, examples, solutions, margins.

    Exit code 0 when clean, 1 on errors (or warnings with --werror), 2 on a usage error.
    """
    from judge.check import problem_dirs as find_dirs
    from judge.check import run_checks
    from judge.check.formats import junit, markdown_summary, render

    roots = find_dirs(problem_dirs or [], problems)
    if not roots:
        raise _fail("no problem folders to check")
    backend = None
    if not skip_solutions:
        try:
            backend = choose_backend(sandbox, allow_insecure=insecure or insecure_from_env())
        except SandboxRefused as exc:
            raise _fail(f"{exc} (or pass --skip-solutions)") from None
    progress = None if quiet else (lambda line: typer.echo(line, err=True))
    try:
        report = run_checks(roots, backend=backend, concurrency=jobs, werror=werror, progress=progress)
    finally:
        if backend is not None:
            backend.close()  # its zygote
    typer.echo(render(report, fmt.value))
    if junit_xml is not None:
        junit_xml.parent.mkdir(parents=True, exist_ok=True)
        junit_xml.write_text(junit(report))
    summary_file = os.environ.get("GITHUB_STEP_SUMMARY")
    if fmt is CheckFormat.GITHUB and summary_file:
        with open(summary_file, "a") as handle:
            handle.write(markdown_summary(report) + "\n")
    raise typer.Exit(report.exit_code)


@app.command()
def new(
    slug: Annotated[str, typer.Argument(help="The new problem's slug, e.g. layer-norm.")],
    function: Annotated[
        str | None, typer.Option("--function", help="Function name (default: the slug with '_' for '-').")
    ] = None,
    title: Annotated[str | None, typer.Option("--title", help="Title (default: from the slug).")] = None,
    problems: ProblemsDirOpt = None,
) -> None:
    """Scaffold a problem package in PROBLEMS_DIR/SLUG and its reference in PROBLEMS_DIR/../reference/."""
    from judge.problems import default_problems_dir
    from judge.scaffold import ScaffoldError, create

    directory = problems or default_problems_dir()
    try:
        files = create(slug, directory, function=function, title=title)
    except ScaffoldError as exc:
        raise _fail(str(exc)) from None
    cwd = Path.cwd()
    for file in files:
        shown = file.relative_to(cwd) if file.is_relative_to(cwd) else file
        typer.echo(f"created {shown}")
    reference = files[-1]
    typer.echo(
        f"\nNext: write the reference in {reference.name}, then edit every file into your problem and run\n"
        f"  judge check {slug}"
        + (f" --problems-dir {directory}" if problems else "")
        + "\nSee problems/README.md for the walkthrough."
    )


@app.command()
def doctor(
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
    sandbox: SandboxOpt = None,
    insecure: InsecureOpt = False,
) -> None:
    """Show the active sandbox backend, its protections on this host, and run a self-test through it."""
    from judge.doctor import diagnose, text_report

    try:
        backend = choose_backend(sandbox, allow_insecure=insecure or insecure_from_env())
    except SandboxRefused as exc:
        raise _fail(str(exc), code=EXIT_REJECTED) from None
    report = diagnose(backend)
    typer.echo(report.model_dump_json() if as_json else text_report(report))
    raise typer.Exit(EXIT_ACCEPTED if report.ok else EXIT_REJECTED)


def _read_code(file: Path) -> str:
    try:
        data = sys.stdin.buffer.read() if str(file) == "-" else file.read_bytes()
    except OSError as exc:
        raise _fail(f"cannot read {file}: {exc.strerror}") from None
    from judge.grader import MAX_CODE_BYTES
    from judge.service.source import decode_source

    if len(data) > MAX_CODE_BYTES:
        raise _fail(f"{file} is {len(data)} bytes; the limit is {MAX_CODE_BYTES}")
    try:
        return decode_source(data)
    except JudgeError as exc:
        raise _fail(f"{file}: {exc}") from None


def _parse_inputs(pairs: list[str]) -> dict[str, object] | None:
    if not pairs:
        return None
    inputs: dict[str, object] = {}
    for pair in pairs:
        name, sep, text = pair.partition("=")
        name = name.strip()
        if not sep or not name:
            raise _fail(f"--input {pair!r}: expected NAME=JSON, e.g. --input max_norm=1.0")
        if name in inputs:
            raise _fail(f"--input {name}: given twice")
        try:
            inputs[name] = json.loads(text)
        except json.JSONDecodeError as exc:
            raise _fail(f"--input {name}: not valid JSON ({exc.msg} at column {exc.colno})") from None
    return inputs


@app.command("run")
def run_examples(
    slug: Annotated[str, typer.Argument(help="Problem slug, e.g. global-norm-clipping.")],
    file: Annotated[Path, typer.Argument(help="The solution file to run ('-' for stdin).")],
    inputs: Annotated[
        list[str] | None,
        typer.Option(
            "--input",
            "-i",
            help="NAME=JSON for one argument; give every argument to run one custom case "
            "(default: the public examples).",
        ),
    ] = None,
    as_json: Annotated[
        bool, typer.Option("--json", help="Print the Run endpoint's JSON object instead of a report.")
    ] = False,
    sandbox: SandboxOpt = None,
    insecure: InsecureOpt = False,
    problems: ProblemsOpt = None,
) -> None:
    """Run FILE on the public examples of SLUG, or on one custom case (like the page's Run button)."""
    code = _read_code(file)
    custom = _parse_inputs(inputs or [])
    from judge.errors import InputError

    try:
        backend = choose_backend(sandbox, allow_insecure=insecure or insecure_from_env())
    except SandboxRefused as exc:
        raise _fail(str(exc)) from None
    from judge.engine import Engine
    from judge.report import text_report

    # The engine's warm worker imports JAX while this process loads the problems.
    with Engine(backend, workers=1) as engine:
        try:
            problem = _problems(problems).get(slug)
            result = engine.run(problem, code, custom)
        except InputError as exc:
            raise _fail(f"input {exc}") from None
        except ProblemError as exc:
            raise _fail(str(exc)) from None
        except (JudgeError, SandboxError) as exc:
            raise _fail(f"the judge failed: {exc}") from None
    if as_json:
        typer.echo(strict_json(result_json(result)))
    else:
        typer.echo(text_report(problem, result))
    raise typer.Exit(EXIT_ACCEPTED if result.accepted else EXIT_REJECTED)


@app.command()
def serve(
    host: Annotated[
        str | None, typer.Option("--host", help="Address to listen on (default 127.0.0.1).")
    ] = None,
    port: Annotated[
        int | None, typer.Option("--port", help="Port (default 8000; 0 picks a free one).")
    ] = None,
) -> None:
    """Start the REST service (settings: JUDGE_* variables, see README.md)."""
    from pydantic import ValidationError

    from judge.service.server import serve as run_server
    from judge.service.settings import Settings

    overrides = {k: v for k, v in (("host", host), ("port", port)) if v is not None}
    try:
        settings = Settings(**overrides)  # type: ignore[arg-type]
    except (ValidationError, ValueError) as exc:
        raise _fail(f"invalid settings: {exc}") from None
    raise typer.Exit(run_server(settings))


@app.command()
def worker(
    concurrency: Annotated[
        int | None,
        typer.Option(
            "--concurrency",
            "-c",
            min=1,
            max=256,
            help="Submissions graded at once: warm sandbox workers and queue slots (default: one per core).",
        ),
    ] = None,
    host: Annotated[
        str | None, typer.Option("--host", help="Address of /healthz, /readyz, /metrics (default 127.0.0.1).")
    ] = None,
    port: Annotated[
        int | None, typer.Option("--port", help="Their port (default 8000; 0 picks one).")
    ] = None,
) -> None:
    """Start a grading node: take submissions from JUDGE_QUEUE_URL, grade them, store results in
    JUDGE_DATABASE_URL (settings: JUDGE_* variables, see README.md)."""
    from pydantic import ValidationError

    from judge.dispatch.node import run_node
    from judge.service.settings import Settings

    overrides = {k: v for k, v in (("host", host), ("port", port)) if v is not None}
    try:
        settings = Settings(**overrides)  # type: ignore[arg-type]
    except (ValidationError, ValueError) as exc:
        raise _fail(f"invalid settings: {exc}") from None
    raise typer.Exit(run_node(settings, concurrency or settings.submission_concurrency))


@app.command("hash-key")
def hash_key_command(
    key: Annotated[
        str | None, typer.Argument(help="The API key to hash (default: generate a new one).")
    ] = None,
    name: Annotated[str, typer.Option("--name", help="The key's name, for the keys-file line.")] = "client",
) -> None:
    """Print the hash of an API key for the JUDGE_API_KEYS setting or the keys file (and a new key)."""
    from judge.service.apikeys import generate_key, hash_key

    if key is None:
        key = generate_key()
        typer.echo(f"key:  {key}   (give this to the client; it is not stored anywhere)")
    typer.echo(f"hash: {hash_key(key)}")
    typer.echo(f"keys-file line:  {name} {hash_key(key)}")


def main() -> None:
    app()
