"""``judge new SLUG [--arg NAME:KIND[:OPTION ...] ...] [--dtype DTYPE ...]``: scaffold a problem package
that fits the declared signature, for every argument kind of the spec (``judge.authoring.scaffold_kinds``).

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

from judge.authoring.scaffold_kinds import (
    INT_BOUND,
    INT_TUPLES,
    ArgDecl,
    ScaffoldError,
    menu_module,
    py_literal,
)
from judge.check.rules_check import MAX_ARGS  # the package rule `signature`
from judge.core.spec import CaseDtype
from judge.kinds.registry import kind_of

__all__ = ["ArgDecl", "Created", "ScaffoldError", "create", "function_name"]

SLUG_PATTERN = re.compile(r"^[a-z0-9]+(-[a-z0-9]+)*$")
DTYPES: tuple[str, ...] = typing.get_args(CaseDtype)


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
        return [a for a in self.args if kind_of(a.kind).tree]

    @property
    def numbers(self) -> list[ArgDecl]:
        return [a for a in self.args if kind_of(a.kind).weak_scalar]

    def of_kind(self, kind: str) -> list[ArgDecl]:
        return [a for a in self.args if a.kind == kind]

    @property
    def menu(self) -> bool:
        """A ``function`` argument needs the menu module ``functions.py``."""
        return any(kind_of(a.kind).needs_menu for a in self.args)


# ------------------------------------------------------------------------------------------- templates


def _spec(p: Package) -> str:
    args = "\n".join(a.toml(a.description()) for a in p.args)
    menu = (
        "# The menu module of the function arguments (problem code, sent into the sandbox).\n"
        'functions = "functions.py"\n'
        if p.menu
        else ""
    )
    hint = (
        "`jax.tree.map(f, tree)` calls `f` on every leaf and rebuilds the tree around the results."
        if p.example
        else "Say here what a learner who is stuck should look up (one hint per line)."
    )
    backing = (
        '"Keep each leaf\'s dtype" = ["compare"]'
        if p.example
        else '# "words of a requirement" = ["solution:wrong_answer/<file>.py"]  (case:, rule:, compare, jit)'
    )
    requirements = (
        "# What rejects a solution breaking each requirement of the statement (judge check: requirements).\n"
        f"[requirements]\n{backing}\n\n"
    )
    # One promise per stated bound: each is reached on its own (the bounds of one number are two ends).
    promises = "".join(
        f'[[promises]]\nsays = "{says}"\nbounds = {json.dumps([bound])}\n\n'
        for arg in p.args
        for says, bounds in [arg.promise() or ("", [])]
        for bound in bounds
    )
    if promises:
        promises = (
            "# What the statement promises about the inputs, each reached by a hidden case (judge check:\n"
            "# promises): add every sentence about the inputs where a shortcut would break, with a\n"
            '# predicate of validator.py (reached_by = "name") and/or stated bounds reached together.\n'
            + promises
        )
    return f'''slug = "{p.slug}"
title = "{p.title}"
difficulty = "easy"
# Raise with every change to what grading reads (cases, reference, limits): the API shows it.
revision = 1
tags = {json.dumps(_tags(p))}
# The function learners write, and the module reference/{p.function}.py that defines the trusted solution.
function = "{p.function}"
reference = "{p.function}"
# Case files, public first (public cases are the statement's examples).
case_files = ["cases/public.json", "cases/hidden.json"]
{menu}hints = [
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

{requirements}{promises}[limits]
case_time_s = 10
wall_time_s = 60
'''


def _tags(p: Package) -> list[str]:
    """What the problem is about, from its arguments: ``pytree`` only with a pytree argument."""
    kinds = {a.kind for a in p.args}
    return [*(["pytree"] if "pytree" in kinds else []), "jit"]


def _has_floats(p: Package) -> bool:
    """Whether any argument holds values of the case dtype (a pytree, a number, a float array)."""
    return any(a.floats or kind_of(a.kind).weak_scalar for a in p.args)


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
    constraints = "\n".join(a.constraint() for a in p.args)
    dtypes = " or ".join(p.dtypes)
    run = (
        "The examples are float32, and so are custom Run inputs unless you choose bfloat16 on the page."
        if "bfloat16" in p.dtypes
        else "The examples and custom Run inputs are float32."
    )
    shared = f"\n- All leaves of one case share a dtype, {dtypes}. {run}" if _has_floats(p) else ""
    return f"""{task}
{{{{examples}}}}

## Requirements

{requirements}
{{{{rules}}}}

## Constraints

{constraints}{shared}
"""


def _starter(p: Package) -> str:
    body = (
        "    # Use jax.tree.map to visit every leaf.\n    return jax.tree.map(lambda leaf: leaf, tree)\n"
        if p.example
        else f"    # Your code here.\n    return jax.tree.map(lambda leaf: leaf, {_first_traced(p)})\n"
    )
    return f'''import jax


def {p.signature}:
    """Runs inside jax.jit: the traced arguments are traced values, not numbers."""
{body}'''


def _first_traced(p: Package) -> str:
    """The argument the starter returns as it is: a float one if there is, else a traced one."""
    floats = [a for a in p.args if a.floats]
    traced = [a for a in p.args if kind_of(a.kind).arrays or (kind_of(a.kind).weak_scalar and a.traced)]
    return (floats or traced or list(p.args))[0].name


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
    checks = "\n".join(f"        {line}," for a in p.args for line in a.checks())
    valid = _example_args(p, 0)
    junk = [(why, {**valid, a.name: value}) for a in p.args for why, value in a.junk()]
    edges: list[dict[str, object]] = [
        {"why": "largest values allowed", "args": {a.name: a.edge(low=False) for a in p.args}}
    ]
    if "bfloat16" in p.dtypes:
        edges.append(
            {
                "why": "bfloat16 at the bound",
                "dtype": "bfloat16",
                "args": {a.name: a.edge(low=True) for a in p.args},
            }
        )
    junk_lines = "\n".join(f"    {py_literal({'why': why, 'args': args}, 4, 4)}," for why, args in junk)
    edge_lines = "\n".join(f"    {py_literal(edge, 4, 4)}," for edge in edges)
    helpers = sorted(set().union(*(a.helpers() for a in p.args)))
    imports = (
        "from judge.constraints import (\n" + "".join(f"    {name},\n" for name in helpers) + ")\n"
        if helpers
        else ""
    )
    bounds = (
        "#: Largest magnitude of any value: keep every result finite in float32 and bfloat16.\n"
        "MAX_ABS = 1e15\n"
    )
    if any(a.dtype in ("int32", "uint32") for a in p.args):  # only an array declares a dtype
        bounds += f"#: Largest magnitude of an integer array's entries.\nINT_BOUND = {INT_BOUND}\n"
    return f'''"""Constraints of this problem (statement.md, "Constraints"), checked by `judge check`."""

from __future__ import annotations

from typing import Any

{imports}
{bounds}

def validate(args: dict[str, Any], dtype: str) -> list[str]:
    return [
{checks}
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


def _example_args(p: Package, index: int) -> dict[str, object]:
    """The public examples' inputs: small, hand-checkable values."""
    return {a.name: a.example(index) for a in p.args}


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


def _bound_cases(p: Package) -> list[list[object]]:
    """``[name, sign, number]`` per case near the validator's bounds (the generator's ``BOUND_CASES``):
    the values when the package has float or int32 data (int32 entries: both ends), then each bound of its
    ``number`` arguments."""
    cases: list[list[object]] = []
    if any(kind_of(a.kind).arrays and a.dtype != "bool" for a in p.args):
        cases.append(["near_the_value_bounds", 1, 0.5])
    if any(a.dtype == "int32" for a in p.args):  # only an array declares a dtype
        cases.append(["near_the_lower_int32_bound", -1, 0.5])
    if p.numbers:
        cases += [["numbers_near_the_upper_bound", 0, 5e14], ["numbers_near_the_lower_bound", 0, -5e14]]
    return cases


def _generator(p: Package) -> str:
    trees = [a.name for a in p.trees]
    numbers = [a.name for a in p.numbers]
    arrays = {a.name: {"dtype": a.dtype, "ndim": list(a.ndim)} for a in p.of_kind("array")}
    ints = [a.name for a in p.of_kind("int")]
    int_tuples = [a.name for a in p.of_kind("int_tuple")]
    menus = {a.name: list(a.spec().choices) for a in p.of_kind("function")}
    bools = [a.name for a in p.of_kind("bool")]
    strings = {a.name: list(a.spec().choices) for a in p.of_kind("str")}
    keys = [a.name for a in p.of_kind("key")]
    # Static kinds the generator has no line for: their values in turn (``Kind.scaffold_cycle``); the
    # lines below appear only when the package has such an argument.
    cycled = {a.name: c for a in p.args if (c := kind_of(a.kind).scaffold_cycle(a)) is not None}
    cycled_table = (
        "#: Other static arguments: the values their cases take in turn (the first at the bounds).\n"
        f"CYCLED: dict[str, list[Any]] = {py_literal(cycled, 0, 32)}\n"
        if cycled
        else ""
    )
    cycled_turn = (
        "        args.update({arg: values[index % len(values)] for arg, values in CYCLED.items()})\n"
        if cycled
        else ""
    )
    cycled_first = (
        "        args.update({arg: values[0] for arg, values in CYCLED.items()})\n" if cycled else ""
    )
    bf16 = "bfloat16" in p.dtypes
    if trees:
        names = """#: Structures (tuples are leaf shapes; dicts and lists are nodes). The first two are the
#: public examples' structures again: a submission must not recognise an example by its structure and
#: return its output.
STRUCTURES: dict[str, Any] = {
    "example_1_lookalike": {"w": (2,), "b": ()},
    "example_2_lookalike": {"layers": [{"w": (2,)}, {"w": (2,)}]},
    "bare_vector": (5,),
    "bare_scalar": (),
    "matrix_and_bias": {"w": (3, 4), "b": (4,)},
    "long_list": {"blocks": [{"w": (2, 3), "b": (3,)} for _ in range(4)]},
    "deep_nesting": {"a": {"b": [{"c": {"d": (2,)}}, {"c": {"d": ()}}]}, "e": (2, 2)},
    "root_list_of_dicts": [{"w": (3,)}, {"w": (2, 2)}, {"w": ()}],
}
NAMES = list(STRUCTURES)"""
        again = ["bare_vector", "long_list", "deep_nesting"]
    else:
        names = """#: The cases; the first two repeat the public examples' shapes and static values with other
#: values: a submission must not recognise an example by what it sees when traced and return its output.
NAMES = ["example_1_lookalike", "example_2_lookalike", *(f"case_{i}" for i in range(3, 9))]
STRUCTURES: dict[str, Any] = {}"""
        again = ["case_3", "case_4", "case_5"]
    return f'''"""Write ``cases/hidden.json`` for {p.slug} (deterministic: the same bytes on every run).

Run it after every change: ``python problems/{p.slug}/generate_cases.py``. ``judge check`` fails when the
file differs from what this script writes. Values are exact in the case dtype (``judge.casegen``), so the
judge sees exactly these inputs. Every tree argument gets the same structure in a case; the array
arguments of one rank share a shape in a case, and the case at NAMES[i] gets the values the public example
i+1 has for the static arguments, and its array ranks and shapes.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from judge.casegen import bf16, f32, num, random_tree, write
from judge.casegen import render as render  # re-exported: the case check renders with it

SEED = 1
OUT = Path(__file__).resolve().parent / "cases" / "hidden.json"
TREES: list[str] = {json.dumps(trees)}
NUMBERS: list[str] = {json.dumps(numbers)}
#: Array arguments: dtype ("case": the case's float dtype, "int32", "uint32" or "bool") and the ranks allowed.
ARRAYS: dict[str, dict[str, Any]] = {py_literal(arrays, 0, 37)}
INTS: list[str] = {json.dumps(ints)}
INT_TUPLES: list[str] = {json.dumps(int_tuples)}
#: Static tuples, in turn (every static argument needs two values or more).
TUPLE_VALUES = {json.dumps(list(INT_TUPLES))}
#: Function arguments and their menus, in turn: every menu function appears in several cases.
FUNCTIONS: dict[str, list[str]] = {py_literal(menus, 0, 34)}
#: Static bools (True and False in turn) and static strings with their choices (each in several cases).
BOOLS: list[str] = {json.dumps(bools)}
STRINGS: dict[str, list[str]] = {py_literal(strings, 0, 32)}
#: PRNG key arguments: a seed of its own in every case (raw key data at the limits is an EDGE input).
KEYS: list[str] = {json.dumps(keys)}
{cycled_table}
{names}
#: Cases graded again in bfloat16 (when the problem allows it).
BF16 = {json.dumps(again if bf16 else [])}
#: The bounds validator.py states, and cases that come near them (``judge check``'s reach check wants
#: every stated bound approached): [name, sign of the values, number]. Float values near +-MAX_ABS / 4
#: with a 3-D leaf and int32 entries near +INT_BOUND (sign 1) or -INT_BOUND (sign -1); then each number
#: at +MAX_ABS / 2 and at -MAX_ABS / 2 with small values (sign 0), so results stay finite. Keep them in
#: step with validator.py.
MAX_ABS = 1e15
INT_BOUND = 1000
BOUND_CASES = {py_literal(_bound_cases(p), 0, 14)}


def shape(rank: int, index: int) -> tuple[int, ...]:
    """The shape of the array arguments of ``rank`` in the case at ``NAMES[index]``."""
    return (2 + index % 3, *([2] * (rank - 1))) if rank else ()


def array(rng: np.random.Generator, spec: dict[str, Any], index: int, cast: Any) -> Any:
    """An array argument's value: its ranks in turn, so every rank it allows gets cases."""
    size = shape(spec["ndim"][index % len(spec["ndim"])], index)
    if spec["dtype"] == "int32":
        return rng.integers(-9, 10, size=size).tolist()
    if spec["dtype"] == "uint32":
        return rng.integers(0, 10, size=size).tolist()
    if spec["dtype"] == "bool":
        return (rng.random(size) < 0.5).tolist()
    return random_tree(rng, size, 2.0, cast)


def build_cases() -> list[dict[str, Any]]:
    rng = np.random.default_rng(SEED)
    cases: list[dict[str, Any]] = []
    plan = [(name, "float32") for name in NAMES] + [(f"bf16_{{name}}", "bfloat16") for name in BF16]
    for name, dtype in plan:
        index = NAMES.index(name.removeprefix("bf16_"))
        cast = bf16 if dtype == "bfloat16" else f32
        shapes = STRUCTURES.get(NAMES[index])
        args: dict[str, Any] = {{tree: random_tree(rng, shapes, 2.0, cast) for tree in TREES}}
        args.update({{number: num(round(float(rng.uniform(0.25, 4.0)), 3)) for number in NUMBERS}})
        args.update({{arg: array(rng, spec, index, cast) for arg, spec in ARRAYS.items()}})
        args.update({{arg: 2 + index % 3 for arg in INTS}})
        args.update({{arg: TUPLE_VALUES[index % len(TUPLE_VALUES)] for arg in INT_TUPLES}})
        args.update({{arg: menu[index % len(menu)] for arg, menu in FUNCTIONS.items()}})
        args.update({{arg: index % 2 == 0 for arg in BOOLS}})
        args.update({{arg: choices[index % len(choices)] for arg, choices in STRINGS.items()}})
        args.update({{arg: {{"key": int(rng.integers(0, 2**32))}} for arg in KEYS}})
{cycled_turn}        cases.append({{"name": name, "visibility": "hidden", "dtype": dtype, "args": args}})
    for name, sign, number in BOUND_CASES:
        scale = MAX_ABS / 4 if sign else 1.0

        def cast(values: Any, scale: float = scale) -> Any:
            return f32(np.clip(np.asarray(values) * scale, -MAX_ABS, MAX_ABS))

        args = {{tree: random_tree(rng, {{"w": (2, 2, 2), "b": ()}}, 1.0, cast) for tree in TREES}}
        args.update({{n: num(number) for n in NUMBERS}})
        for arg, spec in ARRAYS.items():
            size = shape(spec["ndim"][-1], 0)
            if spec["dtype"] == "int32":
                low, high = (INT_BOUND // 2, INT_BOUND + 1) if sign else (-9, 10)
                args[arg] = ((sign or 1) * rng.integers(low, high, size=size)).tolist()
            elif spec["dtype"] == "uint32":
                low, high = (INT_BOUND // 2, INT_BOUND + 1) if sign > 0 else (0, 10)
                args[arg] = rng.integers(low, high, size=size).tolist()
            elif spec["dtype"] == "bool":
                args[arg] = (rng.random(size) < 0.5).tolist()
            else:
                args[arg] = random_tree(rng, size, 1.0, cast)
        args.update({{arg: 2 for arg in INTS}})
        args.update({{arg: TUPLE_VALUES[0] for arg in INT_TUPLES}})
        args.update({{arg: menu[0] for arg, menu in FUNCTIONS.items()}})
        args.update({{arg: True for arg in BOOLS}})
        args.update({{arg: choices[0] for arg, choices in STRINGS.items()}})
        args.update({{arg: {{"key": int(rng.integers(0, 2**32))}} for arg in KEYS}})
{cycled_first}        cases.append({{"name": name, "visibility": "hidden", "dtype": "float32", "args": args}})
    return cases


if __name__ == "__main__":
    write(OUT, build_cases)
'''


def _cases_readme(p: Package) -> str:
    return f"""# Cases of {p.slug}

- `public.json`: the examples, written by hand. Each is shown in the statement (at its `{{{{examples}}}}`
  line) with the reference's output, so give each an `explanation` (one sentence: why the output is
  what it is) and, where one can be worked out by hand, an `expected` output (`judge check` requires the
  reference to agree with it; leave it out for outputs nobody can work out by hand, such as random
  draws). Public cases are float32.
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
        "wrong_answer/adds_factor.py": f'''"""Mistake: Adds the factor

Adds the factor to every leaf instead of multiplying by it: use leaf * factor.
"""
import jax


def {f}(tree, factor):
    return jax.tree.map(lambda leaf: leaf + factor, tree)
''',
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
    if len(declared) > MAX_ARGS:
        raise ScaffoldError(
            f"{len(declared)} arguments, at most {MAX_ARGS} (package rule signature): pass related values "
            "as one pytree"
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
        *(
            [
                (
                    root / "functions.py",
                    menu_module(slug),
                    "the menu of the function arguments: your problem's own (list them in the statement)",
                )
            ]
            if package.menu
            else []
        ),
        (
            root / "cases" / "README.md",
            _cases_readme(package),
            "what the case files hold and how to regenerate them",
        ),
        (
            root / "cases" / "public.json",
            _public(package),
            "the examples: give each an explanation, and an `expected` output worked out by hand where one "
            "can be (leave it out for outputs nobody can work out by hand, such as random draws)",
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
    for path, text, _ in files:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    if not package.example:  # empty folders for the author's solutions (solutions/README.md says what)
        for folder in ("accepted", "wrong_answer", "trace_error"):
            (root / "solutions" / folder).mkdir(exist_ok=True)
    _run_generator(root / "generate_cases.py")
    hidden = root / "cases" / "hidden.json"
    after_public = 1 + [path for path, _, _ in files].index(root / "cases" / "public.json")
    return Created(
        [(path, todo) for path, _, todo in files[:after_public]]
        + [(hidden, "written by generate_cases.py: never edit it by hand")]
        + [(path, todo) for path, _, todo in files[after_public:]]
    )


def _run_generator(file: Path) -> None:
    """Write the hidden cases with the generator just written (its ``build_cases`` and ``OUT``)."""
    from judge.core.problems import import_trusted_file

    module = import_trusted_file(file, "scaffold_generator")
    Path(module.OUT).write_text(module.render(module.build_cases()))
