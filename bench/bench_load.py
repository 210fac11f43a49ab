"""The judge on a quiet machine and under a stated synthetic load, side by side in one run.

Each phase (quiet first, then loaded) does the same, against a fresh ``judge serve`` on loopback with a
throw-away data directory:

  ready     seconds from starting ``judge serve`` to ``/readyz`` answering 200 (and the reasons it gave
            while not ready, once each)
  run       ``-n`` Runs of the public examples (``POST /api/problems/{slug}/run``): latency p50/p95
  submit    ``-n`` Submits of an accepted solution (``POST /api/submissions``, then ``?wait=``): p50/p95
  verdicts  every shipped solution of the chosen problems submitted, ``--clients`` at a time: the verdict
            of each, compared with the quiet phase's (agreement, target 100%) and the judge's own errors
            (``internal_error`` verdicts, failed submissions, HTTP errors; target 0)

The load is ``tests.load.machine_load`` (JAX import+compile loops, busy loops, page-cache eviction of the
virtualenv, fsync-heavy writers: ``--jax``, ``--spinners``, ``--io``), started before the loaded
phase's ``judge serve`` and killed after it, all of it, whatever happens. Every request has a timeout.

    .venv/bin/python bench/bench_load.py [-n 5] [--problems global-norm-clipping,sgd-momentum] \
        [--jax 4 --spinners 8 --io 2]
"""

from __future__ import annotations

import argparse
import contextlib
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.load import LoadSpec, machine_load  # noqa: E402

#: Seconds a request waits for an answer (a Submit is POSTed, then waited for in slices of this).
REQUEST_S = 120.0
#: Seconds a phase waits for ``/readyz``, and for one submission's result.
READY_S = 900.0
RESULT_S = 900.0
ACCEPTED = "problems/global-norm-clipping/solutions/accepted/tree_map_minimum.py"
PROBLEM = "global-norm-clipping"


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))] if ordered else float("nan")


@dataclass
class Phase:
    name: str
    ready_s: float = float("nan")
    reasons: list[str] = field(default_factory=list)
    run_s: list[float] = field(default_factory=list)
    submit_s: list[float] = field(default_factory=list)
    verdicts: dict[str, str] = field(default_factory=dict)
    errors: list[str] = field(default_factory=list)
    load: list[float] = field(default_factory=list)


@contextlib.contextmanager
def serve(data_dir: Path) -> Iterator[tuple[subprocess.Popen[bytes], Path]]:
    env = {
        **os.environ,
        "JUDGE_DATA_DIR": str(data_dir),
        "JUDGE_LOG_LEVEL": "warning",
        "JUDGE_RATE_LIMIT": "1000000/minute",
        "JUDGE_ANONYMOUS_RATE_LIMIT": "1000000/minute",
        "JUDGE_SUBMISSIONS_PER_CLIENT": "100000",
        "JUDGE_QUEUE_SHARE": "1",
        "JUDGE_RUNS_PER_CLIENT": "64",
        "JUDGE_QUEUE_SIZE": "512",
        "JUDGE_SANDBOX_SLOT_BASE": "300",
    }
    log = data_dir / "serve.log"
    with open(log, "wb") as out:
        proc = subprocess.Popen(
            [sys.executable, "-m", "judge", "serve", "--port", "0"],
            stdout=out,
            stderr=out,
            stdin=subprocess.DEVNULL,
            env=env,
            cwd=ROOT,
            start_new_session=True,
        )
    try:
        yield proc, log
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(60)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(30)
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, signal.SIGKILL)


def wait_ready(proc: subprocess.Popen[bytes], log: Path, phase: Phase, began: float) -> str:
    url = ""
    deadline = began + READY_S
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise SystemExit(f"judge serve exited:\n{log.read_text()[-3000:]}")
        if not url:
            for line in log.read_text().splitlines():
                if "serving on " in line:
                    url = line.split("serving on ", 1)[1].split()[0]
        else:
            with contextlib.suppress(httpx.HTTPError):
                response = httpx.get(f"{url}/readyz", timeout=10)
                if response.status_code == 200:
                    phase.ready_s = time.monotonic() - began
                    return url
                reason = str(response.json().get("reason", response.text))
                # The same reason with other numbers in it counts once.
                shape = "".join("#" if c.isdigit() else c for c in reason)
                if shape not in {"".join("#" if c.isdigit() else c for c in r) for r in phase.reasons}:
                    phase.reasons.append(reason)
        time.sleep(0.2)
    raise SystemExit(f"judge serve not ready within {READY_S:.0f} s: {phase.reasons[-1:]}")


def submit(client: httpx.Client, slug: str, code: str) -> tuple[str, float]:
    """(verdict, or ``error: ...``; seconds from POST to the result)."""
    began = time.monotonic()
    try:
        response = client.post("/api/submissions", json={"problem": slug, "code": code})
        if response.status_code != 202:
            return f"error: HTTP {response.status_code} {response.text[:200]}", time.monotonic() - began
        sid = response.json()["id"]
        while time.monotonic() - began < RESULT_S:
            body = client.get(f"/api/submissions/{sid}", params={"wait": 60}).json()
            if body["status"] == "done":
                return str(body["verdict"]), time.monotonic() - began
            if body["status"] == "failed":
                return f"error: failed ({body.get('error')})", time.monotonic() - began
        return "error: no result in time", time.monotonic() - began
    except httpx.HTTPError as exc:
        return f"error: {type(exc).__name__}: {exc}", time.monotonic() - began


def solutions(problems: list[str]) -> list[tuple[str, str, Path]]:
    out = []
    for slug in problems:
        for file in sorted((ROOT / "problems" / slug / "solutions").glob("*/*.py")):
            out.append((slug, f"{slug}/{file.parent.name}/{file.name}", file))
    return out


def run_phase(phase: Phase, n: int, problems: list[str], clients: int) -> None:
    with tempfile.TemporaryDirectory(prefix="judge-bench-load-") as scratch:
        began = time.monotonic()
        with serve(Path(scratch)) as (proc, log):
            url = wait_ready(proc, log, phase, began)
            code = (ROOT / ACCEPTED).read_text()
            with httpx.Client(base_url=url, timeout=REQUEST_S) as client:
                for i in range(n):
                    t = time.monotonic()
                    response = client.post(f"/api/problems/{PROBLEM}/run", json={"code": code})
                    phase.run_s.append(time.monotonic() - t)
                    if response.status_code != 200:
                        phase.errors.append(f"run {i}: HTTP {response.status_code} {response.text[:200]}")
                    phase.load.append(os.getloadavg()[0])
                for i in range(n):
                    verdict, took = submit(client, PROBLEM, f"{code}\n# submit {i}\n")
                    phase.submit_s.append(took)
                    if verdict != "accepted":
                        phase.errors.append(f"submit {i}: {verdict}")
                    phase.load.append(os.getloadavg()[0])
                jobs = solutions(problems)
                lock = threading.Lock()

                def work() -> None:
                    while True:
                        with lock:
                            if not jobs:
                                return
                            slug, name, file = jobs.pop()
                        verdict, _ = submit(client, slug, file.read_text())
                        with lock:
                            phase.verdicts[name] = verdict
                            phase.load.append(os.getloadavg()[0])

                threads = [threading.Thread(target=work) for _ in range(clients)]
                for thread in threads:
                    thread.start()
                for thread in threads:
                    thread.join()
    for name, verdict in phase.verdicts.items():
        if verdict.startswith("error") or verdict == "internal_error":
            phase.errors.append(f"{name}: {verdict}")


def report(quiet: Phase, loaded: Phase, spec: LoadSpec) -> None:
    def ms(values: list[float], q: float) -> str:
        return f"{pct(values, q) * 1000:9.0f} ms"

    def ratio(a: float, b: float) -> str:
        return f"{b / a:6.2f}x" if a > 0 else "   n/a"

    spans = f"quiet {_span(quiet.load)}, loaded {_span(loaded.load)}"
    print(f"\nload: {spec} (load average during the phase: {spans})")
    print(f"{'measurement':<34}{'quiet':>12}{'loaded':>12}{'ratio':>8}")
    ready = ratio(quiet.ready_s, loaded.ready_s)
    print(f"{'time to /readyz 200':<34}{quiet.ready_s:10.1f} s{loaded.ready_s:10.1f} s{ready:>8}")
    rows = (
        ("Run of the examples", quiet.run_s, loaded.run_s),
        ("Submit, POST to result", quiet.submit_s, loaded.submit_s),
    )
    for label, q_values, l_values in rows:
        for q in (0.5, 0.95):
            print(
                f"{label + f' p{round(q * 100)}':<34}{ms(q_values, q):>12}{ms(l_values, q):>12}"
                f"{ratio(pct(q_values, q), pct(l_values, q)):>8}"
            )
    names = sorted(set(quiet.verdicts) & set(loaded.verdicts))
    same = [n for n in names if quiet.verdicts[n] == loaded.verdicts[n]]
    share = 100 * len(same) / max(1, len(names))
    print(f"{'verdicts equal to the quiet run':<34}{len(same):>8}/{len(names)} ({share:.1f}%)")
    print(f"{'judge errors (quiet / loaded)':<34}{len(quiet.errors):>12}{len(loaded.errors):>12}")
    for name in names:
        if quiet.verdicts[name] != loaded.verdicts[name]:
            print(f"  differs: {name}: quiet {quiet.verdicts[name]}, loaded {loaded.verdicts[name]}")
    for phase in (quiet, loaded):
        for error in phase.errors:
            print(f"  {phase.name} error: {error}")
        for reason in phase.reasons:
            print(f"  {phase.name} /readyz said: {reason}")


def _span(values: list[float]) -> str:
    return f"{min(values):.1f}-{max(values):.1f} (median {statistics.median(values):.1f})" if values else "-"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("-n", type=int, default=5, help="Runs and Submits per phase")
    parser.add_argument("--problems", default="global-norm-clipping,sgd-momentum,adamw")
    parser.add_argument("--clients", type=int, default=2, help="submissions in flight in the verdicts step")
    parser.add_argument("--jax", type=int, default=4)
    parser.add_argument("--spinners", type=int, default=8)
    parser.add_argument("--io", type=int, default=2)
    args = parser.parse_args()
    problems = [p for p in args.problems.split(",") if p] if args.problems != "all" else sorted(
        p.name for p in (ROOT / "problems").iterdir() if (p / "problem.toml").is_file()
    )  # fmt: skip
    spec = LoadSpec(jax=args.jax, spinners=args.spinners, evict=True, io=args.io, duration_s=3600)
    print(f"{len(solutions(problems))} shipped solutions of {', '.join(problems)}; load: {spec}")
    quiet = Phase("quiet")
    run_phase(quiet, args.n, problems, args.clients)
    print(f"quiet phase done: ready in {quiet.ready_s:.1f} s", flush=True)
    loaded = Phase("loaded")
    with machine_load(spec, warm_s=15.0):
        run_phase(loaded, args.n, problems, args.clients)
    report(quiet, loaded, spec)


if __name__ == "__main__":
    main()
