"""End-to-end cost of `judge grade` on a correct solution, import included, against an in-process floor.

Runs, side by side and interleaved so machine noise hits every variant alike:
  floor   one Python process: import jax, run the solution under jax.jit on every case (no sandbox, no judge)
  warm    `judge grade SLUG FILE --json` with the expected-output cache filled
  cold    the same with an empty expected-output cache (the reference runs on the judge's side too)
and prints p50/max per variant and the ratios to the floor. Target (issue 2): warm p50 under 3 s.

With ``--baseline DIR`` (another checkout of the judge, e.g. ``git worktree add /tmp/base <commit>``), a
fourth variant runs that checkout's ``judge grade`` (same interpreter, same solution and cases) interleaved
with the others, and the ratio warm/baseline shows what a change did to the seed problems' grading time;
both must answer ``accepted``.

    .venv/bin/python bench/bench_grade.py [--repeats 5] [--sandbox auto|bwrap|docker|process --insecure]
                                          [--baseline DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PYTHON = sys.executable
SOLUTIONS = {
    "global-norm-clipping": "problems/global-norm-clipping/solutions/accepted/tree_map_minimum.py",
    "sgd-momentum": "problems/sgd-momentum/solutions/accepted/two_tree_maps.py",
}

FLOOR = """
import json, sys
sys.path.insert(0, {root!r})
try:
    from judge.core.problems import ProblemSet
    from judge.core.trusted_jax import import_jax
except ImportError:  # a checkout from before the rooms (issue 38)
    from judge.problems import ProblemSet
    try:
        from judge.trusted_jax import import_jax
    except ImportError:  # a checkout from before judge.trusted_jax (9d2df42 and older)
        from judge.expected import _import_jax as import_jax
jax = import_jax()
problem = ProblemSet().get({slug!r})
scope = {{}}
exec(compile(open({file!r}).read(), "solution.py", "exec"), scope)
fn = jax.jit(scope[problem.spec.function])
for case in problem.cases:
    args = [a if isinstance(a, float) else jax.device_put(a) for a in case.inputs]
    jax.block_until_ready(fn(*args))
"""


def timed(argv: list[str], env: dict[str, str], cwd: Path = ROOT) -> tuple[float, str]:
    start = time.perf_counter()
    out = subprocess.run(argv, capture_output=True, text=True, env=env, cwd=cwd, timeout=300)
    elapsed = time.perf_counter() - start
    if out.returncode not in (0,):
        raise SystemExit(f"{argv} failed ({out.returncode}):\n{out.stdout[-2000:]}\n{out.stderr[-2000:]}")
    return elapsed, out.stdout


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--sandbox", default="auto")
    parser.add_argument("--insecure", action="store_true")
    parser.add_argument("--baseline", type=Path, help="another checkout of the judge to compare with")
    opts = parser.parse_args()
    baseline = opts.baseline.resolve() if opts.baseline else None
    env = {**os.environ}
    sandbox = ["--sandbox", opts.sandbox, *(["--insecure"] if opts.insecure else [])]
    judge = [PYTHON, "-m", "judge", "grade"]
    print(f"sandbox={opts.sandbox} repeats={opts.repeats} cores={os.cpu_count()}")
    for slug, file in SOLUTIONS.items():
        floor_code = FLOOR.format(root=str(ROOT), slug=slug, file=str(ROOT / file))
        # Fill the expected-output cache once so "warm" measures what a learner normally pays.
        timed([*judge, slug, file, "--json", *sandbox], env)
        times: dict[str, list[float]] = {"floor": [], "warm": [], "cold": []}
        if baseline is not None:
            base_argv = [*judge, slug, str(ROOT / file), "--json", *sandbox]
            timed(base_argv, env, baseline)
            times["baseline"] = []
        for _ in range(opts.repeats):
            times["floor"].append(timed([PYTHON, "-c", floor_code], env)[0])
            elapsed, stdout = timed([*judge, slug, file, "--json", *sandbox], env)
            assert json.loads(stdout)["verdict"] == "accepted"
            times["warm"].append(elapsed)
            with tempfile.TemporaryDirectory() as cache:
                times["cold"].append(
                    timed([*judge, slug, file, "--json", *sandbox], {**env, "JUDGE_CACHE_DIR": cache})[0]
                )
            if baseline is not None:
                elapsed, stdout = timed(base_argv, env, baseline)
                assert json.loads(stdout)["verdict"] == "accepted"
                times["baseline"].append(elapsed)
        p50 = {k: statistics.median(v) for k, v in times.items()}
        print(f"\n{slug}")
        for name, values in times.items():
            print(f"  {name:<6} p50 {p50[name]:6.2f} s   max {max(values):6.2f} s")
        print(
            f"  ratios: warm/floor {p50['warm'] / p50['floor']:.2f}x"
            f"   cold/floor {p50['cold'] / p50['floor']:.2f}x"
            f"   warm p50 {'under' if p50['warm'] < 3 else 'OVER'} the 3 s target"
        )
        if baseline is not None:
            print(f"  warm/baseline {p50['warm'] / p50['baseline']:.2f}x  (baseline: {baseline})")


if __name__ == "__main__":
    main()
