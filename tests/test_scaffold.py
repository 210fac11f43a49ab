"""``judge new`` with a declared signature, and ``judge preview``: what they write, and what they refuse."""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from judge.authoring.scaffold import ArgDecl, ScaffoldError, create
from judge.check import run_checks
from judge.core.problems import import_trusted_file, load_problem, load_spec
from tests.conftest import FIXTURE_SLUG, FIXTURES, ROOT

#: What a filled-in scaffold still leaves to its author: solutions to write, explanations of the examples,
#: the requirements its statement states and what backs them, and how its sums are graded.
AUTHORS_LEFT = {
    ("rules", "error"),
    ("examples", "warning"),
    ("requirements", "warning"),
    ("order", "error"),
}


def judge(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "judge", *args], capture_output=True, text=True, timeout=300, cwd=cwd
    )


def test_new_with_a_signature_writes_a_package_that_fits_it(tmp_path: Path) -> None:
    out = judge(
        "new", "ema-update", "--problems", "problems",
        "--arg", "params:pytree", "--arg", "grads:pytree",
        "--arg", "decay:number", "--arg", "axis:number:static",
        "--dtype", "float32",
        cwd=tmp_path,
    )  # fmt: skip
    assert out.returncode == 0, out.stderr
    root = tmp_path / "problems" / "ema-update"
    spec = load_spec(root)
    assert [(a.name, a.kind, a.traced) for a in spec.args] == [
        ("params", "pytree", True),
        ("grads", "pytree", True),
        ("decay", "number", True),
        ("axis", "number", False),
    ]
    assert spec.dtypes.allowed == ["float32"] and spec.function == "ema_update"
    starter = ast.parse((root / "starter.py").read_text())
    (function,) = [n for n in starter.body if isinstance(n, ast.FunctionDef)]
    assert [a.arg for a in function.args.args] == ["params", "grads", "decay", "axis"]
    # The case generator wrote the hidden cases, deterministically; every case fits the validator.
    generator = import_trusted_file(root / "generate_cases.py", "test_generator")
    assert generator.render(generator.build_cases()) == (root / "cases" / "hidden.json").read_text()
    problem = load_problem(root)
    assert len(problem.hidden_cases) >= 8 and {c.dtype for c in problem.cases} == {"float32"}
    assert all(problem.violations(case) == [] for case in problem.cases)
    assert (root / "cases" / "README.md").is_file()
    for folder in ("accepted", "wrong_answer", "trace_error"):
        assert (root / "solutions" / folder).is_dir()
    # The next steps name every file with its path, in the order to work on them.
    steps = [line.split()[1] for line in out.stdout.splitlines() if line.strip()[:1].isdigit()]
    written = sorted(str(p.relative_to(tmp_path)) for p in tmp_path.rglob("*") if p.is_file())
    assert sorted(steps) == written
    assert steps[0] == "reference/ema_update.py"
    assert "judge preview ema-update --problems problems" in out.stdout


def test_new_with_a_signature_fails_check_naming_what_is_left_to_write(tmp_path: Path) -> None:
    create("ema-update", tmp_path / "problems", args=[ArgDecl.parse("x:pytree"), ArgDecl.parse("c:number")])
    report = run_checks([tmp_path / "problems" / "ema-update"], separate_runs=False)
    errors = {(f.check, f.message.split(":")[0]) for f in report.findings if f.severity.value == "error"}
    assert ("rules", "rule accepted") in errors and ("rules", "rule wrong-answer") in errors
    assert any(check == "reference" for check, _ in errors)
    reference = next(f for f in report.findings if f.check == "reference")
    assert "NotImplementedError" in reference.message and reference.line is not None


def test_new_writes_cases_for_every_argument_kind(tmp_path: Path) -> None:
    """Arrays (float, int32, bool; given ranks), static ints and tuples, a menu function and a number: the
    package's cases fit its validator, JUNK is refused, EDGE accepted, every rank and static value is
    covered and the examples have look-alikes; once a reference exists only the author's parts are left."""
    declared = ["x:array", "y:array:1,2", "step:array:int32:0", "mask:array:bool:2"]
    declared += ["n:int", "sizes:int_tuple", "f:function", "c:number"]
    out = judge("new", "mix-kinds", "--problems", "problems", *[f"--arg={d}" for d in declared], cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    root = tmp_path / "problems" / "mix-kinds"
    spec = load_spec(root)
    assert [(a.name, a.kind, a.traced, a.dtype, a.ndim) for a in spec.args] == [
        ("x", "array", True, "case", [1]),
        ("y", "array", True, "case", [1, 2]),
        ("step", "array", True, "int32", [0]),
        ("mask", "array", True, "bool", [2]),
        ("n", "int", False, "case", []),
        ("sizes", "int_tuple", False, "case", []),
        ("f", "function", False, "case", []),
        ("c", "number", True, "case", []),
    ]
    assert spec.functions == "functions.py" and spec.args[6].choices == ["square", "sine"]
    assert "problems/mix-kinds/functions.py" in out.stdout
    problem = load_problem(root)
    assert all(problem.violations(case) == [] for case in problem.cases)
    ranks = {len(np.shape(case.inputs[1])) for case in problem.hidden_cases}
    assert ranks == {1, 2}
    assert {case.inputs[2].dtype.name for case in problem.cases} == {"int32"}
    assert {case.inputs[3].dtype.name for case in problem.cases} == {"bool"}
    assert {type(case.inputs[4]) for case in problem.cases} == {int}
    assert {type(case.inputs[5]) for case in problem.cases} == {tuple}
    (tmp_path / "reference" / "mix_kinds.py").write_text(
        "import jax.numpy as jnp\n\n\ndef mix_kinds(x, y, step, mask, n, sizes, f, c):\n"
        "    shift = jnp.sum(mask) + step + n * sum(sizes)\n"
        "    return {'x': f(x) * c + shift.astype(x.dtype), 'y': jnp.sum(y)}\n"
    )
    report = run_checks([root], separate_runs=False)
    left = {(f.check, f.severity.value) for f in report.findings}
    # What is left is the author's: solutions to write, explanations of the examples, the requirements
    # the statement states and what backs them, and how its sums are graded ([compare] magnitude: the
    # reference sums, so the order check asks for a magnitude function or "none" with a reason).
    assert left == AUTHORS_LEFT, [str(f) for f in report.findings]
    assert all("rule signature" not in f.message for f in report.findings)
    checks = {c.name: c.status for c in report.problems[0].checks}
    for name in ("spec", "statement", "starter", "cases", "reference", "coverage", "lookalikes"):
        assert checks[name] == "passed", (name, checks[name])
    (note,) = report.problems[0].check("coverage").notes
    assert "`y`: a float array with 1 or 2 dimensions, ranks 1, 2" in note
    assert (
        "`mask`: a bool array with 2 dimensions, ranks 2" in note and "`f`: 2 distinct static values" in note
    )


def test_new_writes_cases_for_keys_uint32_bools_and_strings(tmp_path: Path) -> None:
    """The kinds the first scaffold lacked: a typed PRNG key, a uint32 array, a static bool and a str."""
    declared = ["k:key", "bits:array:uint32:1", "flag:bool", "mode:str", "x:array"]
    flags = [f"--arg={d}" for d in declared]
    out = judge("new", "more-kinds", "--problems", "problems", *flags, cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    root = tmp_path / "problems" / "more-kinds"
    spec = load_spec(root)
    assert [(a.name, a.kind, a.traced, a.dtype) for a in spec.args] == [
        ("k", "key", True, "case"),
        ("bits", "array", True, "uint32"),
        ("flag", "bool", False, "case"),
        ("mode", "str", False, "case"),
        ("x", "array", True, "case"),
    ]
    problem = load_problem(root)
    assert all(problem.violations(case) == [] for case in problem.cases)
    assert len({tuple(case.inputs[0].data.tolist()) for case in problem.hidden_cases}) >= 2
    assert {case.inputs[1].dtype.name for case in problem.cases} == {"uint32"}
    assert {case.inputs[2] for case in problem.hidden_cases} == {True, False}
    (tmp_path / "reference" / "more_kinds.py").write_text(
        "import jax\nimport jax.numpy as jnp\n\n\ndef more_kinds(k, bits, flag, mode, x):\n"
        "    noise = jax.random.normal(k, x.shape, x.dtype)\n"
        "    shift = jnp.sum(bits).astype(x.dtype) * (2 if flag else 1) * (3 if mode == 'high' else 1)\n"
        "    return x + noise + shift\n"
    )
    report = run_checks([root], separate_runs=False)
    left = {(f.check, f.severity.value) for f in report.findings}
    assert left == AUTHORS_LEFT, [str(f) for f in report.findings]
    checks = {c.name: c.status for c in report.problems[0].checks}
    for name in ("spec", "statement", "starter", "cases", "reach", "promises", "reference", "coverage"):
        assert checks[name] == "passed", (name, checks[name])


@pytest.mark.parametrize(
    ("text", "declared"),
    [
        ("x:array", ArgDecl("x", "array", dtype="case", ndim=(1,))),
        ("k:key", ArgDecl("k", "key", traced=True)),
        ("b:array:uint32:0", ArgDecl("b", "array", dtype="uint32", ndim=(0,))),
        ("flag:bool", ArgDecl("flag", "bool", traced=False)),
        ("mode:str", ArgDecl("mode", "str", traced=False)),
        ("x:array:2", ArgDecl("x", "array", dtype="case", ndim=(2,))),
        ("step:array:int32:0", ArgDecl("step", "array", dtype="int32", ndim=(0,))),
        ("m:array:1,2:bool", ArgDecl("m", "array", dtype="bool", ndim=(1, 2))),
        ("n:int", ArgDecl("n", "int", traced=False)),
        ("s:int_tuple", ArgDecl("s", "int_tuple", traced=False)),
        ("f:function", ArgDecl("f", "function", traced=False)),
        ("c:number:static", ArgDecl("c", "number", traced=False)),
    ],
)
def test_arg_declarations_of_every_kind(text: str, declared: ArgDecl) -> None:
    assert ArgDecl.parse(text) == declared


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--arg", "x"], "expected NAME:KIND"),
        (["--arg", "x:tensor"], "unknown kind 'tensor'"),
        (["--arg", "class:pytree"], "not a valid Python argument name"),
        (["--arg", "x:pytree", "--arg", "x:number"], "argument names repeat: x"),
        (["--arg", "x:number:dynamic"], "may only be 'static'"),
        (["--dtype", "float64"], "--dtype 'float64'"),
        (["--dtype", "bfloat16"], "float32 is required"),
        (["--arg", "x:array:float64"], "'float64' is neither a dtype"),
        (["--arg", "x:array:9"], "rank 9 is more than 8 dimensions"),
        (["--arg", "x:array:1,1"], "a rank repeats"),
        (["--arg", "x:array:1:2"], "'2' is neither a dtype"),
        (["--arg", "n:int:static"], "kind 'int' takes no options"),
        ([f"--arg=a{i}:number" for i in range(9)], "9 arguments, at most 8"),
    ],
)
def test_new_refuses_a_bad_signature_and_writes_nothing(
    tmp_path: Path, args: list[str], message: str
) -> None:
    out = judge("new", "bad-one", "--problems", "problems", *args, cwd=tmp_path)
    assert out.returncode == 2 and message in out.stderr, out.stderr
    assert not (tmp_path / "problems").exists() and not (tmp_path / "reference").exists()


def test_new_refuses_bad_names(tmp_path: Path) -> None:
    with pytest.raises(ScaffoldError, match="not a valid slug"):
        create("Bad_Slug", tmp_path / "problems")
    with pytest.raises(ScaffoldError, match="already exists"):
        create("twice", tmp_path / "problems")
        create("twice", tmp_path / "problems")


# --------------------------------------------------------------------------------------------- preview


def test_preview_renders_the_statement_as_learners_see_it(tmp_path: Path) -> None:
    target = tmp_path / "out" / "preview.html"
    env_cache = {"JUDGE_CACHE_DIR": str(tmp_path / "cache")}
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "judge",
            "preview",
            FIXTURE_SLUG,
            "--problems",
            str(FIXTURES),
            "-o",
            str(target),
        ],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=ROOT,
        env={**os.environ, **env_cache},
    )
    assert out.returncode == 0, out.stderr
    assert target.as_uri() in out.stdout
    page = target.read_text()
    problem = load_problem(FIXTURES / FIXTURE_SLUG)
    assert f'<h1 id="problem-title">{problem.spec.title}</h1>' in page
    assert page.count("<h3>Example ") == len(problem.public_cases)
    assert "Output: {&quot;b&quot;: 1.5, &quot;w&quot;: [3.0, 6.0]}" in page  # the reference's output
    assert 'display="block"' in page and 'display="inline"' in page  # MathML, as the page gets it
    assert "How your function is run and judged" in page  # the rules, generated from the spec
    assert "{{examples}}" not in page and "{{rules}}" not in page
    assert "<script" not in page  # nothing runs: the page is static
    # Self-contained: the page's stylesheet is in it, its math font as a data URL, nothing served.
    assert "content-visibility" in page and "data:font/woff2;base64," in page
    assert "/static/" not in page


def test_preview_of_an_unknown_problem_is_a_usage_error(tmp_path: Path) -> None:
    out = judge("preview", "no-such-problem", "--problems", str(FIXTURES), "-o", str(tmp_path / "x.html"))
    assert out.returncode == 2 and "known" in out.stderr and FIXTURE_SLUG in out.stderr
    assert not (tmp_path / "x.html").exists()


def test_preview_when_the_reference_fails_exits_1(tmp_path: Path) -> None:
    create("unwritten", tmp_path / "problems")
    out = judge("preview", "unwritten", "--problems", str(tmp_path / "problems"), "--json", cwd=tmp_path)
    assert out.returncode == 2  # --json is not an option of preview: a usage error, as JSON
    assert json.loads(out.stdout)["error"]["code"] == "usage"
    out = judge("preview", "unwritten", "--problems", str(tmp_path / "problems"), cwd=tmp_path)
    assert out.returncode == 1 and "NotImplementedError" in out.stderr
    assert not list(tmp_path.glob("*.html"))


def test_new_fits_its_words_to_the_signature_it_was_given(tmp_path: Path) -> None:
    """No pytree tag, dtype line or float constraint without floats; a tuple that may be a shape is not
    asked to increase; no placeholder file in the verdict folders; bfloat16 Run inputs named."""
    root = tmp_path / "problems"
    create("int-shape", root, args=[ArgDecl.parse("ids:array:int32"), ArgDecl.parse("shape:int_tuple")])
    package = root / "int-shape"
    spec = load_spec(package)
    assert "pytree" not in spec.tags
    statement = (package / "statement.md").read_text()
    assert "share a dtype" not in statement and "increasing" not in statement
    assert "increasing" not in (package / "validator.py").read_text()
    assert not list((package / "solutions").glob("*/README.md"))
    create("tree-scale", root, args=[ArgDecl.parse("tree:pytree"), ArgDecl.parse("c:number")])
    text = (root / "tree-scale" / "statement.md").read_text()
    assert "pytree" in load_spec(root / "tree-scale").tags
    assert "unless you choose bfloat16 on the page" in text
