"""Install extras: the engine's commands need only the engine's dependencies (pyproject.toml's
``dependencies``); ``[service]``, ``[distributed]`` and ``[docker]`` bring the rest, and a command that needs
one without it says which to install, in one line, with exit code 2.

The subprocess tests run the real ``judge`` with every package that only an extra brings made unimportable
(``tests/unimportable/sitecustomize.py`` on PYTHONPATH), as a judge installed without its extras would
be. The static tests read the source: the engine's modules import no extra's package, and the command
line imports the service's rooms and the extras' packages only inside ``_extra`` (which names the extra).
"""

from __future__ import annotations

import ast
import os
import re
import subprocess
import sys
import tomllib
from collections.abc import Iterable, Iterator
from functools import cache
from importlib import metadata
from pathlib import Path

import pytest
from packaging.markers import Marker
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from tests.conftest import FIXTURE_SLUG, FIXTURES, ROOT
from tests.test_architecture import _modules, room

PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
EXTRAS = ("service", "distributed", "docker")
HOOK = ROOT / "tests" / "unimportable"
INSECURE = ["--sandbox", "process", "--insecure", "--problems", str(FIXTURES)]
ACCEPTED = FIXTURES / FIXTURE_SLUG / "solutions" / "accepted" / "tree_util_map.py"

#: The rooms that run the judge as a service (docs/architecture.md, "Layers"), and the service's settings.
SERVICE_ROOMS = frozenset({"judge.service", "judge.store", "judge.dispatch", "judge.web"})
SERVICE_MODULES = frozenset({"judge.core.settings"})
#: The docker backend: the engine's registry lists it; it imports the Docker SDK inside its methods only.
DOCKER_BACKEND = "sandbox.backends.docker"
#: The page's modules ``judge preview`` (authoring, an engine command) imports: the statement as one file.
PREVIEW_MODULES = frozenset({"judge.web", "judge.web.preview", "judge.web.assets"})


# ---------------------------------------------------------------------------------------------- packages


def _wanted(requirement: Requirement, extras: Iterable[str]) -> bool:
    marker: Marker | None = requirement.marker
    return marker is None or any(marker.evaluate({"extra": extra}) for extra in ("", *extras))


def _closure(requirements: Iterable[str]) -> set[str]:
    """The installed distributions ``requirements`` bring, transitively (normalized names)."""
    seen: set[tuple[str, frozenset[str]]] = set()
    todo = [Requirement(text) for text in requirements]
    while todo:
        requirement = todo.pop()
        key = (canonicalize_name(requirement.name), frozenset(requirement.extras))
        if key in seen:
            continue
        seen.add(key)
        try:
            needs = metadata.requires(requirement.name) or []
        except metadata.PackageNotFoundError:  # another platform's, not installed here
            continue
        todo.extend(r for r in map(Requirement, needs) if _wanted(r, requirement.extras))
    return {name for name, _ in seen}


@cache
def extra_only_modules() -> frozenset[str]:
    """Top-level modules that only the extras bring (not the engine's dependencies, nor theirs)."""
    engine = _closure(PYPROJECT["dependencies"])
    extras = _closure(r for name in EXTRAS for r in PYPROJECT["optional-dependencies"][name])
    only = extras - engine
    return frozenset(
        module
        for module, dists in metadata.packages_distributions().items()
        if module.isidentifier() and all(canonicalize_name(d) in only for d in dists)
    )


def test_the_extras_hold_the_service_and_the_engine_holds_none_of_them() -> None:
    blocked = extra_only_modules()
    assert {
        "fastapi",
        "starlette",
        "uvicorn",
        "sqlalchemy",
        "alembic",
        "psycopg",
        "httpx",
        "jinja2",
    } <= blocked
    assert {"argon2", "limits", "prometheus_client", "sse_starlette", "pydantic_settings"} <= blocked
    assert {"celery", "kombu", "redis", "docker"} <= blocked
    assert (
        not {"jax", "numpy", "pydantic", "typer", "markdown_it", "latex2mathml", "json_source_map"} & blocked
    )
    # The tests' extra keeps every role.
    assert "jax-judge[service,distributed,docker]" in PYPROJECT["optional-dependencies"]["test"]


def _lock(name: str) -> dict[str, str]:
    """A lock file's entries: package name -> its pin and hash lines (the ``# via`` notes left out)."""
    entries: dict[str, list[str]] = {}
    current = ""
    for line in (ROOT / "requirements" / name).read_text().splitlines():
        if not line.startswith(" "):
            current = canonicalize_name(line.split("==")[0])
            entries[current] = [line]
        elif "# via" not in line:
            entries[current].append(line)
    return {name: "\n".join(lines) for name, lines in entries.items()}


def test_the_engine_lock_is_the_engine_part_of_the_runtime_lock() -> None:
    """engine.lock pins the engine's packages exactly as runtime.lock does (same versions, same hashes),
    and none that only an extra brings; runtime.lock is a part of test.lock."""
    engine, runtime, test = _lock("engine.lock"), _lock("runtime.lock"), _lock("test.lock")
    assert {canonicalize_name(Requirement(r).name) for r in PYPROJECT["dependencies"]} <= set(engine)
    assert all(runtime[name] == entry for name, entry in engine.items())
    assert not {"fastapi", "sqlalchemy", "celery", "redis", "docker", "uvicorn", "httpx"} & set(engine)
    assert len(engine) < len(runtime) and all(test[name] == entry for name, entry in runtime.items())


def test_the_problem_check_workflow_installs_the_engine_only() -> None:
    workflow = (ROOT / ".github" / "workflows" / "problem-check.yml").read_text()
    assert "run: scripts/setup --engine" in workflow
    assert re.search(r"^\s+run: scripts/setup\s*$", workflow, re.MULTILINE) is None
    setup = (ROOT / "scripts" / "setup").read_text()
    assert "lock=requirements/engine.lock" in setup


# ---------------------------------------------------------------------------------------------- commands


def judge(
    *args: str, blocked: Iterable[str], env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """``judge ARGS`` in a subprocess in which the ``blocked`` packages cannot be imported."""
    paths = [str(HOOK), *filter(None, os.environ.get("PYTHONPATH", "").split(os.pathsep))]
    return subprocess.run(
        [sys.executable, "-m", "judge", *args],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=ROOT,
        env={
            **os.environ,
            **(env or {}),
            "PYTHONPATH": os.pathsep.join(paths),
            "JUDGE_TEST_UNIMPORTABLE": ",".join(sorted(blocked)),
        },
    )


def test_the_hook_makes_a_package_unimportable() -> None:
    """The control: under the hook an extra's package is missing, and the engine's are not."""
    paths = os.pathsep.join([str(HOOK), os.environ.get("PYTHONPATH", "")])
    code = "import pydantic\ntry:\n    import fastapi\nexcept ModuleNotFoundError as e:\n    print(e.name)"
    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "PYTHONPATH": paths, "JUDGE_TEST_UNIMPORTABLE": "fastapi"},
    )
    assert out.returncode == 0 and out.stdout.strip() == "fastapi", out.stderr


@pytest.mark.slow
def test_judge_check_needs_no_extra() -> None:
    out = judge("check", FIXTURE_SLUG, "-q", *INSECURE, blocked=extra_only_modules())
    assert out.returncode == 0, out.stdout + out.stderr
    assert "1 problem checked: 0 errors" in out.stdout


@pytest.mark.slow
def test_judge_grade_and_run_need_no_extra() -> None:
    blocked = extra_only_modules()
    graded = judge("grade", FIXTURE_SLUG, str(ACCEPTED), "--json", *INSECURE, blocked=blocked)
    assert graded.returncode == 0, graded.stderr
    assert '"verdict": "accepted"' in graded.stdout
    ran = judge("run", FIXTURE_SLUG, str(ACCEPTED), "--json", *INSECURE, blocked=blocked)
    assert ran.returncode == 0, ran.stderr


def test_the_authoring_commands_need_no_extra(tmp_path: Path) -> None:
    blocked = extra_only_modules()
    listed = judge("problems", "--problems", str(FIXTURES), blocked=blocked)
    assert listed.returncode == 0 and FIXTURE_SLUG in listed.stdout, listed.stderr
    problems = tmp_path / "problems"
    problems.mkdir()
    created = judge("new", "layer-norm", "--problems", str(problems), blocked=blocked)
    assert created.returncode == 0, created.stderr
    assert (problems / "layer-norm" / "problem.toml").is_file()
    page = tmp_path / "preview.html"
    shown = judge("preview", FIXTURE_SLUG, "--problems", str(FIXTURES), "-o", str(page), blocked=blocked)
    assert shown.returncode == 0, shown.stderr
    assert "<math" in page.read_text() or "scale_tree" in page.read_text()
    doctor = judge("doctor", "--sandbox", "process", "--insecure", "--json", blocked=blocked)
    assert doctor.returncode == 0, doctor.stderr


@pytest.mark.parametrize(
    ("args", "extra"),
    [
        (["serve"], "service"),
        (["worker"], "service,distributed"),
        (["hash-key"], "service"),
        (["erase-account", "someone"], "service"),
        (["regrade", "--submission", "s"], "service"),
        (["retire-problem", "scale-tree"], "service"),
    ],
    ids=["serve", "worker", "hash-key", "erase-account", "regrade", "retire-problem"],
)
def test_a_command_of_an_extra_names_it_without_a_traceback(args: list[str], extra: str) -> None:
    out = judge(*args, blocked=extra_only_modules())
    assert out.returncode == 2, out.stderr
    assert out.stdout == ""
    (line,) = out.stderr.splitlines()
    assert line.startswith(f"error: judge {args[0]} needs the [{extra}] extra"), line
    assert line.endswith(f"pip install 'jax-judge[{extra}]'"), line


def _distributed_only() -> set[str]:
    """The modules the [distributed] and [docker] extras bring that [service] does not."""
    service = _closure([*PYPROJECT["dependencies"], *PYPROJECT["optional-dependencies"]["service"]])
    others = _closure(
        r for name in ("distributed", "docker") for r in PYPROJECT["optional-dependencies"][name]
    )
    only = others - service
    return {
        module
        for module, dists in metadata.packages_distributions().items()
        if module.isidentifier() and all(canonicalize_name(d) in only for d in dists)
    }


def test_the_service_needs_no_queue_client_until_a_queue_is_configured() -> None:
    """A lone ``judge serve`` ([service]) imports its app without Celery, Redis or the Docker SDK; with
    JUDGE_QUEUE_URL it says the [distributed] extra is needed, in one line."""
    blocked = _distributed_only()
    assert {"celery", "kombu", "redis", "docker"} <= blocked and "fastapi" not in blocked
    paths = os.pathsep.join([str(HOOK), os.environ.get("PYTHONPATH", "")])
    imported = subprocess.run(
        [sys.executable, "-c", "import judge.service.app, judge.service.state, judge.service.api_errors"],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": paths, "JUDGE_TEST_UNIMPORTABLE": ",".join(sorted(blocked))},
    )
    assert imported.returncode == 0, imported.stderr
    out = judge("serve", blocked=blocked, env={"JUDGE_QUEUE_URL": "redis://127.0.0.1:1/0"})
    assert out.returncode == 2, out.stderr
    assert out.stderr.splitlines() == [
        "error: judge serve with JUDGE_QUEUE_URL needs the [distributed] extra (celery is not installed): "
        "pip install 'jax-judge[distributed]'"
    ]


def test_the_docker_backend_names_its_extra() -> None:
    out = judge("doctor", "--sandbox", "docker", blocked={"docker"})
    assert out.returncode == 1
    (line,) = out.stderr.splitlines()
    assert line.startswith("error: the 'docker' sandbox is not available on this host")
    assert line.endswith("pip install 'jax-judge[docker]'")


# ---------------------------------------------------------------------------------------------- the source


def _runtime_imports(tree: ast.AST, *, functions: bool) -> Iterator[tuple[ast.Import | ast.ImportFrom, bool]]:
    """Every import of ``tree`` that runs (not under ``if TYPE_CHECKING``), with whether it is inside a
    function; inside functions only when ``functions``."""

    def walk(node: ast.AST, in_function: bool) -> Iterator[tuple[ast.Import | ast.ImportFrom, bool]]:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.If) and "TYPE_CHECKING" in ast.unparse(child.test):
                yield from (pair for stmt in child.orelse for pair in walk_one(stmt, in_function))
                continue
            yield from walk_one(child, in_function)

    def walk_one(node: ast.AST, in_function: bool) -> Iterator[tuple[ast.Import | ast.ImportFrom, bool]]:
        if isinstance(node, ast.Import | ast.ImportFrom):
            yield node, in_function
            return
        inner = in_function or isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda)
        if inner and not functions:
            return
        yield from walk(node, inner)

    yield from walk(tree, False)


def _names(node: ast.Import | ast.ImportFrom, package: list[str]) -> list[str]:
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    if node.level:
        base = package[: len(package) - node.level + 1]
        origin = ".".join([*base, node.module] if node.module else base)
    else:
        origin = node.module or ""
    return [f"{origin}.{alias.name}" for alias in node.names]


def _package_of(module: str, is_package: bool) -> list[str]:
    return module.split(".") if is_package else module.split(".")[:-1]


def _engine_modules() -> dict[str, tuple[Path, bool]]:
    return {
        module: where
        for module, where in _modules().items()
        if room(module) not in SERVICE_ROOMS and module not in SERVICE_MODULES and module != "judge.cli"
    }


def test_the_engine_imports_no_extra_package() -> None:
    """judge/ (less the service's rooms and settings) and sandbox/: no import of a package only an extra
    brings, anywhere in a module (functions and TYPE_CHECKING included), but the docker backend's SDK
    inside its methods."""
    blocked = extra_only_modules()
    found = []
    for module, (path, is_package) in sorted(_engine_modules().items()):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        package = _package_of(module, is_package)
        top_level = {id(node) for node, _ in _runtime_imports(tree, functions=False)}
        for node in ast.walk(tree):
            if not isinstance(node, ast.Import | ast.ImportFrom):
                continue
            for name in _names(node, package):
                top = name.partition(".")[0]
                if top not in blocked:
                    continue
                if module == DOCKER_BACKEND and top == "docker" and id(node) not in top_level:
                    continue
                found.append(f"{module}:{node.lineno} imports {name}")
    assert {"judge.core.grader", "judge.check", "judge.cli"} - set(_engine_modules()) == {"judge.cli"}
    assert not found, "the engine imports an extra's package:\n" + "\n".join(found)


def test_the_command_line_imports_the_service_only_inside_its_extra_guard() -> None:
    """judge/cli.py: an import of the service's rooms or settings, or of an extra's package, is inside a
    ``with _extra(...)`` block (which names the extra when it is missing), under TYPE_CHECKING, or judge
    preview's page modules; and those import only the engine when they are loaded."""
    blocked = extra_only_modules()
    modules = _modules()

    def service_side(name: str) -> bool:
        parts = name.split(".")
        known = next(
            (".".join(parts[:n]) for n in range(len(parts), 0, -1) if ".".join(parts[:n]) in modules), ""
        )
        return name.partition(".")[0] in blocked or (
            known not in PREVIEW_MODULES and (room(known) in SERVICE_ROOMS or known in SERVICE_MODULES)
        )

    path, _ = modules["judge.cli"]
    tree = ast.parse(path.read_text(encoding="utf-8"))
    guarded = {
        id(inner)
        for node in ast.walk(tree)
        if isinstance(node, ast.With)
        and any(
            isinstance(item.context_expr, ast.Call) and ast.unparse(item.context_expr.func) == "_extra"
            for item in node.items
        )
        for inner in ast.walk(node)
    }
    unguarded = [
        f"judge.cli:{node.lineno} imports {name}"
        for node, _ in _runtime_imports(tree, functions=True)
        for name in _names(node, ["judge"])
        if service_side(name) and id(node) not in guarded
    ]
    assert guarded, "judge.cli has no _extra guard"
    assert not unguarded, "imports of the service outside an _extra guard:\n" + "\n".join(unguarded)
    # judge preview's modules: judge.web's own loading, and judge.web.preview and assets whole.
    leaks = []
    for module in sorted(PREVIEW_MODULES):
        file, is_package = modules[module]
        whole = module != "judge.web"  # judge.web.mount (the service's) imports the routes when called
        for node, _ in _runtime_imports(ast.parse(file.read_text(encoding="utf-8")), functions=whole):
            for name in _names(node, _package_of(module, is_package)):
                if service_side(name):
                    leaks.append(f"{module}:{node.lineno} imports {name}")
    assert not leaks, "judge preview's modules load the service:\n" + "\n".join(leaks)
