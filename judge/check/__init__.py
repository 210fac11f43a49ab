"""``judge check``: prove a problem package sound (the author's CI).

One check per module, run in order by ``runner``; findings are collected by ``diagnostics`` and printed
by ``formats`` (text, JSON, JUnit XML, GitHub Actions annotations).

    spec        problem.toml validates; the package loads
    rules       the catalog's package rules: solution folders, case counts and sizes, signature limits
    statement   statement.md renders and names the function
    starter     starter.py parses, has the declared signature, imports what it and its hints use
    cases       every case satisfies validator.py; its JUNK is rejected; cases match their generator
    reach       the hidden cases approach every bound the validator checks
    reference   runs under jit on every case, declared structure and dtypes, deterministic
    order       a reference that adds terms declares [compare] magnitude; require_batched can fire
    examples    the statement's examples are the public cases with the reference's outputs
    coverage    hidden cases cover every allowed dtype and the tree shapes that trip solutions up
    lookalikes  every public example's structure reappears in a hidden case with other values
    solutions   every solutions/<verdict>/ file gets its verdict; the starter is not accepted
    margins     accepted solutions well inside the tolerance, wrong ones well outside
    cost        the program's cost beside the reference's
    backend     (--backend) the reference and the value solutions on that JAX backend, per backend
"""

from judge.check.diagnostics import Finding, Severity
from judge.check.runner import (
    CHECK_NAMES,
    CheckReport,
    ProblemReport,
    check_problem,
    known_problems,
    problem_dirs,
    resolve_problem_dirs,
    run_checks,
)

__all__ = [
    "CHECK_NAMES",
    "CheckReport",
    "Finding",
    "ProblemReport",
    "Severity",
    "check_problem",
    "known_problems",
    "problem_dirs",
    "resolve_problem_dirs",
    "run_checks",
]
