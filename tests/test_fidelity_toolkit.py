"""Author toolkit fixes of issue 27: the scaffold's cases approach every bound its validator states, the
generated rules describe a traced 0-d argument by what it is and name the runtime_error class, and
``judge preview`` leaves the working directory alone."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from judge.authoring.scaffold import ArgDecl, create
from judge.authoring.statement import render_rules
from judge.check.context import import_file
from judge.check.reach_check import approached, factor_for
from judge.constraints import recording_bounds
from judge.core.problems import load_problem
from judge.core.spec import ProblemSpec
from judge.web.preview import default_output
from tests.conftest import FIXTURES, ROOT


def _unreached(root: Path) -> list[str]:
    problem = load_problem(root)
    validator = import_file(root / "validator.py", "validator")
    names = [a.name for a in problem.spec.args]
    with recording_bounds() as recorder:
        for case in problem.hidden_cases:
            assert validator.validate(dict(zip(names, case.inputs, strict=True)), case.dtype) == []
    reach = problem.spec.reach
    bounds = recorder.bounds.items()
    return [key for key, b in bounds if not approached(b, factor_for(reach, key), reach.zero_band)]


def test_the_scaffold_writes_hidden_cases_that_approach_every_bound(tmp_path: Path) -> None:
    create("double-tree", tmp_path / "problems")
    declared = ["x:array", "y:array:1,2", "step:array:int32:0", "mask:array:bool:2"]
    declared += ["n:int", "sizes:int_tuple", "f:function", "c:number"]
    create("mix-kinds", tmp_path / "problems", args=[ArgDecl.parse(d) for d in declared])
    for slug in ("double-tree", "mix-kinds"):
        root = tmp_path / "problems" / slug
        subprocess.run([sys.executable, str(root / "generate_cases.py")], check=True, capture_output=True)
        assert _unreached(root) == [], slug


def test_every_fixture_problem_approaches_every_bound() -> None:
    for root in sorted(p for p in FIXTURES.iterdir() if (p / "problem.toml").is_file()):
        assert _unreached(root) == [], root.name


def _spec(arg: dict[str, object]) -> ProblemSpec:
    return ProblemSpec.model_validate(
        {
            "slug": "demo",
            "title": "Demo",
            "difficulty": "easy",
            "function": "demo",
            "reference": "demo",
            "args": [{"name": "x", "kind": "pytree"}, arg],
            "output": {"kind": "pytree"},
        }
    )


def test_a_traced_int32_scalar_is_not_called_a_step_counter() -> None:
    text = render_rules(_spec({"name": "seed", "kind": "array", "dtype": "int32", "ndim": [0]}))
    assert "step counter" not in text
    assert "`seed` arrives traced as" in text and "never `int(seed)`" in text


def test_a_traced_bool_scalar_is_chosen_with_where() -> None:
    text = render_rules(_spec({"name": "flag", "kind": "array", "dtype": "bool", "ndim": [0]}))
    assert "jnp.where(flag, a, b)" in text and "astype(jnp.float32)" not in text


def test_every_statement_names_the_runtime_error_class() -> None:
    text = render_rules(_spec({"name": "lr", "kind": "number"}))
    assert "`IndexError`" in text and "`runtime_error`" in text and "`trace_error`" in text


def test_preview_writes_to_the_temporary_folder_not_the_working_directory(tmp_path: Path) -> None:
    out = default_output("scale-tree")
    existed = out.parent.is_dir()
    out.unlink(missing_ok=True)
    done = subprocess.run(
        [sys.executable, "-m", "judge", "preview", "scale-tree", "--problems", str(FIXTURES)],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
        env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"},
    )
    try:
        assert done.returncode == 0, done.stderr
        assert list(tmp_path.iterdir()) == []
        assert out.is_file() and str(out) in done.stdout
    finally:
        out.unlink(missing_ok=True)
        if not existed and out.parent.is_dir() and not any(out.parent.iterdir()):
            out.parent.rmdir()
