"""``judge new SLUG``: scaffold a problem package that ``judge check`` passes once the reference is written.

The scaffold is a small working problem (multiply every leaf of a pytree by a number) so every file shows
its format by example: spec, statement with the ``{{examples}}`` and ``{{rules}}`` lines, starter, validator
with JUNK and EDGE, one public case and hidden cases that pass every coverage check (the example's structure
with other values, a long list node, deep nesting, bfloat16), an accepted and a wrong solution. Only the
reference is left to write (its body raises ``NotImplementedError``, so ``judge check`` fails clearly until
it is filled).
The author then edits every file into the real problem.
"""

from __future__ import annotations

import keyword
import re
from pathlib import Path

from judge.errors import JudgeError

SLUG_PATTERN = re.compile(r"^[a-z0-9]+(-[a-z0-9]+)*$")


class ScaffoldError(JudgeError):
    pass


def _spec(slug: str, title: str, function: str) -> str:
    return f'''slug = "{slug}"
title = "{title}"
difficulty = "easy"
tags = ["pytree", "jit"]
# The function learners write, and the module reference/{function}.py that defines the trusted solution.
function = "{function}"
reference = "{function}"
# Case files, public first (public cases are the statement's examples).
case_files = ["cases/public.json", "cases/hidden.json"]
hints = [
    "`jax.tree.map(f, tree)` calls `f` on every leaf and rebuilds the tree around the results.",
]

[[args]]
name = "tree"
kind = "pytree"
traced = true
description = "A pytree of dicts and lists; every leaf is an array with 0 to 3 dimensions."

[[args]]
name = "factor"
kind = "number"
traced = true
description = "A finite Python float."

[output]
# "dict", "tuple" (with names = [...]) or "pytree".
kind = "pytree"

[dtypes]
# Every allowed dtype needs hidden cases (judge check, coverage).
allowed = ["float32", "bfloat16"]
run_panel = "float32"

[compare]
# Default tolerances: float32 rtol 1e-5 + atol 1e-6; bfloat16 the larger of 3 ulp of the element and
# 1.5 ulp of the largest magnitude in its result.
checks = []

[limits]
case_time_s = 10
wall_time_s = 60
'''


def _statement(function: str) -> str:
    return f"""Describe the task here: what the function computes, with the math in $...$ or $$...$$.

Write `{function}(tree, factor)`. Multiply every entry of every leaf of `tree` by `factor` and return a pytree
with the same structure, whose leaves have the shape and dtype of the matching leaf of `tree`:

$$
y_{{\\ell,i}} = c \\, x_{{\\ell,i}}.
$$

{{{{examples}}}}

## Requirements

- Keep each leaf's dtype: `factor` is a Python float, and a Python float times a bfloat16 array is still
  bfloat16.

{{{{rules}}}}

## Constraints

- `tree` is a pytree made of dicts and lists with at least one leaf; each leaf has 0 to 3 dimensions.
- All leaves of one case share a dtype, float32 or bfloat16. The examples and custom Run inputs are float32.
- All values are finite with magnitude at most $10^{{15}}$, and `factor` is a Python float with magnitude
  at most $10^{{15}}$, so every result is finite.
"""


def _starter(function: str) -> str:
    return f'''import jax
import jax.numpy as jnp


def {function}(tree, factor):
    """Multiply every leaf of ``tree`` by ``factor``; same structure, shapes and dtypes.

    Runs inside jax.jit: the leaves of ``tree`` and ``factor`` are traced values.
    """
    # TODO: use jax.tree.map to visit every leaf.
    return jax.tree.map(lambda leaf: leaf, tree)
'''


def _reference(slug: str, function: str) -> str:
    return f'''"""Reference for ``problems/{slug}``: TODO say in one line what it computes."""

from __future__ import annotations

from typing import Any


def {function}(tree: Any, factor: Any) -> Any:
    """The trusted solution: it runs under ``jax.jit`` on every case to produce the expected outputs."""
    raise NotImplementedError("write the reference solution in reference/{function}.py")
'''


_PUBLIC = """{
  "cases": [
    {
      "name": "example_1",
      "visibility": "public",
      "dtype": "float32",
      "args": {"tree": {"w": [1.0, 2.0], "b": 0.5}, "factor": 3.0},
      "explanation": "Every entry is multiplied by 3: w becomes [3, 6] and b becomes 1.5.",
      "expected": {"b": 1.5, "w": [3.0, 6.0]}
    }
  ]
}
"""

_HIDDEN = """{
  "cases": [
    {
      "name": "example_1_lookalike",
      "visibility": "hidden",
      "dtype": "float32",
      "args": {"tree": {"w": [-2.0, 0.5], "b": 4.0}, "factor": 0.25}
    },
    {
      "name": "long_list_deep_nesting",
      "visibility": "hidden",
      "dtype": "float32",
      "args": {
        "tree": {
          "layers": [
            {"w": [[1.0, 2.0], [3.0, 4.0]], "b": [0.5, -0.5]},
            {"w": [[0.25]], "b": 0.0},
            {"w": [[-1.0]], "b": 2.0}
          ],
          "head": {"out": [{"w": [1.5, -2.5]}]}
        },
        "factor": -0.5
      }
    },
    {
      "name": "bf16_bare_vector",
      "visibility": "hidden",
      "dtype": "bfloat16",
      "args": {"tree": [1.0, -2.0, 3.5, 0.125], "factor": 3.0}
    }
  ]
}
"""

_VALIDATOR = '''"""Constraints of this problem (statement.md, "Constraints"), checked by `judge check`."""

from __future__ import annotations

from typing import Any

from judge.constraints import (
    check_dtype,
    check_finite,
    check_has_leaves,
    check_max_abs,
    check_ndim,
    check_number,
)

#: Largest magnitude of a value and of factor: products stay below 1e30, finite in float32 and bfloat16.
MAX_ABS = 1e15


def validate(args: dict[str, Any], dtype: str) -> list[str]:
    tree = args["tree"]
    return [
        *check_has_leaves(tree, "tree"),
        *check_ndim(tree, "tree", max_ndim=3),
        *check_dtype(tree, "tree", dtype),
        *check_finite(tree, "tree"),
        *check_max_abs(tree, "tree", MAX_ABS),
        *check_number(args["factor"], "factor", ge=-MAX_ABS, le=MAX_ABS),
    ]


#: Inputs that break the constraints; the converter or validate() must reject each one.
JUNK: list[dict[str, Any]] = [
    {"why": "4-D leaf", "args": {"tree": {"w": [[[[1.0]]]]}, "factor": 1.0}},
    {"why": "no leaf", "args": {"tree": {}, "factor": 1.0}},
    {"why": "string leaf", "args": {"tree": {"w": "1.0"}, "factor": 1.0}},
    {"why": "NaN factor", "args": {"tree": {"w": [1.0]}, "factor": float("nan")}},
    {"why": "value past the bound", "args": {"tree": {"w": [1e20]}, "factor": 1.0}},
]

#: Inputs at the limits of the constraints; they must validate, and the reference must give finite outputs.
EDGE: list[dict[str, Any]] = [
    {"why": "largest value times largest factor", "args": {"tree": {"w": [1e15, -1e15]}, "factor": 1e15}},
    {"why": "bfloat16 at the bound", "dtype": "bfloat16", "args": {"tree": [1e15], "factor": -1e15}},
]
'''


def _accepted(function: str) -> str:
    return f"""# Correct: scale every leaf with jax.tree_util.tree_map (a different style from the reference).
import jax


def {function}(tree, factor):
    return jax.tree_util.tree_map(lambda leaf: factor * leaf, tree)
"""


def _wrong(function: str) -> str:
    return f"""# Wrong: adds the factor instead of multiplying by it.
import jax


def {function}(tree, factor):
    return jax.tree.map(lambda leaf: leaf + factor, tree)
"""


_SOLUTIONS_README = """# Solutions with expected verdicts

Each file's folder is the verdict the judge must give it (`judge check` grades every file here and fails if
the verdict differs). Put correct variants in different styles under `accepted/` and typical learner
mistakes under `wrong_answer/`, `trace_error/`, `runtime_error/`, `compile_error/`,
`time_limit_exceeded/`. The first line of each file says what it does or what mistake it makes.
"""


def function_name(slug: str) -> str:
    name = slug.replace("-", "_")
    if name[0].isdigit():
        name = f"p_{name}"
    if keyword.iskeyword(name):
        name += "_"
    return name


def create(
    slug: str, problems_dir: Path, *, function: str | None = None, title: str | None = None
) -> list[Path]:
    """Write the package to ``problems_dir/slug`` and its reference to ``problems_dir/../reference``.

    Returns the files written. Raises ScaffoldError (nothing written) when the slug or function name is
    invalid or a file would be overwritten.
    """
    if not SLUG_PATTERN.match(slug) or len(slug) > 64:
        raise ScaffoldError(
            f"{slug!r} is not a valid slug (lowercase letters and digits, joined by single '-')"
        )
    function = function or function_name(slug)
    if not function.isidentifier() or keyword.iskeyword(function) or len(function) > 64:
        raise ScaffoldError(f"{function!r} is not a valid Python function name")
    title = title or slug.replace("-", " ").title()
    if '"' in title or "\\" in title:
        raise ScaffoldError("the title may not contain quotes or backslashes")
    root = problems_dir / slug
    reference = problems_dir.resolve().parent / "reference" / f"{function}.py"
    if root.exists():
        raise ScaffoldError(f"{root} already exists")
    if reference.exists():
        raise ScaffoldError(f"{reference} already exists (choose another name with --function)")
    files = {
        root / "problem.toml": _spec(slug, title, function),
        root / "statement.md": _statement(function),
        root / "starter.py": _starter(function),
        root / "validator.py": _VALIDATOR,
        root / "cases" / "public.json": _PUBLIC,
        root / "cases" / "hidden.json": _HIDDEN,
        root / "solutions" / "README.md": _SOLUTIONS_README,
        root / "solutions" / "accepted" / "tree_util_map.py": _accepted(function),
        root / "solutions" / "wrong_answer" / "adds_factor.py": _wrong(function),
        reference: _reference(slug, function),
    }
    for path, content in files.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(content)
    return list(files)
