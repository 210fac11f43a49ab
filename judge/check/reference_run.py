"""Run a problem's reference on every case in a process of its own: ``python -m judge.check.reference_run
PROBLEM_DIR OUT_DIR``.

The ``reference`` check starts two of these with different ``PYTHONHASHSEED`` values, so a reference whose
output depends on ``hash()``, set or dict order of hashed keys, or state left by an earlier run differs
between them. Each case's output is written to ``OUT_DIR/<index>.frame`` (``sandbox.shared.wire.dumps_tree``:
data only, never pickle), or its failure to ``OUT_DIR/<index>.error`` as text. Exit 0 once every case is
written; 2 when the problem does not load.
"""

from __future__ import annotations

import sys
from pathlib import Path

from judge.core.errors import ProblemError, ReferenceFailure
from judge.core.expected import reference_outputs
from judge.core.problems import load_problem
from sandbox.shared.wire import dumps_tree


def run(root: Path, out: Path) -> int:
    """Write every case's output or failure to ``out``; 0 when done, 2 when the problem does not load."""
    try:
        problem = load_problem(root)
    except ProblemError as exc:
        print(f"the problem does not load: {exc}", file=sys.stderr)
        return 2
    for index, result in enumerate(reference_outputs(problem, problem.cases)):
        if isinstance(result, ReferenceFailure):
            (out / f"{index}.error").write_text(str(result))
        else:
            (out / f"{index}.frame").write_bytes(dumps_tree(result))
    return 0


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print("usage: python -m judge.check.reference_run PROBLEM_DIR OUT_DIR", file=sys.stderr)
        return 2
    return run(Path(argv[0]), Path(argv[1]))


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
