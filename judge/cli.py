"""The ``judge`` command line: grade and run files, list problems, check problem packages, scaffold a new one,
serve the REST API.

The engine's commands (grade, run, check, new, preview, doctor, problems) import only the engine's
dependencies; the others import an install extra's packages inside the command (``_extra``), so a judge
installed without it says which extra to install instead of failing at start.
"""

from __future__ import annotations

import importlib
import json
import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from judge.core.errors import JudgeError, ProblemError, SandboxRefused
from judge.core.sandboxes import Prestarted, choose_backend, insecure_from_env
from judge.feedback.display import escape_text, strict_json
from sandbox.errors import SandboxError

if TYPE_CHECKING:
    from judge.core.problems import ProblemSet
    from judge.core.results import GradeResult
    from judge.core.settings import Settings

app = typer.Typer(
    add_completion=False,
    no_args_is_help=True,
    help="JAX practice judge. Exit codes: 0 success, 1 a failed result, 2 a usage error.",
)

EXIT_ACCEPTED, EXIT_REJECTED, EXIT_USAGE = 0, 1, 2

#: The exit codes each command's ``--help`` states.
GRADE_EXITS = "Exit codes: 0 accepted, 1 any other verdict, 2 a usage error (no output to grade)."

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
    Path | None,
    typer.Option(
        "--problems",
        help="The problems folder; its reference modules are in ../reference/ beside it "
        "(default: $JUDGE_PROBLEMS_DIR, else the judge's own problems/ in a checkout, else ./problems).",
    ),
]


def result_json(result: GradeResult) -> dict[str, object]:
    """The ``--json`` object: strict JSON (non-finite numbers spelled out), the API's exact shape."""
    from judge.core.results import result_json as strict

    return strict(result)


def wants_json(args: list[str]) -> bool:
    """Whether a command line asks for JSON output (``--json``, or ``--format json`` of ``judge check``)."""
    for i, arg in enumerate(args):
        if arg == "--":
            break
        if (
            arg == "--json"
            or arg == "--format=json"
            or (arg == "--format" and args[i + 1 : i + 2] == ["json"])
        ):
            return True
    return False


def error_json(code: str, message: str, **extra: object) -> str:
    """The object a usage error prints on stdout under ``--json``: ``{"error": {"code", "message", ...}}``."""
    return json.dumps({"error": {"code": code, "message": message, **extra}})


#: Whether the running command line asked for JSON (set by ``main`` from the arguments).
_JSON_OUTPUT: ContextVar[bool] = ContextVar("judge_json_output", default=False)


def _json_mode() -> bool:
    return _JSON_OUTPUT.get()


def _fail(message: str, code: int = EXIT_USAGE, *, kind: str = "usage", **extra: object) -> typer.Exit:
    """Report an error and return the Exit to raise: on stderr, or as one JSON object on stdout when the
    command was asked for JSON."""
    if _json_mode():
        typer.echo(error_json(kind, message, **extra))
    else:
        typer.echo(f"error: {message}", err=True)
    return typer.Exit(code)


@contextmanager
def _extra(command: str, extras: str) -> Iterator[None]:
    """Around the imports of a command that needs install extras (pyproject.toml's optional dependencies):
    a package of theirs that is missing is a one-line usage error naming the extras to install (exit 2),
    not a traceback. A missing module of the judge itself is a broken install, and raises as it is."""
    try:
        yield
    except ModuleNotFoundError as exc:
        missing = (exc.name or "").partition(".")[0]
        if not missing or missing in ("judge", "sandbox"):
            raise
        what = "extras" if "," in extras else "extra"
        raise _fail(
            f"judge {command} needs the [{extras}] {what} ({missing} is not installed): "
            f"pip install 'jax-judge[{extras}]'",
            kind="missing_extra",
        ) from None


def _redis_in_use(command: str, settings: Settings) -> None:
    """Exit 2 naming the [distributed] extra when the settings use Redis (the grading queue, shared
    rate-limit counters) and its client is not installed."""
    for variable, used in (
        ("JUDGE_QUEUE_URL", settings.queue_url is not None),
        ("JUDGE_RATE_LIMIT_STORAGE", settings.rate_limit_storage.startswith("redis")),
    ):
        if used:
            with _extra(f"{command} with {variable}", "distributed"):
                for module in ("celery", "redis"):
                    importlib.import_module(module)


def _problems(directory: Path | None) -> ProblemSet:
    from judge.core.problems import ProblemSet  # imported late: pydantic and numpy cost ~0.4 s to import

    if directory is not None and not directory.is_dir():
        raise _fail(f"--problems {directory}: no such folder")
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
    reveal: Annotated[
        bool,
        typer.Option(
            "--reveal",
            help="For the problem's author: show every case's error in tolerances (err/tol), hidden cases "
            "included, and their run times, as judge check measures them. The cases are read from the "
            "problems folder on this machine; the service never offers this.",
        ),
    ] = False,
    sandbox: SandboxOpt = None,
    insecure: InsecureOpt = False,
    problems: ProblemsOpt = None,
) -> None:
    """Grade FILE against every public and hidden case of problem SLUG.

    Exit codes: 0 accepted, 1 any other verdict, 2 a usage error or no verdict (the sandbox failed to
    start or the judge failed: with --json a JSON object on stdout whose code says which).
    """
    code = _read_code(file)
    try:
        backend = choose_backend(sandbox, allow_insecure=insecure or insecure_from_env())
        # Start the sandboxed tracer and executor now: they import JAX while this process loads the problems.
        source = Prestarted(backend)
    except SandboxRefused as exc:
        raise _fail(str(exc)) from None
    except SandboxError as exc:
        raise _fail(f"the sandbox failed to start: {exc}", kind="sandbox") from None
    try:
        from judge.core.grader import grade as run_grade
        from judge.feedback.report import text_report

        problem = _problems(problems).get(slug)
        # author=True keeps what only an author may see (hidden cases' exact error ratios and run times).
        result = run_grade(problem, code, source, author=reveal)
    except ProblemError as exc:
        raise _fail(str(exc)) from None
    except (JudgeError, SandboxError) as exc:
        raise _fail(f"the judge failed: {exc}", kind="judge") from None
    finally:
        source.close()
    if as_json:
        typer.echo(strict_json(result_json(result)))
    else:
        typer.echo(text_report(problem, result, reveal=reveal))
    raise typer.Exit(EXIT_ACCEPTED if result.accepted else EXIT_REJECTED)


@app.command("problems")
def list_problems(
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
    problems: ProblemsOpt = None,
) -> None:
    """List the problems of the problems folder.

    Exit codes: 0 listed, 2 a usage error (a problem that does not load; with --json a JSON object on stdout).
    """
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
    table = [
        [str(row["slug"]), str(row["difficulty"]), str(row["function"]), _case_counts(row["cases"])]
        for row in rows
    ]
    typer.echo("\n".join(aligned(table)))


def _case_counts(cases: object) -> str:
    assert isinstance(cases, dict)
    return f"{cases['public']} public, {cases['hidden']} hidden"


def aligned(rows: list[list[str]], gap: str = "  ") -> list[str]:
    """Rows of cells as lines whose columns line up, however long a cell (the last column is not padded)."""
    if not rows:
        return []
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    return [gap.join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip() for row in rows]


class CheckFormat(StrEnum):
    TEXT = "text"
    JSON = "json"
    JUNIT = "junit"
    GITHUB = "github"


@app.command()
def check(
    problem_dirs: Annotated[
        list[Path] | None,
        typer.Argument(help="Problem slugs or folders (default: every problem of the problems folder)."),
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
    problems: ProblemsOpt = None,
    on_backend: Annotated[
        str,
        typer.Option(
            "--backend",
            help="Also run the references and the accepted and wrong-answer solutions on this JAX backend "
            "and report them per backend: auto (default: the host's accelerator if it has one, else none), "
            "cpu, tpu, gpu, or none.",
        ),
    ] = "auto",
) -> None:
    """Prove problem packages sound: spec, statement, starter, cases, reference, examples, solutions, margins.

    Exit codes: 0 every check passed, 1 an error (or a warning with --werror), 2 a usage error (an unknown
    problem, a missing problems folder, no sandbox; with --format json it is a JSON object on stdout), 3 the
    judge failed: it could not grade a solution even after retries (its own failure, not the package's).
    """
    from judge.check import known_problems, resolve_problem_dirs, run_checks
    from judge.check.formats import junit, markdown_summary, render
    from judge.core.problems import default_problems_dir

    base = (problems or default_problems_dir()).resolve()
    if problems is not None and not base.is_dir():
        raise _fail(f"--problems {problems}: no such folder")
    roots, unknown = resolve_problem_dirs(problem_dirs or [], base)
    if unknown:
        known = known_problems(base)
        raise _fail(
            f"no such problem: {', '.join(unknown)} (known in {base}: {', '.join(known) or 'none'})",
            kind="unknown_problem",
            unknown=unknown,
            known=known,
        )
    if not roots:
        raise _fail(f"no problem folders to check in {base}", kind="no_problems")
    platform = _check_platform(on_backend)
    backend = None
    if not skip_solutions:
        try:
            backend = choose_backend(sandbox, allow_insecure=insecure or insecure_from_env())
        except SandboxRefused as exc:
            raise _fail(f"{exc} (or pass --skip-solutions)", kind="no_sandbox") from None
    # Progress on stderr, a line per check and per graded solution; none for machine-read formats.
    machine = fmt in (CheckFormat.JSON, CheckFormat.JUNIT)
    progress = None if quiet or machine else (lambda line: typer.echo(line, err=True))
    try:
        report = run_checks(
            roots, backend=backend, concurrency=jobs, werror=werror, progress=progress, platform=platform
        )
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


def _check_platform(name: str) -> str | None:
    """The platform of ``judge check --backend``: None for ``none`` (and for ``auto`` on a host without an
    accelerator, whose CPU figures the sandboxed grading gives)."""
    from judge.core.accelerators import BackendError, detect_backend, jax_can_use, parse_backend

    if name.strip().lower() == "none":
        return None
    try:
        if name.strip().lower() == "auto":
            found = detect_backend()  # and JAX can use it: a GPU without jax's CUDA plugin grades on the CPU
            return None if found == "cpu" or not jax_can_use(found) else found
        return parse_backend(name)
    except BackendError as exc:
        raise _fail(f"--backend: {exc}", kind="bad_backend") from None


@app.command()
def new(
    slug: Annotated[str, typer.Argument(help="The new problem's slug, e.g. layer-norm.")],
    args: Annotated[
        list[str] | None,
        typer.Option(
            "--arg",
            help="One argument of the function, in order: NAME:KIND with KIND one of the argument kinds "
            "(problems/README.md, 'Argument kinds'; an unknown one is refused with the list), e.g. "
            "x:pytree, c:number (c:number:static for a static one), n:int, k:key. An array takes its "
            "dtype (case, the default; int32; uint32; bool) and its ranks (default 1) as "
            "options: x:array:2, step:array:int32:0, mask:array:bool:1,2. At most 8. Default: the worked "
            "example tree:pytree factor:number, with its solutions.",
        ),
    ] = None,
    dtypes: Annotated[
        list[str] | None,
        typer.Option("--dtype", help="A case dtype (float32, bfloat16); repeat it. Default: both."),
    ] = None,
    function: Annotated[
        str | None, typer.Option("--function", help="Function name (default: the slug with '_' for '-').")
    ] = None,
    title: Annotated[str | None, typer.Option("--title", help="Title (default: from the slug).")] = None,
    problems: ProblemsOpt = None,
) -> None:
    """Scaffold a problem package that fits the declared signature in the problems folder, and its
    reference in ../reference/ beside it; then print what to do with each file.

    Exit codes: 0 written, 2 a usage error (an invalid slug, argument or dtype, a file that already exists).
    """
    from judge.authoring.scaffold import ArgDecl, ScaffoldError, create
    from judge.core.problems import default_problems_dir

    directory = problems or default_problems_dir()
    try:
        declared = [ArgDecl.parse(text) for text in args or []]
        created = create(slug, directory, function=function, title=title, args=declared, dtypes=dtypes)
    except ScaffoldError as exc:
        raise _fail(str(exc)) from None
    cwd = Path.cwd()

    def shown(file: Path) -> str:
        return str(file.relative_to(cwd) if file.is_relative_to(cwd) else file)

    typer.echo(f"created the problem {slug} ({len(created.files)} files). Next steps, file by file:")
    rows = [[f"{i}.", shown(path), todo] for i, (path, todo) in enumerate(created.files, start=1)]
    for line in aligned(rows):
        typer.echo(f"  {line}")
    where = f" --problems {shown(directory)}" if problems else ""
    typer.echo(
        f"Then: judge check {slug}{where} --skip-solutions   (quick, while editing)\n"
        f"      judge check {slug}{where} --werror           (grades the solutions in the sandbox)\n"
        f"      judge preview {slug}{where}                   (the statement as learners see it)\n"
        "The problem format and the package rules: problems/README.md."
    )


@app.command()
def preview(
    slug: Annotated[str, typer.Argument(help="The problem's slug.")],
    output: Annotated[
        Path | None,
        typer.Option(
            "--output", "-o", help="The HTML file to write (default: SLUG.preview.html in the temp folder)."
        ),
    ] = None,
    problems: ProblemsOpt = None,
) -> None:
    """Render the statement of SLUG (examples, rules and math included) to one HTML file, the way learners
    see it on the problem page.

    Exit codes: 0 written, 1 the reference fails on a public case (no example to show), 2 a usage error.
    """
    from judge.web.preview import PreviewError, default_output, write

    _require_known(problems, slug)
    problem = _problems(problems).get(slug)
    out = output or default_output(slug)
    try:
        written = write(problem, out)
    except PreviewError as exc:
        raise _fail(str(exc), EXIT_REJECTED, kind="reference_failed") from None
    except OSError as exc:
        raise _fail(f"cannot write {out}: {exc.strerror}") from None
    if written.unstyled:
        typer.echo(f"note: without the page's stylesheet: {written.unstyled}", err=True)
    typer.echo(f"wrote {out} ({out.resolve().as_uri()})")


def _require_known(problems: Path | None, slug: str) -> None:
    """A usage error listing the known slugs unless the problems folder holds ``slug``."""
    from judge.check import known_problems
    from judge.core.problems import default_problems_dir

    base = (problems or default_problems_dir()).resolve()
    known = known_problems(base)
    if slug not in known:
        raise _fail(
            f"no such problem: {slug} (known in {base}: {', '.join(known) or 'none'})",
            kind="unknown_problem",
            unknown=[slug],
            known=known,
        )


@app.command()
def doctor(
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
    sandbox: SandboxOpt = None,
    insecure: InsecureOpt = False,
) -> None:
    """Show the active sandbox backend, its protections on this host, and run a self-test through it.

    Exit codes: 0 the sandbox works, 1 it does not (or no secure backend is available).
    """
    from judge.core.doctor import diagnose, text_report

    try:
        backend = choose_backend(sandbox, allow_insecure=insecure or insecure_from_env())
    except SandboxRefused as exc:
        raise _fail(str(exc), code=EXIT_REJECTED) from None
    report = diagnose(backend)
    typer.echo(report.model_dump_json() if as_json else text_report(report))
    raise typer.Exit(EXIT_ACCEPTED if report.ok else EXIT_REJECTED)


def _read_code(file: Path) -> str:
    """FILE's bytes (``-``: standard input) as source text, read the way Python reads a source file
    (``judge.core.source.decode_source``); exit 2 naming the file and line when they cannot be read."""
    from judge.core.grader import MAX_CODE_BYTES
    from judge.core.source import SourceError, decode_source

    try:
        data = sys.stdin.buffer.read() if str(file) == "-" else file.read_bytes()
    except OSError as exc:
        raise _fail(f"cannot read {file}: {exc.strerror}") from None
    try:
        return decode_source(data, max_bytes=MAX_CODE_BYTES)
    except SourceError as exc:
        raise _fail(escape_text(f"{file}: {exc}")) from None


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
    """Run FILE on the public examples of SLUG, or on one custom case (like the page's Run button).

    Exit codes: 0 every case passed, 1 a case failed, 2 a usage error or no result (the sandbox failed to
    start or the judge failed: with --json a JSON object on stdout whose code says which).
    """
    code = _read_code(file)
    custom = _parse_inputs(inputs or [])
    from judge.core.errors import InputError

    try:
        backend = choose_backend(sandbox, allow_insecure=insecure or insecure_from_env())
    except SandboxRefused as exc:
        raise _fail(str(exc)) from None
    from judge.core.engine import Engine
    from judge.feedback.report import text_report

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
            raise _fail(f"the judge failed: {exc}", kind="judge") from None
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
    """Start the REST service (settings: JUDGE_* variables, see README.md).

    Exit codes: 0 stopped cleanly, 2 invalid settings or a missing install extra ([service]; [distributed]
    with JUDGE_QUEUE_URL); otherwise the server's own exit code.
    """
    from pydantic import ValidationError

    with _extra("serve", "service"):
        from judge.core.settings import Settings
        from judge.service.server import serve as run_server

    overrides = {k: v for k, v in (("host", host), ("port", port)) if v is not None}
    try:
        settings = Settings(**overrides)  # type: ignore[arg-type]
    except (ValidationError, ValueError) as exc:
        raise _fail(f"invalid settings: {exc}") from None
    _redis_in_use("serve", settings)
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
    JUDGE_DATABASE_URL (settings: JUDGE_* variables, see README.md).

    Exit codes: 0 stopped cleanly (SIGTERM), 1 the node failed (the database or its status port), 2 a
    refused configuration (invalid settings, no JUDGE_QUEUE_URL, no secure sandbox, a missing install
    extra: [service,distributed]).
    """
    from pydantic import ValidationError

    with _extra("worker", "service,distributed"):
        import celery  # noqa: F401  (the node's queue: say so now, not once the database is migrated)

        from judge.core.settings import Settings
        from judge.dispatch.node import run_node

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
    """Print the hash of an API key for the JUDGE_API_KEYS setting or the keys file (and a new key).

    Exit codes: 0 printed, 2 a usage error (or the [service] extra missing).
    """
    with _extra("hash-key", "service"):
        from judge.service.apikeys import generate_key, generate_key_id, hash_key

    if key is None:
        key = generate_key()
        typer.echo(f"key:  {key}   (give this to the client; it is not stored anywhere)")
    typer.echo(f"hash: {hash_key(key)}")
    # The id owns the client's submissions: keep it when the key is rotated or the name changes.
    typer.echo(f"keys-file line:  {name} {hash_key(key)} id={generate_key_id()}")


@app.command("erase-account")
def erase_account(
    name: Annotated[str, typer.Argument(help="The learner account's name (any case).")],
) -> None:
    """Erase a learner account (JUDGE_ACCOUNTS) with its saved code, every submission made while signed
    in (with events and callback records) and its solved set; for an erasure request the learner cannot
    make themselves. Reads JUDGE_DATABASE_URL (or the data directory's SQLite file).

    Exit codes: 0 erased, 1 no account of that name or the database failed, 2 invalid settings (or the
    [service] extra missing).
    """
    from pydantic import ValidationError

    with _extra("erase-account", "service"):
        from sqlalchemy.exc import SQLAlchemyError

        from judge.core.settings import Settings
        from judge.store import Store, database_url
        from judge.store.accounts import AccountStore

    try:
        settings = Settings()
    except (ValidationError, ValueError) as exc:
        raise _fail(f"invalid settings: {exc}") from None
    store = Store(database_url(settings.database_url, settings.data_dir))
    try:
        store.migrate()
        accounts = AccountStore(store)
        account = accounts.by_name(name)
        erased = accounts.erase(account.id) if account is not None else None
    except SQLAlchemyError as exc:
        raise _fail(f"the database failed: {type(exc).__name__}: {exc}", 1, kind="database") from None
    finally:
        store.close()
    if account is None or erased is None:
        raise _fail(f"no account named {escape_text(name)!r}", 1, kind="unknown_account")
    typer.echo(
        f"erased account {escape_text(account.name)!r}: {erased.submissions} submissions, "
        f"{erased.problems} problems' code and solved marks"
    )


@app.command()
def regrade(
    submission: Annotated[
        str | None, typer.Option("--submission", help="Regrade this submission (its owner's key).")
    ] = None,
    problem: Annotated[
        str | None,
        typer.Option("--problem", help="Regrade this problem's submissions graded with another version."),
    ] = None,
    job: Annotated[
        str | None, typer.Option("--job", help="Show how far this problem regrade got (no regrade).")
    ] = None,
    force: Annotated[bool, typer.Option("--force", help="With --problem: regrade every one.")] = False,
    notify: Annotated[
        bool, typer.Option("--notify", help="Send each submission's callback when it is regraded.")
    ] = False,
    batch: Annotated[
        int | None,
        typer.Option("--batch", min=1, help="With --problem: gradings queued or running at once."),
    ] = None,
    url: Annotated[str, typer.Option("--url", help="The API node.")] = "http://127.0.0.1:8000",
    as_json: Annotated[bool, typer.Option("--json", help="Print the API's JSON answer.")] = False,
) -> None:
    """Regrade through a running API node, with the API key in JUDGE_API_KEY (an operator key for
    --problem and --job): each regrade is a new grading of the same submission (no new submission, no
    callback unless --notify); a problem's regrade is a job that goes on in the judge (see --job).

    Exit codes: 0 queued (or shown), 1 the judge refused (the message says why), 2 a usage error (or the
    [service] extra missing).
    """
    with _extra("regrade", "service"):
        import httpx

        from judge.service.operator import KEY_ENV, OperatorError, regrade_job
        from judge.service.operator import regrade as ask

    key = os.environ.get(KEY_ENV)
    if not key:
        raise _fail(f"set {KEY_ENV} to an API key (an operator key for --problem and --job)")
    if sum(value is not None for value in (submission, problem, job)) != 1:
        raise _fail("give exactly one of --submission, --problem and --job")
    try:
        with httpx.Client(base_url=url, timeout=60) as client:
            if job is not None:
                answer = regrade_job(client, key, job)
            else:
                answer = ask(
                    client,
                    key,
                    submission=submission,
                    problem=problem,
                    force=force,
                    notify=notify,
                    batch=batch,
                )
    except OperatorError as exc:
        raise _fail(str(exc), EXIT_REJECTED, kind="refused") from None
    if as_json:
        typer.echo(json.dumps(answer))
    elif submission is not None:
        typer.echo(f"queued grading {answer['grading']} of {answer['submission']}")
    else:
        typer.echo(
            f"problem regrade {answer['id']} of {answer['problem']}: {answer['state']}, "
            f"{answer['queued']} of {answer['total']} queued, {answer['graded']} graded, "
            f"{answer['failed']} failed, {answer['in_flight']} in flight, {answer['remaining']} remaining"
        )


@app.command("push-problem")
def push_problem(
    folder: Annotated[Path, typer.Argument(help="The problem's package folder (problems/<slug>).")],
    tenant: Annotated[
        list[str] | None, typer.Option("--tenant", help="Scope it to this tenant (repeatable).")
    ] = None,
    wait: Annotated[float, typer.Option("--wait", min=0, help="Seconds to wait for its check.")] = 0.0,
    url: Annotated[str, typer.Option("--url", help="The API node.")] = "http://127.0.0.1:8000",
    as_json: Annotated[bool, typer.Option("--json", help="Print the API's JSON answer.")] = False,
) -> None:
    """Add or update a problem on a running judge, without a restart: its package (and reference) as a new
    version, live once the judge's own `judge check` of it passes. The operator key is in JUDGE_API_KEY.

    Exit codes: 0 stored (live, or still checking), 1 refused or rejected (the message says why), 2 a usage
    error (or the [service] extra missing).
    """
    from judge.authoring.problem_archive import ArchiveError

    with _extra("push-problem", "service"):
        import httpx

        from judge.service.operator import KEY_ENV, OperatorError
        from judge.service.problem_push import push

    key = os.environ.get(KEY_ENV)
    if not key:
        raise _fail(f"set {KEY_ENV} to an operator's API key")
    if not (folder / "problem.toml").is_file():
        raise _fail(f"{folder}: no problem.toml (give a problem's package folder)")
    try:
        with httpx.Client(base_url=url, timeout=120) as client:
            version = push(client, key, folder, tenants=tenant, wait_s=wait)
    except (OperatorError, ArchiveError) as exc:
        raise _fail(str(exc), EXIT_REJECTED, kind="refused") from None
    if as_json:
        typer.echo(json.dumps(version))
    else:
        typer.echo(
            f"{version['slug']} revision {version['revision']} ({version['short_hash']}): {version['state']}"
        )
        for finding in version.get("findings") or []:
            typer.echo(f"  {finding['severity']}: {finding['where']}: {finding['message']}")
    if version.get("state") == "rejected":
        raise typer.Exit(EXIT_REJECTED)


@app.command("retire-problem")
def retire_problem(
    slug: Annotated[str, typer.Argument(help="The problem's slug.")],
    content_hash: Annotated[
        str | None, typer.Option("--hash", help="Only this version (its content hash); default: every one.")
    ] = None,
    url: Annotated[str, typer.Option("--url", help="The API node.")] = "http://127.0.0.1:8000",
) -> None:
    """Retire a pushed problem version (or every one of the slug) on a running judge: no node serves it
    after its next poll. The operator key is in JUDGE_API_KEY.

    Exit codes: 0 retired, 1 refused (the message says why), 2 a usage error (or the [service] extra
    missing).
    """
    with _extra("retire-problem", "service"):
        import httpx

        from judge.service.operator import KEY_ENV, OperatorError
        from judge.service.problem_push import retire

    key = os.environ.get(KEY_ENV)
    if not key:
        raise _fail(f"set {KEY_ENV} to an operator's API key")
    try:
        with httpx.Client(base_url=url, timeout=60) as client:
            listing = retire(client, key, slug, content_hash)
    except OperatorError as exc:
        raise _fail(str(exc), EXIT_REJECTED, kind="refused") from None
    retired = [v for v in listing["versions"] if v["state"] == "retired"]
    typer.echo(f"{slug}: {len(retired)} retired; served now: {str(listing['served'] or 'none')[:12]}")


def main(argv: list[str] | None = None) -> None:
    """The ``judge`` entry point. A usage error click finds (an unknown option, a missing argument, a bad
    value) exits 2; under ``--json`` (or ``--format json``) it is one JSON object on stdout, like the usage
    errors the commands report themselves."""
    # Typer ships its own copy of click; its exception base is not re-exported under a public name.
    from typer._click.exceptions import ClickException

    args = sys.argv[1:] if argv is None else list(argv)
    _JSON_OUTPUT.set(wants_json(args))
    try:
        code = app(args=args, prog_name="judge", standalone_mode=False)
    except ClickException as exc:
        if wants_json(args):
            typer.echo(error_json("usage", exc.format_message()))
        else:
            exc.show()
        sys.exit(exc.exit_code)
    except typer.Abort:
        typer.echo("Aborted.", err=True)
        sys.exit(EXIT_REJECTED)
    sys.exit(code if isinstance(code, int) else 0)
