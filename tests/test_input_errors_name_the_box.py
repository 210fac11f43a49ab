"""A rejected Run input names the argument whose box the page shows the message under: for the
converter's paths (``grads["w"][0]``) and for every problem validator's words (``x rows (b)``, ``x, w``),
device-mesh-sharding's mesh bounds included."""

from __future__ import annotations

import runpy
from pathlib import Path

import pytest

from judge.core.errors import InputError
from judge.core.problems import load_problem
from judge.service.api_errors import input_error

ROOT = Path(__file__).resolve().parent.parent
WITH_JUNK = sorted(path.parent.name for path in (ROOT / "problems").glob("*/validator.py"))


@pytest.mark.parametrize(
    ("path", "argument"),
    [
        ('grads["w"][0]', "grads"),
        ("x rows (b)", "x"),  # device-mesh-sharding: more rows than the mesh allows
        ("w columns (h)", "w"),
        ("x, w", "x"),  # a bound on both: the first named
        ("widths[1]", "widths"),
        ("tree.w", "tree"),
        ("dtype", "dtype"),
        ("", None),
    ],
)
def test_the_argument_is_the_name_the_path_starts_with(path: str, argument: str | None) -> None:
    error = input_error(InputError(path, "too big"))
    assert error.status == 422 and error.info.argument == argument and error.info.path == path


@pytest.mark.parametrize("slug", WITH_JUNK)
def test_every_input_a_validator_rejects_names_one_of_the_arguments(slug: str) -> None:
    problem = load_problem(ROOT / "problems" / slug)
    names = {arg.name for arg in problem.spec.args}
    junk = runpy.run_path(str(problem.root / "validator.py")).get("JUNK", [])
    for item in junk:
        try:
            problem.custom_case(item["args"])
        except InputError as exc:
            assert input_error(exc).info.argument in names, f"{item['why']}: {exc}"
