"""Check ``starter``: ``starter.py`` parses, defines the function with the declared signature, and imports
what it uses: every name its code reads, and every JAX module its comments or the problem's hints tell the
learner to call (``judge.authoring.starter_names``), so following them never ends in a NameError.

Whether the starter runs is the ``solutions`` check's concern (it grades the starter too).
"""

from __future__ import annotations

import ast

from judge.authoring.starter_names import Unimported, unimported
from judge.check.context import CheckContext

NAME = "starter"


def check(ctx: CheckContext) -> None:
    problem = ctx.loaded
    diag = ctx.diag
    spec = problem.spec
    file = problem.root / "starter.py"
    try:
        tree = ast.parse(problem.starter, filename=str(file))
    except SyntaxError as exc:
        diag.error(f"does not parse: {exc.msg}", file=file, at=f"line {exc.lineno}", line=exc.lineno)
        return
    functions = [
        node
        for node in tree.body
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name == spec.function
    ]
    if not functions:
        diag.error(f"does not define `{spec.function}` at the top level", file=file)
        return
    for missing in _unimported(problem.starter, spec.hints):
        if missing.in_code:
            message = f"uses `{missing.name}`, which it neither imports nor defines (a NameError on each Run)"
        else:
            told = "its comment" if missing.line is not None else missing.said
            message = (
                f"does not import `{missing.name}`, but {told} tells the learner to use `{missing.mention}` "
                "(a NameError for whoever follows it): import it"
            )
        diag.error(message, file=file, at=missing.said, line=missing.line)
    function = functions[-1]
    at = f"def {spec.function}"
    if isinstance(function, ast.AsyncFunctionDef):
        diag.error("is `async def`; the judge calls a plain function", file=file, at=at, line=function.lineno)
    args = function.args
    declared = [a.name for a in spec.args]
    written = [a.arg for a in (*args.posonlyargs, *args.args)]
    if written != declared:
        diag.error(
            f"takes ({', '.join(written)}), the spec declares ({', '.join(declared)})",
            file=file,
            at=at,
            line=function.lineno,
        )
    extras = [f"*{args.vararg.arg}"] if args.vararg else []
    extras += [a.arg for a in args.kwonlyargs]
    extras += [f"**{args.kwarg.arg}"] if args.kwarg else []
    if extras:
        diag.error(
            f"has extra parameters {', '.join(extras)} the spec does not declare",
            file=file,
            at=at,
            line=function.lineno,
        )
    if args.defaults:
        diag.warning(
            "gives parameters default values: the judge always passes every argument",
            file=file,
            at=at,
            line=function.lineno,
        )
    if len(functions) > 1:
        diag.warning(
            f"defines `{spec.function}` {len(functions)} times; the last one counts",
            file=file,
            at=at,
            line=functions[-1].lineno,
        )


def _unimported(source: str, hints: list[str]) -> list[Unimported]:
    try:
        return unimported(source, hints)
    except SyntaxError:  # what the compiler's symbol table rejects fails the solutions check, with its words
        return []
