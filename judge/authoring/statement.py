"""Problem statements: Markdown with generated sections, and its HTML rendering.

``statement.md`` holds two lines that are replaced when it is shown, so the statement can never drift
apart from what the judge does:

- ``{{examples}}``: the examples, generated from the public cases and the reference's outputs;
- ``{{rules}}``: every rule the judge enforces, generated from the spec (``render_rules``): how the
  function is called (``jax.jit``, which arguments are traced, how numbers arrive), the program rules
  (host callbacks), the extra checks (inputs left unchanged), the dtype and tolerance rules (with what
  the relative tolerance is taken of, under ``[compare] magnitude``) and the container rule.

The HTML keeps ``$...$`` and ``$$...$$`` as math spans for KaTeX.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from judge.core.errors import ReferenceFailure
from judge.core.menu import MenuChoice
from judge.core.problems import Case, Problem
from judge.core.pytree_json import format_value
from judge.core.spec import (
    AutodiffRule,
    BatchedRule,
    ForbidOpsRule,
    InPlaceRule,
    LoopRule,
    ProblemSpec,
    RematRule,
)
from judge.kinds.base import listed_names
from judge.kinds.registry import KINDS, kind_of

#: The line of ``statement.md`` that the examples replace.
EXAMPLES_PLACEHOLDER = "{{examples}}"
#: The line of ``statement.md`` that the generated rules replace.
RULES_PLACEHOLDER = "{{rules}}"
#: Every placeholder a statement must hold exactly once, as its own line.
PLACEHOLDERS = (EXAMPLES_PLACEHOLDER, RULES_PLACEHOLDER)
#: The heading of the generated rules section.
RULES_HEADING = "## How your function is run and judged"


def format_inputs(problem: Problem, case: Case) -> str:
    """``grads = {"b": 4.0, "w": [3.0, 0.0]}, max_norm = 1.0``: each argument in signature order (a function
    argument by the name of its menu function: ``f = quartic``)."""
    return ", ".join(
        f"{arg.name} = {value if isinstance(value, MenuChoice) else format_value(value)}"
        for arg, value in zip(problem.spec.args, case.inputs, strict=True)
    )


def format_output(problem: Problem, output: Any) -> str:
    """The output as shown in examples; a tuple output is named: ``(new_params, new_velocity) = (...)``."""
    spec = problem.spec.output
    text = format_value(output)
    if spec.kind == "tuple" and spec.names and isinstance(output, tuple) and len(output) == len(spec.names):
        return f"({', '.join(spec.names)}) = {text}"
    return text


def render_examples(problem: Problem, expected_outputs: Sequence[Any]) -> str:
    """Markdown for every public case: its input, the reference output and its explanation when it has one.

    ``expected_outputs`` holds one output per public case, in order (``ReferenceFailure`` where it failed).
    """
    cases = problem.public_cases
    if len(expected_outputs) != len(cases):
        raise ValueError(f"{len(expected_outputs)} outputs for {len(cases)} public cases")
    blocks = []
    for number, (case, output) in enumerate(zip(cases, expected_outputs, strict=True), start=1):
        shown = (
            "(the reference failed on this case)"
            if isinstance(output, ReferenceFailure)
            else format_output(problem, output)
        )
        block = [
            f"### Example {number}",
            "",
            "```text",
            f"Input: {format_inputs(problem, case)}",
            f"Output: {shown}",
            "```",
        ]
        if case.definition.explanation:
            block += ["", case.definition.explanation.strip()]
        blocks.append("\n".join(block))
    return "\n\n".join(blocks)


# ------------------------------------------------------------------------------------------ the rules

#: One kind of rule: the bullets (Markdown) it states for a spec, none when the spec does not enforce it.
RuleSource = Callable[[ProblemSpec], list[str]]


_names = listed_names


def _call_rules(spec: ProblemSpec) -> list[str]:
    """``jax.jit``, the traced and static arguments, and how ``number`` arguments arrive."""
    traced = [a.name for a in spec.args if a.traced]
    static = [a.name for a in spec.args if not a.traced]
    rules = []
    if traced:
        verb = "arrives" if len(traced) == 1 else "arrive"
        rules.append(
            f"The judge calls `{spec.function}` inside `jax.jit`, and {_names(traced)} {verb} traced: their "
            "values are unknown while your function is traced, so a Python `if` or `while` on them, "
            "`float()`, `int()`, `.item()` or a NumPy call on them fails (`trace_error`). Choose with "
            "`jnp.where`, `jnp.minimum` or `jax.lax.cond` instead."
        )
    if static:
        verb = "arrives" if len(static) == 1 else "arrive"
        rules.append(
            f"{_names(static)} {verb} as plain Python values (static arguments of `jax.jit`, passed with "
            "`static_argnames`): you may use them in Python `if`s, loops and shapes, and each distinct value "
            "is traced and compiled on its own."
        )
    rules += _kind_notes(spec, after_errors=False)
    rules.append(
        "Any other exception your function raises while it is traced or run (an `IndexError`, a "
        "`custom_vjp` whose backward pass returns the wrong structure, a shape mismatch) is a "
        "`runtime_error`, shown with its message; an output of the wrong structure, shape, dtype or value "
        "is a `wrong_answer`."
    )
    rules += _kind_notes(spec, after_errors=True)
    return rules


def _kind_notes(spec: ProblemSpec, *, after_errors: bool) -> list[str]:
    """The kinds' notes on their arguments (``judge.kinds.base.Kind.statement_notes``), in the kinds'
    ``statement_order`` and then in signature order; those from order 50 on follow the note on errors."""
    notes: list[str] = []
    orders = sorted({kind.statement_order for kind in KINDS.values()})
    for order in orders:
        if (order >= _AFTER_ERRORS) != after_errors:
            continue
        for arg in spec.args:
            kind = kind_of(arg.kind)
            if kind.statement_order == order:
                notes += kind.statement_notes(arg, [a for a in spec.args if a.kind == arg.kind])
    return notes


#: The first ``statement_order`` whose notes follow the note on exceptions.
_AFTER_ERRORS = 50


def _program_rules(spec: ProblemSpec) -> list[str]:
    """Rules about the traced program itself."""
    if not spec.compare.forbid_host_callbacks:
        return []
    return [
        "Host callbacks are refused: a program that calls `jax.pure_callback` or "
        "`jax.experimental.io_callback` gets `trace_error`. `print` and `jax.debug.print` work for "
        "debugging; what they print is shown for the examples and your own Run inputs, never for hidden "
        "cases."
    ]


def _declared_rules(spec: ProblemSpec) -> list[str]:
    """The program rules the problem declares (``[[rules]]``), checked on the compiled program."""
    rules = []
    for rule in spec.rules:
        if isinstance(rule, LoopRule):
            rules.append(
                f"This problem asks you to {rule.asks}. The judge checks the compiled program: it must "
                f"contain a loop (`jax.lax.scan`, `jax.lax.fori_loop` and `jax.lax.while_loop` make one) "
                f"whose body does {rule.body_work}. A Python `for` loop is unrolled while `jax.jit` traces "
                "it and leaves no loop, nor does `jax.vmap`: such a program is a wrong answer (`rule`) even "
                "when every value is right."
                + (
                    " The judge also compares the programs of cases with different numbers of steps: the "
                    "operations outside the loop must not grow with the number of steps (an unrolled copy "
                    "of the step beside the loop does), so every step belongs in the loop body."
                    if rule.steps is not None
                    else ""
                )
            )
        elif isinstance(rule, InPlaceRule):
            names = ", ".join(f'"{n}"' for n in rule.donate)
            shown = " and ".join(f"`{n}`" for n in rule.donate)
            rules.append(
                f"This problem asks you to {rule.asks}. The judge compiles your function as "
                f"`jax.jit(..., donate_argnames=({names}{',' if len(rule.donate) == 1 else ''}))`, so the "
                f"buffers of {shown} may be reused for the outputs, and checks the compiled program: each "
                f"donated buffer must be reused for an output, and the program may read and write at most "
                f"{rule.max_traffic:g} times the bytes of {shown} (XLA's cost analysis). Writing the new "
                "entries with `jax.lax.dynamic_update_slice` or `.at[...].set` touches only those entries; "
                "rebuilding the buffer with `jnp.concatenate`, `jnp.pad`, a `jnp.where` over every "
                "position or a one-hot multiply-add reads and writes all of it, and a loop cannot be "
                "measured: such a program is a wrong answer (`rule`) even when every value is right."
            )
        elif isinstance(rule, ForbidOpsRule):
            rules.append(
                f"This problem asks you to {rule.asks}: a program that contains {rule.what} (checked on the "
                "compiled program, nested computations included) is a wrong answer (`rule`)."
                + (
                    " The judge also compares the programs of cases with different numbers of steps: a "
                    f"program may grow by at most {rule.steps.per_doubling} operations each time the "
                    "number of steps doubles, so a Python `for` loop over the steps, which `jax.jit` "
                    "unrolls into one copy per step, is a wrong answer too."
                    if rule.steps is not None and rule.steps.per_doubling is not None
                    else " The judge also compares the programs of cases with different numbers of steps: "
                    "the operations must not grow with the number of steps (a Python `for` loop over the "
                    "steps is unrolled into one copy per step)."
                    if rule.steps is not None
                    else ""
                )
            )
        elif isinstance(rule, AutodiffRule):
            rules.append(_autodiff_text(rule))
        elif isinstance(rule, BatchedRule):
            rules.append(_batched_text(rule))
        elif isinstance(rule, RematRule):
            rules.append(
                f"This problem asks you to {rule.asks}. The judge checks the compiled gradient program: "
                "`jax.checkpoint` (with its default `prevent_cse=True`) passes the inputs it saves through "
                "an optimization barrier and computes the function again from them in the backward pass, "
                f"and that second computation of {rule.what} must reach the gradient, while your "
                "function's own output comes from the ordinary forward pass. A program that stores every "
                "activation (no `jax.checkpoint`), or holds an `optimization_barrier` that nothing is "
                "recomputed from, is a wrong answer (`rule`) even when every value is right."
            )
    return rules


def _autodiff_text(rule: AutodiffRule) -> str:
    outputs = _names(rule.outputs)
    return (
        f"This problem asks you to {rule.asks}: {outputs} must come from JAX's automatic differentiation "
        "of your own function (`jax.grad`, `jax.value_and_grad`, `jax.vjp`, `jax.jacrev`, `jax.jacfwd` or "
        "`jax.jvp`). The judge calls your function twice in the same program, once with every autodiff "
        "seed (the cotangent `jax.grad` starts from, the tangent of `jax.jvp`) multiplied by a factor it "
        "chooses; what autodiff returns is multiplied with it. A derivative written out by hand, or "
        "`jax.grad` of something other than what you return, is not, and is a wrong answer (`rule`) even "
        "when its values are right. Python prints of the second call are not shown."
    )


def _batched_text(rule: BatchedRule) -> str:
    member = rule.member
    return (
        f"This problem asks you to {rule.asks}: the work must be one batched computation over axis "
        f"{rule.axis} of `{rule.arg}` (one {member} per slice), as `jax.vmap` makes it. The judge checks "
        "the compiled programs: a loop (`jax.lax.map`, `jax.lax.scan`, `jax.lax.fori_loop`) is refused, and "
        f"two programs whose inputs differ only in the number of {member}s must be the same program (the "
        "same operations, only their shapes differ), since a Python loop or comprehension over the "
        f"{member}s is unrolled into one copy per {member} (even beside a `jax.vmap`). Such a program is "
        "a wrong answer (`rule`) even when every value is right; any formulation inside `jax.vmap` "
        "(matrix products, broadcasting and sums) and an `einsum` over the batched arrays pass."
    )


def _gradient_rules(spec: ProblemSpec) -> list[str]:
    """The transformation check (``[gradient]``): what is differentiated, with which cotangent."""
    gradient = spec.gradient
    if gradient is None:
        return []
    cotangent = (
        "a cotangent of ones for every output leaf (the gradient of the sum of all outputs)"
        if gradient.cotangent == "ones"
        else "a fixed cotangent that differs from element to element and from leaf to leaf: 1, 1.25, 1.5 or "
        "1.75 times 1, 8, 1/8, 64 or 1/64, positive and negative, so from 1/64 to 112 in size, exact in the "
        "leaf's dtype"
    )
    return [
        f"Besides the value, the judge checks the gradient of `{spec.function}` with respect to "
        f"{_names(gradient.wrt)}: in the same `jax.jit` program it calls `jax.vjp` on your function (the "
        f"other arguments held fixed) with {cotangent}, and compares the result with the reference's, with "
        "the same dtypes and tolerances as the output. A right value with a wrong gradient is a wrong answer "
        "whose message starts `gradient of the output w.r.t.`."
    ]


def _check_rules(spec: ProblemSpec) -> list[str]:
    """The extra checks after the values match."""
    rules = []
    trees = [a.name for a in spec.args if kind_of(a.kind).tree]
    if "inputs_unchanged" in spec.compare.checks and trees:
        rules.append(
            f"{_names(trees)} must be left exactly as they were, the dicts and lists that hold their leaves "
            "included: changing them in place is a wrong answer (`mutation`) even when every value is right. "
            "Build new dicts and lists for the results."
        )
    return rules


def _dtype_rules(spec: ProblemSpec) -> list[str]:
    tolerances = "; ".join(
        f"{dtype} within {spec.compare.tolerance[dtype].describe()}" for dtype in spec.dtypes.allowed
    )
    exact = (
        [
            "Integer and boolean leaves (int32 ids, bool masks) must match exactly, dtype included: an int32 "
            "mask where a bool one is expected is a wrong answer."
        ]
        if set(spec.output.exact_dtypes) - {"key"}
        else []
    )
    if "key" in spec.output.exact_dtypes:
        exact.append(
            "Returned PRNG keys must be typed keys, as `jax.random.split`, `jax.random.fold_in` and "
            "`jax.random.key` make them, and are compared exactly, as keys: the same key-array shape and the "
            "same key data. Their raw data (`jax.random.key_data`) or a legacy `jax.random.PRNGKey` uint32 "
            "array where a key is expected is a wrong answer, even with the right numbers in it."
        )
    allowed = spec.dtypes.allowed
    run_dtypes = (
        [
            f"On the page, *Run on my input* can give your inputs' float leaves any of this problem's dtypes "
            f"({' or '.join(allowed)}; {spec.dtypes.run_panel} unless you choose another): try "
            "your function on bfloat16 before you submit."
        ]
        if len(allowed) > 1
        else []
    )
    return [
        *exact,
        *run_dtypes,
        "Every returned leaf must be a JAX array with exactly the expected shape and dtype (a float32 leaf "
        "where a bfloat16 one is expected is a wrong answer); whether it is weakly typed does not matter.",
        f"Values are compared with the tolerance of the expected leaf's dtype: {tolerances} (an ulp is the "
        "spacing of the dtype at a value; a result is one element of a returned tuple or one entry of a "
        "returned dict). NaN only matches NaN at the same place, and an infinity only the same infinity.",
        *_order_rule(spec),
        *_backend_rules(spec),
    ]


def _order_rule(spec: ProblemSpec) -> list[str]:
    """The sentence for ``[compare] magnitude``: what the relative tolerance is relative to."""
    if spec.compare.magnitude_function is None:
        return []
    return [
        "Where the terms that make a result cancel, the relative part of the tolerance is taken of the sum "
        "of the terms' absolute values rather than of the small result, so a correct program is accepted "
        "whatever order it adds in."
    ]


def _backend_rules(spec: ProblemSpec) -> list[str]:
    """The precision the problem grades at and the tolerances that differ on an accelerator."""
    rules = []
    precision = spec.compare.matmul_precision
    if precision is not None:
        rules.append(
            f"Matrix products are graded at `jax.default_matmul_precision('{precision}')`: the judge traces "
            "the reference and your function under it, on every backend (at JAX's default a TPU rounds the "
            "inputs of a float32 product to bfloat16). Choosing a lower precision for a product yourself "
            "only makes your own result less accurate."
        )
    for name, over in sorted(spec.compare.backend.items()):
        merged = spec.compare.tolerance_on(name)
        bounds = "; ".join(f"{dtype} within {merged[str(dtype)].describe()}" for dtype in over.tolerance)
        rules.append(f"Graded on a {name.upper()}, values are compared with {bounds}: {over.reason}.")
        rules += [
            f"Graded on a {name.upper()}: {why.rstrip('.')}." for why in over.same_as_reference.values()
        ]
    return rules


def _container_rules(spec: ProblemSpec) -> list[str]:
    tuples = (
        "a list may stand for an expected tuple and a tuple for an expected list"
        if spec.compare.tuple_as_list
        else "a list where a tuple is expected (or a tuple where a list is expected) is a structure mismatch"
    )
    return [
        "Containers: subclasses of dict, list and tuple (OrderedDict, defaultdict, NamedTuple) count as "
        "their base container; any other container type is a structure mismatch. Dict keys must match "
        f"exactly (their order does not matter), and {tuples}."
    ]


#: Every kind of rule the statement states, in order. A new kind of rule the judge enforces (a program
#: rule declared in the spec, such as "uses `jax.lax.scan`") adds its source here, so it is stated in
#: every statement that declares it.
def _device_rules(spec: ProblemSpec) -> list[str]:
    """A problem of several devices: where they come from, how inputs arrive, and the sharding comparison."""
    sandbox = spec.sandbox
    if sandbox.devices == 1 or sandbox.mesh is None:
        return []
    axes = _names(sandbox.mesh.axes)
    shape = "(" + ", ".join(str(n) for n in sandbox.mesh.shape) + ")"
    return [
        f"Your function runs on {sandbox.devices} CPU devices (`jax.devices()` lists them; the mesh of shape "
        f"{shape} with axes {axes} lays out devices 0 to {sandbox.devices - 1} in row-major order), and "
        "every input arrives replicated on all of them. After the values, each output's sharding as the "
        "compiled program places it (which devices hold which block, whatever the mesh axes are called) "
        "must be the expected one: a difference is wrong_answer (reason `sharding`), naming the output and "
        "both placements."
    ]


def _cost_rules(spec: ProblemSpec) -> list[str]:
    rule = spec.cost
    if rule is None:
        return []
    bounds = []
    if rule.max_flops_ratio is not None:
        bounds.append(f"at most {rule.max_flops_ratio:g} times the reference solution's FLOPs")
    if rule.max_bytes_ratio is not None:
        bounds.append(f"at most {rule.max_bytes_ratio:g} times its bytes accessed")
    if not bounds:
        return []
    return [
        f"Your compiled program may cost {' and '.join(bounds)} on each case, as XLA's cost analysis counts "
        "them; a program over that is wrong_answer."
    ]


RULE_SOURCES: tuple[RuleSource, ...] = (
    _call_rules,
    _device_rules,
    _program_rules,
    _declared_rules,
    _cost_rules,
    _gradient_rules,
    _check_rules,
    _dtype_rules,
    _container_rules,
)


def stated_rules(spec: ProblemSpec) -> list[str]:
    """Every rule the judge enforces for ``spec``, one Markdown bullet text each."""
    return [rule for source in RULE_SOURCES for rule in source(spec)]


def render_rules(spec: ProblemSpec) -> str:
    """The generated section that replaces ``{{rules}}``: a heading and one bullet per rule."""
    return "\n".join([RULES_HEADING, "", *(f"- {rule}" for rule in stated_rules(spec))])


# ------------------------------------------------------------------------------------------ filling in


def fill_placeholder(source: str, placeholder: str, text: str) -> str:
    """Replace every line of ``source`` that is ``placeholder`` with ``text`` (the check insists on one)."""
    return "\n".join(text if line.strip() == placeholder else line for line in source.split("\n"))


def fill_examples(source: str, examples: str) -> str:
    """Replace the ``{{examples}}`` line of ``source`` with ``examples``."""
    return fill_placeholder(source, EXAMPLES_PLACEHOLDER, examples)


def fill_statement(problem: Problem, examples: str) -> str:
    """The statement source with both generated sections in place."""
    filled = fill_examples(problem.statement_source, examples)
    return fill_placeholder(filled, RULES_PLACEHOLDER, render_rules(problem.spec))


def statement_markdown(problem: Problem) -> str:
    """The statement with its examples (expected outputs from the cache, or the reference) and rules."""
    from judge.core.expected import expected_outputs

    examples = render_examples(problem, expected_outputs(problem, problem.public_cases))
    return fill_statement(problem, examples)


def markdown_to_html(text: str) -> str:
    """CommonMark + tables, raw HTML disabled, ``$...$``/``$$...$$`` kept as math spans for KaTeX."""
    from markdown_it import MarkdownIt
    from mdit_py_plugins.dollarmath import dollarmath_plugin

    md = MarkdownIt("commonmark", {"html": False}).enable("table").use(dollarmath_plugin)
    html: str = md.render(text)
    return html


def statement_html(problem: Problem) -> str:
    """The full statement as HTML."""
    return markdown_to_html(statement_markdown(problem))
