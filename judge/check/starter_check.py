"""Check ``starter``: ``starter.py`` parses and defines the function with the declared signature.

Whether the starter runs is the ``solutions`` check's concern (it grades the starter too).
"""

from __future__ import annotations

import ast

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
