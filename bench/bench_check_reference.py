"""What the reference check's two separate hash-seed processes cost, measured side by side.

    .venv/bin/python bench/bench_check_reference.py [--rounds 3] [--problems DIR] [SLUG]

Runs ``judge check --skip-solutions`` (in this process, through ``judge.check.check_problem``) on one
problem (default: the test fixture) with and without the separate runs, interleaved round by round, and
prints the wall time of the reference check per round and the median ratio. The separate runs start while
this process runs the reference itself, so on an idle machine with two cores most of their cost overlaps.
"""

from __future__ import annotations

import argparse
import statistics
from pathlib import Path

from judge.check import check_problem

ROOT = Path(__file__).resolve().parent.parent


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("slug", nargs="?", default="scale-tree")
    parser.add_argument("--problems", type=Path, default=ROOT / "tests" / "fixtures" / "problems")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    root = args.problems / args.slug
    times: dict[bool, list[float]] = {False: [], True: []}
    for round_ in range(1, args.rounds + 1):
        for separate in (False, True) if round_ % 2 else (True, False):
            report = check_problem(root, separate_runs=separate)
            seconds = report.check("reference").elapsed_s
            assert not report.findings, [str(f) for f in report.findings]
            times[separate].append(seconds)
            print(
                f"round {round_}: reference check {'with' if separate else 'without'} separate runs "
                f"{seconds:6.2f} s"
            )
    alone, both = statistics.median(times[False]), statistics.median(times[True])
    print(
        f"median: {alone:.2f} s in this process only, {both:.2f} s with the two separate runs: "
        f"{both / alone:.2f}x"
    )


if __name__ == "__main__":
    main()
