"""``judge check`` on deliberately broken problem packages: each breaks one thing and expects the one finding
that names it (the check, where, its line, and what).

Each package is the test fixture (``tests/fixtures``, a complete package that passes ``--werror``) copied to
``tmp_path`` with its reference, and edited; no test here names a problem of the repository. Checks run
without the reference's separate hash-seed processes (``separate_runs=False``) except where that is the
point, and those that grade solutions use the process backend.
"""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import ClassVar

import pytest

from judge.casegen import render
from judge.check import CheckReport, Finding, Severity, run_checks
from judge.check.context import CheckContext
from judge.check.diagnostics import Diagnostics
from judge.check.solutions_check import grade_files
from judge.core.problems import load_problem
from judge.core.verdicts import Verdict
from sandbox.backends import get_backend
from sandbox.backends.base import Backend, PopenProcess, Protection, SandboxedProcess, WarmUp
from sandbox.host.resource_limits import SandboxLimits
from tests.conftest import FIXTURE_SLUG, FIXTURES

SLUG = FIXTURE_SLUG
FUNCTION = SLUG.replace("-", "_")
#: hash("scale") % 3 is 2 under PYTHONHASHSEED=1 and 1 under PYTHONHASHSEED=2 (the reference check's seeds).
HASHED = "scale"


@pytest.fixture(autouse=True)
def _private_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("JUDGE_CACHE_DIR", str(tmp_path / "cache"))


def copy_problem(tmp_path: Path, *, keep_generator: bool = False) -> Path:
    """A copy of the fixture package and its reference under ``tmp_path``."""
    root = tmp_path / "problems" / SLUG
    shutil.copytree(FIXTURES / SLUG, root, ignore=shutil.ignore_patterns("__pycache__"))
    (tmp_path / "reference").mkdir(exist_ok=True)
    shutil.copy(FIXTURES.parent / "reference" / f"{FUNCTION}.py", tmp_path / "reference" / f"{FUNCTION}.py")
    if not keep_generator:  # so edits of hidden.json are not also reported as drift from the generator
        (root / "generate_cases.py").unlink()
    return root


def reference_of(root: Path) -> Path:
    return root.parent.parent / "reference" / f"{FUNCTION}.py"


def edit(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert old in text, f"{old!r} not in {path}"
    path.write_text(text.replace(old, new, 1))


def edit_cases(path: Path, change: Callable[[list[dict]], list[dict]]) -> None:  # type: ignore[type-arg]
    data = json.loads(path.read_text())
    path.write_text(render(change(data["cases"])))  # one case per line, as generators write them


def line_with(path: Path, text: str) -> int:
    return next(n for n, line in enumerate(path.read_text().splitlines(), start=1) if text in line)


def check(root: Path, *, grade: bool = False, separate_runs: bool = False) -> CheckReport:
    backend = get_backend("process") if grade else None
    try:
        return run_checks([root], backend=backend, concurrency=2, separate_runs=separate_runs)
    finally:
        if backend is not None:
            backend.close()  # its zygote


def only(report: CheckReport, check_name: str, *, where: str = "", message: str = "") -> Finding:
    """The one error of ``check_name`` whose where and message contain the given texts (``where`` as a
    whole name: ``case example_1`` does not match ``case example_1_lookalike``)."""
    named = re.compile(re.escape(where) + r"(?![\w-])")
    found = [
        f
        for f in report.findings
        if f.check == check_name
        and f.severity is Severity.ERROR
        and named.search(f.where)
        and message in f.message
    ]
    assert len(found) == 1, "\n".join(str(f) for f in report.findings)
    assert report.exit_code == 1
    return found[0]


def sole(report: CheckReport) -> Finding:
    """The report's one finding: one mistake, one finding."""
    assert len(report.findings) == 1, "\n".join(str(f) for f in report.findings)
    return report.findings[0]


def test_the_fixture_itself_is_clean(tmp_path: Path) -> None:
    report = check(copy_problem(tmp_path, keep_generator=True))
    assert report.findings == [], "\n".join(str(f) for f in report.findings)


# --------------------------------------------------------------------------------------------------- spec


def test_bad_spec_field_names_file_field_and_line(tmp_path: Path) -> None:
    root = copy_problem(tmp_path)
    spec = root / "problem.toml"
    edit(spec, 'difficulty = "easy"', 'difficulty = "impossible"')
    edit(spec, "case_time_s = 10", "case_time_s = -1")
    report = check(root)
    finding = only(report, "spec", where=f"problems/{SLUG}/problem.toml: difficulty", message="'easy'")
    assert finding.line == 3 and finding.file == str(spec)
    assert finding.location == f"problems/{SLUG}/problem.toml:3: difficulty"
    limit = only(report, "spec", where="problem.toml: limits.case_time_s", message="greater than 0")
    assert limit.line == line_with(spec, "case_time_s = -1")
    skipped = [c.name for c in report.problems[0].checks if c.skipped]
    assert skipped == [
        "rules",
        "statement",
        "starter",
        "requirements",
        "cases",
        "reach",
        "promises",
        "reference",
        "accuracy",
        "order",
        "examples",
        "coverage",
        "lookalikes",
        "mistakes",
        "solutions",
        "margins",
        "cost",
        "backend",
    ]


@pytest.mark.parametrize(
    ("old", "new", "where", "message"),
    [
        ("traced = true", 'traced = "no"', "args.0.traced", "valid boolean, not 'no'"),
        ("case_time_s = 10", 'case_time_s = "10"', "limits.case_time_s", "write the number without quotes"),
        ("traced = true", "tracd = true", "args.0.tracd", "unknown key 'tracd'; did you mean 'traced'?"),
        ('title = "Scale a Tree"', 'titel = "Scale a Tree"', "titel", "did you mean 'title'?"),
        ("case_time_s = 10", "case_time = 10", "limits.case_time", "did you mean 'case_time_s'?"),
    ],
    ids=["string-for-bool", "string-for-number", "unknown-arg-key", "unknown-top-key", "unknown-limit"],
)
def test_strict_spec_no_coercion_and_did_you_mean(
    tmp_path: Path, old: str, new: str, where: str, message: str
) -> None:
    root = copy_problem(tmp_path)
    spec = root / "problem.toml"
    edit(spec, old, new)
    report = check(root)
    finding = sole(report) if where != "titel" else only(report, "spec", where="titel")
    assert finding.check == "spec" and finding.where.endswith(where), finding
    assert message in finding.message, finding
    assert finding.line == line_with(spec, new), finding


def test_the_loader_names_the_line_too(tmp_path: Path) -> None:
    root = copy_problem(tmp_path)
    edit(root / "problem.toml", "case_time_s = 10", "case_tme_s = 10")
    from judge.core.errors import ProblemError

    with pytest.raises(ProblemError) as caught:
        load_problem(root)
    assert caught.value.line == line_with(root / "problem.toml", "case_tme_s")
    assert "did you mean 'case_time_s'?" in str(caught.value) and f"(line {caught.value.line})" in str(
        caught.value
    )


def test_slug_must_match_folder(tmp_path: Path) -> None:
    root = copy_problem(tmp_path)
    edit(root / "problem.toml", f'slug = "{SLUG}"', 'slug = "other"')
    finding = only(check(root), "spec", where="problem.toml: slug", message="differs from the folder name")
    assert finding.line == 1


def test_folder_may_not_allow_accepted_in_place_of_a_failure(tmp_path: Path) -> None:
    root = copy_problem(tmp_path)
    spec = root / "problem.toml"
    spec.write_text(spec.read_text() + '\n[solutions.also_allow]\nwrong_answer = ["accepted"]\n')
    finding = only(
        check(root), "spec", where="solutions.also_allow.wrong_answer", message="hide a wrong solution"
    )
    assert finding.line == line_with(spec, 'wrong_answer = ["accepted"]')


def test_a_missing_case_file_is_named_at_its_line_in_the_spec(tmp_path: Path) -> None:
    root = copy_problem(tmp_path)
    (root / "cases" / "hidden.json").unlink()
    finding = only(check(root), "spec", where="case_files", message="lists cases/hidden.json")
    assert finding.line == line_with(root / "problem.toml", "case_files =")


# ----------------------------------------------------------------------------------------------- rules


def test_rules_are_enforced_with_their_names(tmp_path: Path) -> None:
    root = copy_problem(tmp_path)
    (root / "solutions" / "accepted" / "float32_then_cast.py").unlink()
    shutil.rmtree(root / "solutions" / "trace_error")
    (root / "solutions" / "maybe").mkdir()
    edit_cases(root / "cases" / "hidden.json", lambda cases: cases[:7])
    report = check(root)
    rules = sorted(f.message.split(":")[0] for f in report.findings if f.check == "rules")
    assert rules == [
        "rule accepted",
        "rule hidden-cases",
        "rule solution-folders",
        "rule trace-error",
    ], "\n".join(str(f) for f in report.findings)
    hidden = only(report, "rules", message="rule hidden-cases")
    assert "7 hidden cases, between 8 and 64 wanted" in hidden.message
    assert hidden.file == str(root / "cases" / "hidden.json") and hidden.line == 1


def test_a_case_too_large_breaks_the_case_size_rule(tmp_path: Path) -> None:
    root = copy_problem(tmp_path)
    edit_cases(
        root / "cases" / "hidden.json",
        lambda cases: [
            {**c, "args": {**c["args"], "tree": [[0.5] * 64] * 65}} if c["name"] == "matrix_and_bias" else c
            for c in cases
        ],
    )
    finding = only(check(root), "rules", where="case matrix_and_bias", message="rule case-size")
    assert "4161 array elements, at most 4096" in finding.message
    assert finding.line == line_with(root / "cases" / "hidden.json", '"name": "matrix_and_bias"')


# ------------------------------------------------------------------------------------- statement, starter


def test_missing_statement_is_a_statement_finding(tmp_path: Path) -> None:
    root = copy_problem(tmp_path)
    (root / "statement.md").unlink()
    only(check(root), "statement", where=f"problems/{SLUG}/statement.md", message="missing")


def test_starter_with_wrong_signature(tmp_path: Path) -> None:
    root = copy_problem(tmp_path)
    edit(root / "starter.py", f"def {FUNCTION}(tree, factor):", f"def {FUNCTION}(tree):")
    finding = only(check(root), "starter", where=f"starter.py: def {FUNCTION}")
    assert finding.message == "takes (tree), the spec declares (tree, factor)"
    assert finding.line == 4


def test_starter_without_the_function(tmp_path: Path) -> None:
    root = copy_problem(tmp_path)
    edit(root / "starter.py", f"def {FUNCTION}(", "def other(")
    finding = only(check(root), "starter", where="starter.py", message=f"does not define `{FUNCTION}`")
    assert finding.line == 1


def test_starter_that_does_not_import_what_it_uses(tmp_path: Path) -> None:
    root = copy_problem(tmp_path)
    edit(root / "starter.py", "import jax\n", "import jax.numpy as jnp\n")
    finding = only(check(root), "starter", where="starter.py: line 7", message="uses `jax`")
    assert finding.message == "uses `jax`, which it neither imports nor defines (a NameError on each Run)"
    assert finding.line == 7


def test_starter_whose_hint_names_a_module_it_does_not_import(tmp_path: Path) -> None:
    root = copy_problem(tmp_path)
    starter = f"import jax.numpy as jnp\n\n\ndef {FUNCTION}(tree, factor):\n    return tree\n"
    (root / "starter.py").write_text(starter)  # its hints tell the learner to use jax.tree.map
    finding = only(check(root), "starter", where="starter.py: hint 1")
    assert finding.message.startswith("does not import `jax`, but hint 1 tells the learner to use `jax.tree.")


# --------------------------------------------------------------------------------------------- examples


def test_a_missing_examples_line_is_one_finding(tmp_path: Path) -> None:
    root = copy_problem(tmp_path)
    edit(root / "statement.md", "{{examples}}\n", "")
    finding = sole(check(root))
    assert finding.check == "examples" and "no {{examples}} line" in finding.message
    assert finding.line == 1


def test_hand_written_stale_example_instead_of_placeholder(tmp_path: Path) -> None:
    root = copy_problem(tmp_path)
    stale = (
        '## Example\n\nInput: tree = {"b": 0.5, "w": [1.0, 2.0]}, factor = 3.0\n'
        'Output: {"b": 1.5, "w": [3.0, 7.0]}\n'
    )
    edit(root / "statement.md", "{{examples}}\n", stale)
    report = check(root)
    only(report, "examples", where="statement.md", message="no {{examples}} line")
    line = line_with(root / "statement.md", "Output: {")
    finding = only(report, "examples", where=f"statement.md: line {line}", message="matches no public case's")
    assert finding.line == line and finding.location == f"problems/{SLUG}/statement.md:{line}"
    assert '{"b": 1.5, "w": [3.0, 6.0]}' in finding.message  # the real output
    assert len(report.findings) == 4  # the missing line, and the heading, input and output lines


def test_rules_placeholder_missing_or_twice_or_hand_written(tmp_path: Path) -> None:
    root = copy_problem(tmp_path)
    edit(root / "statement.md", "{{rules}}\n", "## How your function is run and judged\n\n- jit.\n")
    report = check(root)
    only(report, "statement", where="statement.md", message="no {{rules}} line")
    only(report, "statement", where="statement.md: line", message="hand-written")
    edit(root / "statement.md", "## How your function is run and judged\n", "{{rules}}\n{{rules}}\n")
    only(check(root), "statement", where="statement.md", message="{{rules}} appears 2 times")


def test_placeholder_twice(tmp_path: Path) -> None:
    root = copy_problem(tmp_path)
    edit(root / "statement.md", "{{examples}}\n", "{{examples}}\n\n{{examples}}\n")
    finding = sole(check(root))
    assert (
        "appears 2 times" in finding.message
        and finding.line == line_with(root / "statement.md", "{{examples}}") + 2
    )


def test_expected_output_contradicting_the_reference(tmp_path: Path) -> None:
    root = copy_problem(tmp_path)
    public = root / "cases" / "public.json"
    edit(public, '"expected": {"b": 1.5, "w": [3.0, 6.0]}', '"expected": {"b": 1.5, "w": [3.0, 7.0]}')
    finding = sole(check(root))
    assert finding.check == "examples" and finding.where.endswith("case example_1.expected")
    assert 'expected["w"][1]: written 7, the reference gives 6 (difference 1' in finding.message
    assert finding.line == line_with(public, '"name": "example_1"')


def test_public_case_without_explanation_warns_and_werror_fails(tmp_path: Path) -> None:
    root = copy_problem(tmp_path)
    edit_cases(root / "cases" / "public.json", lambda cases: [{**cases[0], "explanation": None}, *cases[1:]])
    report = check(root)
    warning = sole(report)
    assert warning.severity is Severity.WARNING and warning.check == "examples"
    assert warning.where.endswith("cases/public.json: case example_1")
    assert warning.line == line_with(root / "cases" / "public.json", '"name": "example_1"')
    assert report.exit_code == 0
    assert run_checks([root], werror=True, separate_runs=False).exit_code == 1


# ------------------------------------------------------------------------------------------------ cases


def test_case_with_4d_leaf_violates_constraints(tmp_path: Path) -> None:
    root = copy_problem(tmp_path)

    def four_d(cases: list[dict]) -> list[dict]:  # type: ignore[type-arg]
        case = next(c for c in cases if c["name"] == "bare_vector")
        case["args"]["tree"] = [[[case["args"]["tree"]]]]
        return cases

    edit_cases(root / "cases" / "hidden.json", four_d)
    finding = sole(check(root))
    assert (
        finding.check == "cases" and finding.where == f"problems/{SLUG}/cases/hidden.json: case bare_vector"
    )
    assert finding.message == "violates the constraints: tree: 4 dimensions, at most 3 allowed"
    assert finding.line == line_with(root / "cases" / "hidden.json", '"name": "bare_vector"')


def test_case_with_a_factor_past_the_bound(tmp_path: Path) -> None:
    root = copy_problem(tmp_path)

    def too_big(cases: list[dict]) -> list[dict]:  # type: ignore[type-arg]
        next(c for c in cases if c["name"] == "bare_scalar")["args"]["factor"] = 1e20
        return cases

    edit_cases(root / "cases" / "hidden.json", too_big)
    finding = only(check(root), "cases", where="cases/hidden.json: case bare_scalar")
    assert finding.message.startswith("violates the constraints: factor: 1e+20")


def test_validator_that_accepts_junk(tmp_path: Path) -> None:
    root = copy_problem(tmp_path)
    (root / "validator.py").write_text(
        "JUNK = [\n    {'why': '4-D leaf', 'args': {'tree': [[[[1.0]]]], 'factor': 1.0}},\n"
        "    {'why': 'string leaf', 'args': {'tree': 'x', 'factor': 1.0}},\n]\n\n\n"
        "def validate(args, dtype):\n    return []\n"
    )
    finding = only(check(root), "cases", where="validator.py: JUNK[0] (4-D leaf)")
    assert "neither the converter nor validate() rejects it" in finding.message
    assert finding.line == 2


def test_missing_validator(tmp_path: Path) -> None:
    root = copy_problem(tmp_path)
    (root / "validator.py").unlink()
    only(check(root), "cases", where=f"problems/{SLUG}/validator.py", message="missing")


def test_a_bound_the_reference_cannot_meet_is_found_at_the_edge(tmp_path: Path) -> None:
    """Nothing bounds the values: the float32 product overflows at the edge the constraints allow."""
    root = copy_problem(tmp_path)
    validator = root / "validator.py"
    edit(validator, '        *check_max_abs(args["tree"], "tree", MAX_ABS),\n', "")
    edit(validator, "MAX_ABS = 1e15", "MAX_ABS = 1e20")
    report = check(root)
    finding = only(report, "reference", message="non-finite values")
    assert 'validator.py EDGE[0] (largest values allowed) at output["w"]' in finding.message
    assert "validator.py EDGE[1] (bfloat16 at the bound) at output" in finding.message
    junk = only(
        report, "cases", where="validator.py: JUNK[3] (value past the bound in tree)", message="was accepted"
    )
    assert junk.line == line_with(validator, "value past the bound in tree")


def test_an_edge_input_the_validator_rejects(tmp_path: Path) -> None:
    root = copy_problem(tmp_path)
    validator = root / "validator.py"
    edit(validator, '"factor": MAX_ABS}}', '"factor": 2e15}}')
    finding = only(check(root), "cases", where="validator.py: EDGE[0]")
    assert finding.message.startswith(
        "an EDGE input must satisfy the constraints, but: factor: 2000000000000000.0, must be at most"
    )
    assert finding.line == line_with(validator, '"factor": 2e15')


def test_case_file_drifted_from_its_generator(tmp_path: Path) -> None:
    root = copy_problem(tmp_path, keep_generator=True)
    hidden = root / "cases" / "hidden.json"
    edit(hidden, '"name": "bare_scalar"', '"name": "bare_scalar_renamed"')
    finding = sole(check(root))
    assert finding.check == "cases" and "differs from what generate_cases.py writes" in finding.message
    assert finding.file == str(hidden)


# -------------------------------------------------------------------------------------------- reference


def test_reference_that_fails_under_jit(tmp_path: Path) -> None:
    root = copy_problem(tmp_path)
    reference = reference_of(root)
    edit(reference, "    return jax.tree.map(", "    if factor > 0:\n        pass\n    return jax.tree.map(")
    report = check(root)
    finding = only(report, "reference", where=f"reference/{FUNCTION}.py: cases example_1, example_2")
    assert "TracerBoolConversionError" in finding.message and "and 11 more" in finding.where
    assert reference.read_text().splitlines()[finding.line - 1].strip() == "if factor > 0:"  # type: ignore[operator]
    checks = report.problems[0]
    assert checks.check("examples").skipped and checks.check("solutions").skipped


def test_reference_that_is_not_deterministic_in_one_process(tmp_path: Path) -> None:
    root = copy_problem(tmp_path)
    reference = reference_of(root)
    edit(reference, "import jax\n", "import random\n\nimport jax\n")
    edit(reference, "lambda leaf: leaf * factor", "lambda leaf: leaf * (factor + random.random())")
    report = check(root)
    finding = only(report, "reference", message="not deterministic")
    total = len(load_problem(root).cases)
    # Cases near the value bound 1e15 round a random addition away, so not every case need differ.
    assert finding.message.startswith("not deterministic: ") and (
        f" of {total} cases give other outputs in a second run in this process" in finding.message
    )
    assert "largest difference is" in finding.message
    assert finding.line == line_with(reference, f"def {FUNCTION}")
    assert [f.check for f in report.findings].count("reference") == 1


@pytest.mark.slow
def test_reference_that_depends_on_the_hash_seed_is_one_finding(tmp_path: Path) -> None:
    root = copy_problem(tmp_path)
    reference = reference_of(root)
    edit(
        reference,
        "lambda leaf: leaf * factor",
        f'lambda leaf: leaf * factor * (1 + (hash("{HASHED}") % 3 + 1) * 2e-7)',
    )
    finding = sole(check(root, separate_runs=True))
    assert finding.check == "reference" and finding.message.startswith("not deterministic: ")
    assert "a separate process with PYTHONHASHSEED=" in finding.message
    assert finding.line == line_with(reference, f"def {FUNCTION}")


def test_reference_with_undeclared_output_structure(tmp_path: Path) -> None:
    root = copy_problem(tmp_path)
    edit(root / "problem.toml", 'kind = "pytree"\n\n[dtypes]', 'kind = "dict"\n\n[dtypes]')
    finding = only(check(root), "reference", where="cases bare_vector")
    assert finding.message == "returns an array of shape (5,), the spec declares output.kind = 'dict'"


def test_reference_with_integer_output(tmp_path: Path) -> None:
    root = copy_problem(tmp_path)
    edit(
        reference_of(root),
        "lambda leaf: leaf * factor",
        "lambda leaf: (leaf * factor).astype(jax.numpy.int32)",
    )
    report = check(root)
    finding = only(report, "reference", message="returns dtype int32")
    assert finding.where.endswith("and 11 more")
    assert [f.check for f in report.findings].count("reference") == 1


# --------------------------------------------------------------------------------------------- coverage


def test_hidden_cases_missing_bfloat16(tmp_path: Path) -> None:
    root = copy_problem(tmp_path)
    edit_cases(root / "cases" / "hidden.json", lambda cases: [c for c in cases if c["dtype"] != "bfloat16"])
    finding = only(check(root), "coverage", where=f"problems/{SLUG}/cases/hidden.json: dtype bfloat16")
    assert "no hidden case uses it" in finding.message


def test_short_lists_and_shallow_trees_warn_and_the_extent_is_noted(tmp_path: Path) -> None:
    root = copy_problem(tmp_path)
    dropped = {"long_list", "bf16_long_list", "deep_nesting", "bf16_deep_nesting", "root_list_of_dicts"}
    edit_cases(root / "cases" / "hidden.json", lambda cases: [c for c in cases if c["name"] not in dropped])
    report = check(root)
    warnings = [f for f in report.findings if f.check == "coverage"]
    assert {f.where.rsplit(": ", 1)[1] for f in warnings} == {"argument tree"}
    assert all(f.severity is Severity.WARNING for f in warnings)
    assert any(
        "the longest list node any hidden case gives `tree` has 2 items" in f.message for f in warnings
    )
    assert any("nest `tree` at most 3 containers deep" in f.message for f in warnings)
    (note,) = report.problems[0].check("coverage").notes
    assert note.startswith("hidden cases cover `tree`: list nodes up to 2 items, nesting up to 3 levels")


# ------------------------------------------------------------------------------------------- lookalikes


def test_an_example_structure_missing_from_the_hidden_cases(tmp_path: Path) -> None:
    root = copy_problem(tmp_path)
    edit_cases(
        root / "cases" / "hidden.json", lambda cases: [c for c in cases if c["name"] != "example_2_lookalike"]
    )
    finding = only(check(root), "lookalikes", where="cases/public.json: case example_2")
    assert finding.message.startswith("no hidden case has this example's input structure, shapes and dtype")


def test_a_lookalike_that_expects_the_published_output(tmp_path: Path) -> None:
    root = copy_problem(tmp_path)
    public = json.loads((root / "cases" / "public.json").read_text())["cases"]

    def same_values(cases: list[dict]) -> list[dict]:  # type: ignore[type-arg]
        next(c for c in cases if c["name"] == "example_1_lookalike")["args"] = public[0]["args"]
        return cases

    edit_cases(root / "cases" / "hidden.json", same_values)
    finding = only(check(root), "lookalikes", where="cases/public.json: case example_1")
    assert "(example_1_lookalike) expect the same output" in finding.message


# -------------------------------------------------------------------------------------------- solutions


@pytest.mark.slow
def test_misfiled_solutions_and_weak_cases(tmp_path: Path) -> None:
    """A wrong solution under accepted/, a correct one under wrong_answer/, a wrong one only one case
    catches, and a folder allowed a second verdict."""
    root = copy_problem(tmp_path)
    solutions = root / "solutions"
    shutil.move(solutions / "wrong_answer" / "adds_factor.py", solutions / "accepted" / "adds_factor.py")
    shutil.move(
        solutions / "accepted" / "float32_then_cast.py", solutions / "wrong_answer" / "float32_then_cast.py"
    )
    (solutions / "wrong_answer" / "off_on_one_shape.py").write_text(
        f"# Wrong only on float32 vectors of 5 elements.\nimport jax\nimport jax.numpy as jnp\n\n\n"
        f"def {FUNCTION}(tree, factor):\n"
        "    def scale(leaf):\n"
        "        if leaf.shape == (5,) and leaf.dtype == jnp.float32:\n"
        "            return leaf * factor + 1.0\n"
        "        return leaf * factor\n\n"
        "    return jax.tree.map(scale, tree)\n"
    )
    (solutions / "runtime_error").mkdir()
    shutil.copy(solutions / "trace_error" / "python_if_on_factor.py", solutions / "runtime_error")
    spec = root / "problem.toml"
    spec.write_text(spec.read_text() + '\n[solutions.also_allow]\nruntime_error = ["trace_error"]\n')
    report = check(root, grade=True)
    wrong = only(
        report,
        "solutions",
        where="solutions/accepted/adds_factor.py",
        message="expected accepted, got wrong_answer",
    )
    assert wrong.line == line_with(solutions / "accepted" / "adds_factor.py", f"def {FUNCTION}")  # its def
    only(
        report,
        "solutions",
        where="solutions/wrong_answer/float32_then_cast.py",
        message="expected wrong_answer, got accepted",
    )
    assert not [f for f in report.findings if "python_if" in f.where or "tree_util_map" in f.where]
    warning = next(f for f in report.findings if f.check == "margins")
    assert warning.where.endswith("solutions/wrong_answer/off_on_one_shape.py")
    assert warning.message.startswith(
        "killed by 1 hidden case at its dtype's 'well outside' margin or more (want 2; hidden cases "
        "rejecting it: bare_vector at"
    )
    rows = {row.solution: row for row in report.problems[0].margins}
    assert rows["wrong_answer/off_on_one_shape.py"].rejecting == 1
    assert rows["accepted/adds_factor.py"].verdict.value == "wrong_answer"


@pytest.mark.slow
def test_a_tolerance_too_tight_for_an_accepted_solution_is_found_at_its_line(tmp_path: Path) -> None:
    root = copy_problem(tmp_path)
    spec = root / "problem.toml"
    spec.write_text(spec.read_text() + "\n[compare.tolerance.bfloat16]\nulps = 0.1\n")
    report = check(root, grade=True)
    # A tolerance under an ulp is also under the reference's own rounding: the accuracy check says so.
    assert {f.check for f in report.findings} == {"solutions", "accuracy"}, report.findings
    (finding,) = [f for f in report.findings if f.check == "solutions"]
    assert finding.check == "solutions" and finding.file == str(spec)
    assert finding.line == line_with(spec, "[compare.tolerance.bfloat16]")
    assert finding.message.startswith("accepted/float32_then_cast.py is rejected on ")
    assert "bfloat16 tolerance (0.1 ulp of the element)" in finding.message


class FlakyStartBackend(Backend):
    """The process backend, except that its first ``failures`` tracers exit before they are ready."""

    name: ClassVar[str] = "flaky"
    insecure: ClassVar[bool] = True

    def __init__(self, failures: int) -> None:
        self.failures = failures
        self.inner = get_backend("process")

    def available(self) -> str | None:
        return None

    def protections(self) -> list[Protection]:
        return []

    def start_tracer(self, limits: SandboxLimits, slot: int = 0) -> SandboxedProcess:
        if self.failures > 0:
            self.failures -= 1
            return PopenProcess(self.name, ["/bin/sh", "-c", "exit 3", "sh"], {"PATH": "/usr/bin:/bin"})
        return self.inner.start_tracer(limits, slot)

    def start_executor(self, limits: SandboxLimits, slot: int = 0) -> SandboxedProcess:
        return self.inner.start_executor(limits, slot)

    def fork_executor(
        self, limits: SandboxLimits, slot: int = 0, warm_up: WarmUp = "tiny"
    ) -> SandboxedProcess:
        return self.inner.fork_executor(limits, slot, warm_up)

    def close(self) -> None:
        self.inner.close()


@pytest.mark.slow
@pytest.mark.parametrize(("failures", "graded"), [(2, True), (10**6, False)])
def test_a_tracer_that_fails_to_start_is_started_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, failures: int, graded: bool
) -> None:
    """The pool starts a failed tracer again, so a grading fails only when no pair comes up in time; then
    the solution's row says why, as the judge's failure (a worker that never started says nothing about the
    solution)."""
    import judge.check.solutions_check as solutions_check

    if not graded:
        monkeypatch.setattr(solutions_check, "_ACQUIRE_STALL_S", 5.0)
        monkeypatch.setattr(solutions_check, "_RETRY_PAUSE_S", 0.1)
    root = copy_problem(tmp_path)
    solution = root / "solutions" / "accepted" / "tree_util_map.py"
    ctx = CheckContext(root=root, diag=Diagnostics(SLUG, tmp_path), problem=load_problem(root), concurrency=1)
    backend = FlakyStartBackend(failures)
    try:
        (grading,) = grade_files(ctx, backend, [("accepted", solution)])
    finally:
        backend.close()
    if graded:
        assert grading.result is not None and grading.result.verdict is Verdict.ACCEPTED, grading.error
        assert backend.failures == 0
    else:
        assert grading.result is None and grading.error is not None and grading.judge_failed
        assert grading.error.startswith("ProcessStartError: no ready flaky worker"), grading.error
        assert "last start error: " in grading.error, grading.error
