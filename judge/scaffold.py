"""``judge new SLUG [--arg NAME:KIND ...] [--dtype DTYPE ...]``: scaffold a problem package that fits the
declared signature.

Every file shows its format by example: spec, statement with the ``{{examples}}`` and ``{{rules}}`` lines,
starter, validator with JUNK and EDGE, a seeded case generator that writes the hidden cases (every
example's structure again, bare arrays, a long list node, deep nesting, each allowed dtype), a README of
the cases, and the solution folders. The reference's body raises ``NotImplementedError``, so ``judge check``
fails clearly until it is written.

Without ``--arg`` the package is a small worked problem (multiply every leaf of ``tree`` by ``factor``)
with its solutions: once its reference is written it passes ``judge check --werror``. With ``--arg`` the
solutions, explanations and hand-worked outputs are the author's to write; ``judge check`` names each one.
"""

from __future__ import annotations

import json
import keyword
import re
import typing
from dataclasses import dataclass
from pathlib import Path

from judge.errors import JudgeError
from judge.spec import ArgSpec, CaseDtype

SLUG_PATTERN = re.compile(r"^[a-z0-9]+(-[a-z0-9]+)*$")
#: The argument kinds ``judge new`` writes cases for.
SCAFFOLD_KINDS = ("pytree", "number")
DTYPES: tuple[str, ...] = typing.get_args(CaseDtype)


class ScaffoldError(JudgeError):
    pass


@dataclass(frozen=True)
class ArgDecl:
    """One ``--arg NAME:KIND[:static]``."""

    name: str
    kind: str
    traced: bool = True

    @classmethod
    def parse(cls, text: str) -> ArgDecl:
        """``grads:pytree``, ``max_norm:number``, ``axis:number:static``. Raises ScaffoldError naming what is
        wrong."""
        parts = text.split(":")
        if len(parts) not in (2, 3) or not all(parts):
            raise ScaffoldError(f"--arg {text!r}: expected NAME:KIND or NAME:KIND:static, e.g. grads:pytree")
        name, kind = parts[0], parts[1]
        if not name.isidentifier() or keyword.iskeyword(name):
            raise ScaffoldError(f"--arg {text!r}: {name!r} is not a valid Python argument name")
        known = typing.get_args(ArgSpec.model_fields["kind"].annotation)
        if kind not in known:
            raise ScaffoldError(f"--arg {text!r}: unknown kind {kind!r} (kinds: {', '.join(known)})")
        if kind not in SCAFFOLD_KINDS:
            raise ScaffoldError(
                f"--arg {text!r}: judge new writes cases for {', '.join(SCAFFOLD_KINDS)} arguments; declare "
                f"{kind!r} in problem.toml by hand"
            )
        if len(parts) == 3 and parts[2] != "static":
            raise ScaffoldError(f"--arg {text!r}: the third part may only be 'static'")
        return cls(name, kind, traced=len(parts) == 2)


#: The worked example's signature (``judge new SLUG`` without ``--arg``).
EXAMPLE_ARGS = (ArgDecl("tree", "pytree"), ArgDecl("factor", "number"))


@dataclass(frozen=True)
class Package:
    """What the templates need: the names, the signature and the dtypes."""

    slug: str
    title: str
    function: str
    args: tuple[ArgDecl, ...]
    dtypes: tuple[str, ...]
    #: The worked example (scale every leaf), with solutions; else a signature-only package.
    example: bool

    @property
    def signature(self) -> str:
        return f"{self.function}({', '.join(a.name for a in self.args)})"

    @property
    def trees(self) -> list[ArgDecl]:
        return [a for a in self.args if a.kind == "pytree"]

    @property
    def numbers(self) -> list[ArgDecl]:
        return [a for a in self.args if a.kind == "number"]


# ------------------------------------------------------------------------------------------- templates


def _spec(p: Package) -> str:
    args = "\n".join(
        f'[[args]]\nname = "{a.name}"\nkind = "{a.kind}"\ntraced = {"true" if a.traced else "false"}\n'
        f'description = "{_arg_description(p, a)}"\n'
        for a in p.args
    )
    hint = (
        "`jax.tree.map(f, tree)` calls `f` on every leaf and rebuilds the tree around the results."
        if p.example
        else "Say here what a learner who is stuck should look up (one hint per line)."
    )
    return f'''slug = "{p.slug}"
title = "{p.title}"
difficulty = "easy"
tags = ["pytree", "jit"]
# The function learners write, and the module reference/{p.function}.py that defines the trusted solution.
function = "{p.function}"
reference = "{p.function}"
# Case files, public first (public cases are the statement's examples).
case_files = ["cases/public.json", "cases/hidden.json"]
hints = [
    "{hint}",
]

{args}
[output]
# "dict", "tuple" (with names = [...]) or "pytree".
kind = "pytree"

[dtypes]
# Every allowed dtype needs hidden cases (judge check, coverage).
allowed = {json.dumps(list(p.dtypes))}
run_panel = "float32"

[compare]
# Default tolerances: float32 rtol 1e-5 + atol 1e-6; bfloat16 the larger of 3 ulp of the element and
# 1.5 ulp of the largest magnitude in its result. Add [compare.tolerance.<dtype>] only with a measurement.
checks = []

[limits]
case_time_s = 10
wall_time_s = 60
'''


def _arg_description(p: Package, a: ArgDecl) -> str:
    if a.kind == "pytree":
        return "A pytree of dicts and lists; every leaf is an array with 0 to 3 dimensions."
    return "A finite Python float." + ("" if a.traced else " Static: passed as a hashable Python value.")


def _statement(p: Package) -> str:
    if p.example:
        task = f"""Write `{p.signature}`. Multiply every entry of every leaf of `tree` by `factor` and return
a pytree with the same structure, whose leaves have the shape and dtype of the matching leaf of `tree`:

$$
y_{{\\ell,i}} = c \\, x_{{\\ell,i}}.
$$
"""
        requirements = (
            "- Keep each leaf's dtype: `factor` is a Python float, and a Python float times a bfloat16 array"
            " is still\n  bfloat16.\n"
        )
    else:
        task = f"""Write `{p.signature}`. Say what it computes, with the math in $...$ or $$...$$, and what it
returns: its structure, shapes and dtypes.
"""
        requirements = (
            "- Say what a correct solution must do beyond the formula (dtypes kept, inputs left unchanged).\n"
        )
    constraints = "\n".join(_constraint(p, a) for a in p.args)
    dtypes = " or ".join(p.dtypes)
    return f"""{task}
{{{{examples}}}}

## Requirements

{requirements}
{{{{rules}}}}

## Constraints

{constraints}
- All leaves of one case share a dtype, {dtypes}. The examples and custom Run inputs are float32.
"""


def _constraint(p: Package, a: ArgDecl) -> str:
    if a.kind == "pytree":
        return (
            f"- `{a.name}` is a pytree made of dicts and lists with at least one leaf; each leaf has 0 to 3 "
            "dimensions and\n  finite values with magnitude at most $10^{15}$."
        )
    return f"- `{a.name}` is a finite Python float with magnitude at most $10^{{15}}$."


def _starter(p: Package) -> str:
    body = (
        "    # Use jax.tree.map to visit every leaf.\n    return jax.tree.map(lambda leaf: leaf, tree)\n"
        if p.example
        else f"    # Your code here.\n    return {p.trees[0].name if p.trees else p.args[0].name}\n"
    )
    return f'''import jax


def {p.signature}:
    """Runs inside jax.jit: the traced arguments are traced values, not numbers."""
{body}'''


def _reference(p: Package) -> str:
    params = ", ".join(f"{a.name}: Any" for a in p.args)
    return f'''"""Reference for ``problems/{p.slug}``: say in one line what it computes."""

from __future__ import annotations

from typing import Any


def {p.function}({params}) -> Any:
    """The trusted solution: it runs under ``jax.jit`` on every case to produce the expected outputs."""
    raise NotImplementedError("write the reference solution in reference/{p.function}.py")
'''


def _validator(p: Package) -> str:
    checks = []
    for a in p.args:
        if a.kind == "pytree":
            checks += [
                f'        *check_has_leaves(args["{a.name}"], "{a.name}"),',
                f'        *check_ndim(args["{a.name}"], "{a.name}", max_ndim=3),',
                f'        *check_dtype(args["{a.name}"], "{a.name}", dtype),',
                f'        *check_finite(args["{a.name}"], "{a.name}"),',
                f'        *check_max_abs(args["{a.name}"], "{a.name}", MAX_ABS),',
            ]
        else:
            checks.append(f'        *check_number(args["{a.name}"], "{a.name}", ge=-MAX_ABS, le=MAX_ABS),')
    valid = _example_args(p, 0)
    junk = []
    for a in p.args:
        if a.kind == "pytree":
            junk += [
                ("4-D leaf in " + a.name, {**valid, a.name: {"w": [[[[1.0]]]]}}),
                ("no leaf in " + a.name, {**valid, a.name: {}}),
                ("string leaf in " + a.name, {**valid, a.name: {"w": "1.0"}}),
                ("value past the bound in " + a.name, {**valid, a.name: {"w": [1e20]}}),
            ]
        else:
            junk.append((f"{a.name} past the bound", {**valid, a.name: 1e20}))
    top, bottom = _Code("MAX_ABS"), _Code("-MAX_ABS")
    edge_args = {a.name: ({"w": [top, bottom]} if a.kind == "pytree" else top) for a in p.args}
    edge_bf16 = {a.name: ([top] if a.kind == "pytree" else bottom) for a in p.args}
    edges: list[dict[str, object]] = [{"why": "largest values allowed", "args": edge_args}]
    if "bfloat16" in p.dtypes:
        edges.append({"why": "bfloat16 at the bound", "dtype": "bfloat16", "args": edge_bf16})
    junk_lines = "\n".join(f"    {_py({'why': why, 'args': args})}," for why, args in junk)
    edge_lines = "\n".join(f"    {_py(edge)}," for edge in edges)
    helpers = sorted(
        ({"check_number"} if p.numbers else set())
        | (
            {"check_dtype", "check_finite", "check_has_leaves", "check_max_abs", "check_ndim"}
            if p.trees
            else set()
        )
    )
    imports = "".join(f"    {name},\n" for name in helpers)
    return f'''"""Constraints of this problem (statement.md, "Constraints"), checked by `judge check`."""

from __future__ import annotations

from typing import Any

from judge.constraints import (
{imports})

#: Largest magnitude of any value: keep every result finite in float32 and bfloat16.
MAX_ABS = 1e15


def validate(args: dict[str, Any], dtype: str) -> list[str]:
    return [
{chr(10).join(checks)}
    ]


#: Inputs that break the constraints; the converter or validate() must reject each one.
JUNK: list[dict[str, Any]] = [
{junk_lines}
]

#: Inputs at the limits of the constraints; they must validate, and the reference must give finite outputs.
EDGE: list[dict[str, Any]] = [
{edge_lines}
]
'''


class _Code(str):
    """Python source written as is (a constant's name) by ``_py``."""


def _py(value: object) -> str:
    """A Python literal for JSON-like data, formatted the way ``ruff format`` leaves it."""
    if isinstance(value, _Code):
        return str(value)
    if isinstance(value, dict):
        return "{" + ", ".join(f"{json.dumps(k)}: {_py(v)}" for k, v in value.items()) + "}"
    if isinstance(value, list):
        return "[" + ", ".join(_py(v) for v in value) + "]"
    if isinstance(value, float):
        text = f"{value:g}".replace("e+", "e")
        return text if any(c in text for c in ".en") else f"{text}.0"
    return json.dumps(value)


def _example_args(p: Package, index: int) -> dict[str, object]:
    """The public examples' inputs: small, hand-checkable values."""
    trees = [{"w": [1.0, 2.0], "b": 0.5}, {"layers": [{"w": [0.5, -1.0]}, {"w": [2.0, 0.25]}]}]
    numbers = [3.0, 0.5]
    return {a.name: (trees[index] if a.kind == "pytree" else numbers[index]) for a in p.args}


def _public(p: Package) -> str:
    cases = []
    for i in range(2):
        case: dict[str, object] = {
            "name": f"example_{i + 1}",
            "visibility": "public",
            "dtype": "float32",
            "args": _example_args(p, i),
        }
        if p.example:
            case["explanation"] = (
                "Every entry is multiplied by 3: w becomes [3, 6] and b becomes 1.5."
                if i == 0
                else "Every entry is multiplied by 0.5, in both dicts of the list."
            )
            case["expected"] = (
                {"b": 1.5, "w": [3.0, 6.0]}
                if i == 0
                else {"layers": [{"w": [0.25, -0.5]}, {"w": [1.0, 0.125]}]}
            )
        cases.append(case)
    body = ",\n".join(f"    {json.dumps(c)}" for c in cases)
    return '{"cases": [\n' + body + "\n]}\n"


def _generator(p: Package) -> str:
    trees = [a.name for a in p.trees]
    numbers = [a.name for a in p.numbers]
    bf16 = "bfloat16" in p.dtypes
    return f'''"""Write ``cases/hidden.json`` for {p.slug} (deterministic: the same bytes on every run).

Run it after every change: ``python problems/{p.slug}/generate_cases.py``. ``judge check`` fails when the
file differs from what this script writes. Values are exact in the case dtype (``judge.casegen``), so the
judge sees exactly these inputs. Every tree argument gets the same structure in a case.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from judge.casegen import bf16, f32, num, random_tree, write
from judge.casegen import render as render  # re-exported: the case check renders with it

SEED = 1
OUT = Path(__file__).resolve().parent / "cases" / "hidden.json"
TREES = {json.dumps(trees)}
NUMBERS = {json.dumps(numbers)}

#: Structures (tuples are leaf shapes; dicts and lists are nodes). The first two are the public examples'
#: structures again: a submission must not recognise an example by its structure and return its output.
STRUCTURES: dict[str, Any] = {{
    "example_1_lookalike": {{"w": (2,), "b": ()}},
    "example_2_lookalike": {{"layers": [{{"w": (2,)}}, {{"w": (2,)}}]}},
    "bare_vector": (5,),
    "bare_scalar": (),
    "matrix_and_bias": {{"w": (3, 4), "b": (4,)}},
    "long_list": {{"blocks": [{{"w": (2, 3), "b": (3,)}} for _ in range(4)]}},
    "deep_nesting": {{"a": {{"b": [{{"c": {{"d": (2,)}}}}, {{"c": {{"d": ()}}}}]}}, "e": (2, 2)}},
    "root_list_of_dicts": [{{"w": (3,)}}, {{"w": (2, 2)}}, {{"w": ()}}],
}}
#: Structures graded again in bfloat16 (when the problem allows it).
BF16 = {json.dumps(["bare_vector", "long_list", "deep_nesting"] if bf16 else [])}


def build_cases() -> list[dict[str, Any]]:
    rng = np.random.default_rng(SEED)
    cases: list[dict[str, Any]] = []
    plan = [(name, "float32") for name in STRUCTURES] + [(f"bf16_{{name}}", "bfloat16") for name in BF16]
    for name, dtype in plan:
        shapes = STRUCTURES[name.removeprefix("bf16_")]
        cast = bf16 if dtype == "bfloat16" else f32
        args: dict[str, Any] = {{tree: random_tree(rng, shapes, 2.0, cast) for tree in TREES}}
        args.update({{number: num(round(float(rng.uniform(0.25, 4.0)), 3)) for number in NUMBERS}})
        cases.append({{"name": name, "visibility": "hidden", "dtype": dtype, "args": args}})
    return cases


if __name__ == "__main__":
    write(OUT, build_cases)
'''


def _cases_readme(p: Package) -> str:
    return f"""# Cases of {p.slug}

- `public.json`: the examples, written by hand. Each is shown in the statement (at its `{{{{examples}}}}`
  line) with the reference's output, so give each an `explanation` (one sentence: why the output is
  what it is) and an `expected` output worked out by hand (`judge check` requires the reference to agree
  with it). Public cases are float32: the Run panel's JSON cannot say bfloat16.
- `hidden.json`: graded, never shown. Written by `../generate_cases.py`: edit the generator, never this
  file, then run `python problems/{p.slug}/generate_cases.py`.

A case is `{{"name", "visibility", "dtype", "args"}}`; `args` holds Run-panel JSON per argument of
`{p.signature}` (an object is a dict node, a list whose items are all objects is a list node, any other
list or number is one array leaf). `judge check` requires every case to satisfy `../validator.py` and the
hidden cases to cover every example's structure again, every allowed dtype, bare arrays, a list node of 3
or more items and nesting 4 or more containers deep (see `problems/README.md`, "Package rules").
"""


def _solutions_readme(p: Package) -> str:
    return """# Solutions with expected verdicts

Each file's folder is the verdict the judge must give it (`judge check` grades every file here and fails if
the verdict differs). The package rules want at least 2 files in `accepted/` (correct variants in styles
other than the reference's), 1 in `wrong_answer/` (a mistake learners make) and 1 in `trace_error/`
(Python control flow on a traced value). Other folders: `runtime_error/`, `compile_error/`,
`time_limit_exceeded/`, `memory_limit_exceeded/`, `output_limit_exceeded/`. The first line of each file
says what it does or what mistake it makes.
"""


def _example_solutions(p: Package) -> dict[str, str]:
    f = p.function
    return {
        "accepted/tree_util_map.py": f"""# Correct: scale every leaf with jax.tree_util.tree_map.
import jax


def {f}(tree, factor):
    return jax.tree_util.tree_map(lambda leaf: factor * leaf, tree)
""",
        "accepted/float32_then_cast.py": f"""# Correct: multiply in float32, then cast back to the dtype.
import jax
import jax.numpy as jnp


def {f}(tree, factor):
    return jax.tree.map(lambda leaf: (leaf.astype(jnp.float32) * factor).astype(leaf.dtype), tree)
""",
        "wrong_answer/adds_factor.py": f"""# Wrong: adds the factor instead of multiplying by it.
import jax


def {f}(tree, factor):
    return jax.tree.map(lambda leaf: leaf + factor, tree)
""",
        "trace_error/python_if_on_factor.py": f"""# Trace error: a Python `if` on the traced factor.
import jax


def {f}(tree, factor):
    if factor == 0:
        return jax.tree.map(lambda leaf: leaf * 0, tree)
    return jax.tree.map(lambda leaf: leaf * factor, tree)
""",
    }


# ------------------------------------------------------------------------------------------------ create


def function_name(slug: str) -> str:
    name = slug.replace("-", "_")
    if name[0].isdigit():
        name = f"p_{name}"
    if keyword.iskeyword(name):
        name += "_"
    return name


@dataclass(frozen=True)
class Created:
    """The files written, each with what the author does with it next (in that order)."""

    files: list[tuple[Path, str]]

    @property
    def paths(self) -> list[Path]:
        return [path for path, _ in self.files]


def create(
    slug: str,
    problems_dir: Path,
    *,
    function: str | None = None,
    title: str | None = None,
    args: list[ArgDecl] | None = None,
    dtypes: list[str] | None = None,
) -> Created:
    """Write the package to ``problems_dir/slug`` and its reference to ``problems_dir/../reference``.

    ``args`` declares the signature (default: the worked example's ``tree, factor``); ``dtypes`` the case
    dtypes (default float32 and bfloat16). Raises ScaffoldError (nothing written) when the slug, a name or
    a dtype is invalid, or a file would be overwritten.
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
    declared = tuple(args) if args else EXAMPLE_ARGS
    names = [a.name for a in declared]
    if len(set(names)) != len(names):
        raise ScaffoldError(
            f"argument names repeat: {', '.join(sorted({n for n in names if names.count(n) > 1}))}"
        )
    chosen = tuple(dict.fromkeys(dtypes or ["float32", "bfloat16"]))
    unknown = [d for d in chosen if d not in DTYPES]
    if unknown:
        raise ScaffoldError(f"--dtype {unknown[0]!r}: case dtypes are {', '.join(DTYPES)}")
    if "float32" not in chosen:
        raise ScaffoldError("--dtype: float32 is required (the examples and the Run panel use it)")
    package = Package(slug, title, function, declared, chosen, example=not args)
    root = problems_dir / slug
    reference = problems_dir.resolve().parent / "reference" / f"{function}.py"
    if root.exists():
        raise ScaffoldError(f"{root} already exists")
    if reference.exists():
        raise ScaffoldError(f"{reference} already exists (choose another name with --function)")
    files: list[tuple[Path, str, str]] = [
        (
            reference,
            _reference(package),
            "write the reference solution (it runs under jax.jit on every case)",
        ),
        (
            root / "problem.toml",
            _spec(package),
            "check the title, difficulty, tags, hints and argument descriptions",
        ),
        (
            root / "statement.md",
            _statement(package),
            "describe the task; keep the {{examples}} and {{rules}} lines",
        ),
        (
            root / "starter.py",
            _starter(package),
            "the code learners start from: it must run, and not be accepted",
        ),
        (
            root / "validator.py",
            _validator(package),
            "encode the statement's Constraints; keep JUNK and EDGE in step",
        ),
        (
            root / "cases" / "README.md",
            _cases_readme(package),
            "what the case files hold and how to regenerate them",
        ),
        (
            root / "cases" / "public.json",
            _public(package),
            "the examples: give each an explanation and a hand-worked expected output",
        ),
        (
            root / "generate_cases.py",
            _generator(package),
            "adapt the structures and values to your problem, then run it",
        ),
        (
            root / "solutions" / "README.md",
            _solutions_readme(package),
            "the solution folders and what each needs",
        ),
    ]
    if package.example:
        for rel, text in _example_solutions(package).items():
            files.append(
                (root / "solutions" / rel, text, "a shipped solution: replace it with your problem's")
            )
    else:
        for folder in ("accepted", "wrong_answer", "trace_error"):
            files.append(
                (
                    root / "solutions" / folder / "README.md",
                    f"# {folder}\n\nPut solution files that must get the verdict `{folder}` here.\n",
                    f"add solutions that must get {folder}",
                )
            )
    for path, text, _ in files:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    _run_generator(root / "generate_cases.py")
    hidden = root / "cases" / "hidden.json"
    return Created(
        [(path, todo) for path, _, todo in files[:7]]
        + [(hidden, "written by generate_cases.py: never edit it by hand")]
        + [(path, todo) for path, _, todo in files[7:]]
    )


def _run_generator(file: Path) -> None:
    """Write the hidden cases with the generator just written (its ``build_cases`` and ``OUT``)."""
    from judge.problems import import_trusted_file

    module = import_trusted_file(file, "scaffold_generator")
    Path(module.OUT).write_text(module.render(module.build_cases()))
