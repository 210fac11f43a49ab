"""Problem statements: Markdown with generated examples, and its HTML rendering.

``statement.md`` holds the line ``{{examples}}`` where the examples go. They are generated from the public
cases and the reference's outputs, so they can never drift apart from what the judge checks
(DESIGN.md, "Problem package"). The HTML keeps ``$...$`` and ``$$...$$`` as math spans for KaTeX.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from judge.errors import ReferenceFailure
from judge.problems import Case, Problem
from judge.pytree_json import format_value

#: The line of ``statement.md`` that the examples replace.
EXAMPLES_PLACEHOLDER = "{{examples}}"


def format_inputs(problem: Problem, case: Case) -> str:
    """``grads = {"b": 4.0, "w": [3.0, 0.0]}, max_norm = 1.0``: each argument in signature order."""
    return ", ".join(
        f"{arg.name} = {format_value(value)}"
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


def fill_examples(source: str, examples: str) -> str:
    """Replace every placeholder line of ``source`` with ``examples`` (the check insists on exactly one)."""
    return "\n".join(
        examples if line.strip() == EXAMPLES_PLACEHOLDER else line for line in source.split("\n")
    )


def statement_markdown(problem: Problem) -> str:
    """The statement with its examples filled in (expected outputs from the cache, or the reference)."""
    from judge.expected import expected_outputs

    examples = render_examples(problem, expected_outputs(problem, problem.public_cases))
    return fill_examples(problem.statement_source, examples)


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
