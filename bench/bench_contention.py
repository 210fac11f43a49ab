"""A judge quiet and beside several other judges on one host (the trials' shape), side by side in one run.

Each phase (quiet first, then loaded) starts a fresh measured ``judge serve`` on loopback (its own data
directory and slot base; quiet, its own start gate, loaded, the load's) and measures:

  ready     seconds from starting it to ``/readyz`` answering 200 (and the reasons it gave meanwhile)
  run       ``-n`` Runs of the public examples (``POST /api/v1/problems/{slug}/run``): latency p50/p95,
            an honest "later" (429/503 with Retry-After) waited out within it and counted
  submit    ``-n`` Submits of an accepted solution (POST, then ``?wait=`` until done): p50/p95
  verdicts  every shipped solution of the chosen problems (the seed problems; ``--all``: every problem)
            submitted ``--clients`` at a time: each verdict compared with the quiet phase's (agreement,
            target 100%), and the judge's own errors (target 0): an HTTP error, a Run that is not 200, an
            ``internal_error`` verdict, a ``failed`` submission, a submission that needed more than one
            attempt

The loaded phase runs beside ``tests.host_load``: ``--services`` other ``judge serve`` processes with their
own learners (a Run every 2 s, accepted and spinning submissions), ``--checks`` loops of ``judge check
--werror`` on a seed problem, ``--graders`` loops of ``judge grade`` and ``--spinners`` busy loops, all
started before the measured service and killed after it, whatever happens. What went wrong in the load
itself (a Run of another service that failed, a red check, ...) is printed as the load's errors.

``--checkout PATH`` runs the measured service from another checkout with this virtualenv (e.g. one made
with ``git worktree add /tmp/judge-base 4dc4d76``), against the same load of this checkout's judges: a
change's effect under contention, in one run.

    .venv/bin/python bench/bench_contention.py [-n 5] [--clients 2] [--all | --problems a,b] \\
        [--services 3 --checks 1 --graders 2 --spinners 4] [--checkout PATH]
"""

from __future__ import annotations

import argparse
import contextlib
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.host_load import LATER_WAIT_S, HostLoadSpec, host_load, later_by, summary  # noqa: E402

#: The seed problems (every solution of them is graded in each phase unless --all or --problems).
SEED_PROBLEMS = ("global-norm-clipping", "sgd-momentum")
PROBLEM = "global-norm-clipping"
ACCEPTED = ROOT / "problems" / PROBLEM / "solutions" / "accepted" / "tree_map_minimum.py"
#: Seconds one request may take, a phase may wait for ``/readyz`` and for one submission's result.
REQUEST_S = 300.0
READY_S = 900.0
RESULT_S = 1200.0
#: The measured service's slots: away from the load's services (300 up) and CLI runs (0 up).
SLOT_BASE = 800


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
    load_errors: list[str] = field(default_factory=list)
    #: Runs answered "later" (429/503 with Retry-After) before their answer.
    later: int = 0
    loadavg: list[float] = field(default_factory=list)


@contextlib.contextmanager
def serve(
    data_dir: Path, checkout: Path, extra: Mapping[str, str]
) -> Iterator[tuple[subprocess.Popen[bytes], Path]]:
    env = {
        **os.environ,
        **extra,
        "JUDGE_DATA_DIR": str(data_dir),
        "JUDGE_PROBLEMS_DIR": str(ROOT / "problems"),
        "JUDGE_LOG_LEVEL": "warning",
        "JUDGE_RATE_LIMIT": "1000000/minute",
        "JUDGE_ANONYMOUS_RATE_LIMIT": "1000000/minute",
        "JUDGE_SUBMISSIONS_PER_CLIENT": "100000",
        "JUDGE_QUEUE_SHARE": "1",
        "JUDGE_RUNS_PER_CLIENT": "64",
        "JUDGE_QUEUE_SIZE": "1024",
        "JUDGE_SANDBOX_SLOT_BASE": str(SLOT_BASE),
    }
    log = data_dir / "serve.log"
    with open(log, "wb") as out:
        proc = subprocess.Popen(
            [sys.executable, "-m", "judge", "serve", "--port", "0"],
            stdout=out,
            stderr=out,
            stdin=subprocess.DEVNULL,
            env=env,
            cwd=checkout,  # ``-m judge`` imports the checkout's judge package (sys.path[0] is the cwd)
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
    while time.monotonic() < began + READY_S:
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
                shape = "".join("#" if c.isdigit() else c for c in reason)  # the same words count once
                if shape not in {"".join("#" if c.isdigit() else c for c in r) for r in phase.reasons}:
                    phase.reasons.append(reason)
        time.sleep(0.2)
    raise SystemExit(f"judge serve not ready within {READY_S:.0f} s: {phase.reasons[-1:]}")


def submit(client: httpx.Client, slug: str, code: str) -> tuple[str, float, str | None]:
    """(verdict, or ``error: ...``; seconds from POST to the result; the judge's error, if any)."""
    began = time.monotonic()
    try:
        response = client.post("/api/v1/submissions", json={"problem": slug, "code": code})
        if response.status_code != 202:
            why = f"HTTP {response.status_code} {response.text[:200]}"
            return f"error: {why}", time.monotonic() - began, why
        sid = response.json()["id"]
        while time.monotonic() - began < RESULT_S:
            body: dict[str, Any] = client.get(f"/api/v1/submissions/{sid}", params={"wait": 60}).json()
            took = time.monotonic() - began
            if body["status"] == "failed":
                return (
                    f"error: failed ({body.get('error')})",
                    took,
                    f"failed after {body['attempts']} attempts",
                )
            if body["status"] == "done":
                verdict = str(body["verdict"])
                if verdict == "internal_error":
                    return verdict, took, "internal_error"
                if body["attempts"] != 1:
                    return verdict, took, f"{verdict} after {body['attempts']} attempts"
                return verdict, took, None
        return "error: no result in time", time.monotonic() - began, "no result in time"
    except httpx.HTTPError as exc:
        why = f"{type(exc).__name__}: {exc}"
        return f"error: {why}", time.monotonic() - began, why


def solutions(problems: list[str]) -> list[tuple[str, str, Path]]:
    out = []
    for slug in problems:
        for file in sorted((ROOT / "problems" / slug / "solutions").glob("*/*.py")):
            out.append((slug, f"{slug}/{file.parent.name}/{file.name}", file))
    return out


def run_phase(phase: Phase, args: argparse.Namespace, problems: list[str], extra: Mapping[str, str]) -> None:
    with tempfile.TemporaryDirectory(prefix="judge-bench-contention-") as scratch:
        # Quiet: a start gate of its own, so other judges of the host (the default gate) queue nothing ahead.
        extra = {"JUDGE_START_GATE_DIR": str(Path(scratch) / "start-gate"), **extra}
        began = time.monotonic()
        with serve(Path(scratch), args.checkout, extra) as (proc, log):
            url = wait_ready(proc, log, phase, began)
            code = ACCEPTED.read_text()
            with httpx.Client(base_url=url, timeout=REQUEST_S) as client:
                for i in range(args.n):
                    t = time.monotonic()
                    while True:
                        try:
                            response = client.post(f"/api/v1/problems/{PROBLEM}/run", json={"code": code})
                            status, text = response.status_code, response.text
                        except httpx.HTTPError as exc:
                            status, text = 0, f"{type(exc).__name__}: {exc}"
                            break
                        retry = later_by(response)
                        if retry is None or time.monotonic() - t > REQUEST_S:
                            break
                        phase.later += 1  # an honest "come back in N s": waited out, in the latency
                        time.sleep(min(retry, LATER_WAIT_S))
                    phase.run_s.append(time.monotonic() - t)
                    if status != 200:
                        phase.errors.append(f"run {i}: HTTP {status} {text[:200]}")
                    phase.loadavg.append(os.getloadavg()[0])
                for i in range(args.n):
                    verdict, took, error = submit(client, PROBLEM, f"{code}\n# submit {i}\n")
                    phase.submit_s.append(took)
                    if error is not None or verdict != "accepted":
                        phase.errors.append(f"submit {i}: {error or verdict}")
                    phase.loadavg.append(os.getloadavg()[0])
            jobs = solutions(problems)
            lock = threading.Lock()

            def work() -> None:
                with httpx.Client(base_url=url, timeout=REQUEST_S) as own:
                    while True:
                        with lock:
                            if not jobs:
                                return
                            slug, name, file = jobs.pop()
                        verdict, _, error = submit(own, slug, file.read_text())
                        with lock:
                            phase.verdicts[name] = verdict
                            if error is not None:
                                phase.errors.append(f"{name}: {error}")
                            phase.loadavg.append(os.getloadavg()[0])

            threads = [threading.Thread(target=work) for _ in range(args.clients)]
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join()


def report(quiet: Phase, loaded: Phase, spec: HostLoadSpec, checkout: Path) -> None:
    def ms(values: list[float], q: float) -> str:
        return f"{pct(values, q) * 1000:9.0f} ms"

    def ratio(a: float, b: float) -> str:
        return f"{b / a:6.2f}x" if a > 0 else "   n/a"

    print(f"\nmeasured service: {checkout}; load beside it: {spec.services} services, {spec.checks} check "
          f"loops, {spec.graders} grade loops, {spec.spinners} busy loops")  # fmt: skip
    print(f"load average during the phase: quiet {_span(quiet.loadavg)}, loaded {_span(loaded.loadavg)}")
    print(f"{'measurement':<34}{'quiet':>12}{'loaded':>12}{'ratio':>8}")
    ready = ratio(quiet.ready_s, loaded.ready_s)
    print(f"{'time to /readyz 200':<34}{quiet.ready_s:10.1f} s{loaded.ready_s:10.1f} s{ready:>8}")
    for label, q_values, l_values in (
        ("Run of the examples", quiet.run_s, loaded.run_s),
        ("Submit, POST to result", quiet.submit_s, loaded.submit_s),
    ):
        for q in (0.5, 0.95):
            print(
                f"{label + f' p{round(q * 100)}':<34}{ms(q_values, q):>12}{ms(l_values, q):>12}"
                f"{ratio(pct(q_values, q), pct(l_values, q)):>8}"
            )
    names = sorted(set(quiet.verdicts) & set(loaded.verdicts))
    same = [n for n in names if quiet.verdicts[n] == loaded.verdicts[n]]
    share = 100 * len(same) / max(1, len(names))
    print(f"{'verdicts equal to the quiet run':<34}{len(same):>8}/{len(names)} ({share:.1f}%)")
    print(f"{'Runs told to come back later':<34}{quiet.later:>12}{loaded.later:>12}")
    print(f"{'judge errors (target 0)':<34}{len(quiet.errors):>12}{len(loaded.errors):>12}")
    print(f"{'errors of the load itself':<34}{'':>12}{len(loaded.load_errors):>12}")
    for name in names:
        if quiet.verdicts[name] != loaded.verdicts[name]:
            print(f"  differs: {name}: quiet {quiet.verdicts[name]}, loaded {loaded.verdicts[name]}")
    for phase in (quiet, loaded):
        for error in phase.errors:
            print(f"  {phase.name} error: {error}")
        for reason in phase.reasons:
            print(f"  {phase.name} /readyz said: {reason}")
    for line in loaded.load_errors:
        print(f"  load: {line}")


def _span(values: list[float]) -> str:
    return (
        f"{min(values):.1f}-{max(values):.1f} (median {sorted(values)[len(values) // 2]:.1f})"
        if values
        else "-"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("-n", type=int, default=5, help="Runs and Submits per phase")
    parser.add_argument(
        "--problems", default=",".join(SEED_PROBLEMS), help="problems whose solutions are graded"
    )
    parser.add_argument("--all", action="store_true", help="every shipped solution of every problem")
    parser.add_argument("--clients", type=int, default=2, help="submissions in flight in the verdicts step")
    parser.add_argument("--services", type=int, default=3, help="other judge serve processes of the load")
    parser.add_argument("--checks", type=int, default=1, help="judge check --werror loops of the load")
    parser.add_argument("--graders", type=int, default=2, help="judge grade loops of the load")
    parser.add_argument("--spinners", type=int, default=4, help="busy loops of the load")
    parser.add_argument("--checkout", type=Path, default=ROOT, help="the measured service's checkout")
    args = parser.parse_args()
    args.checkout = args.checkout.resolve()
    problems = (
        sorted(p.name for p in (ROOT / "problems").iterdir() if (p / "problem.toml").is_file())
        if args.all
        else [p for p in args.problems.split(",") if p]
    )
    spec = HostLoadSpec(
        services=args.services,
        checks=args.checks,
        graders=args.graders,
        spinners=args.spinners,
        problems_dir=ROOT / "problems",
        problem=PROBLEM,
        check_problem=PROBLEM,
        accepted=ACCEPTED,
        function="clip_by_global_norm",
        duration_s=4 * 3600,
    )
    print(f"{len(solutions(problems))} shipped solutions of {', '.join(problems)}", flush=True)
    quiet = Phase("quiet")
    run_phase(quiet, args, problems, {})
    print(f"quiet phase done: ready in {quiet.ready_s:.1f} s", flush=True)
    loaded = Phase("loaded")
    with host_load(spec) as load:
        print(f"load ready: its services in {', '.join(f'{s:.0f} s' for s in load.ready_s)}", flush=True)
        run_phase(loaded, args, problems, load.env)
    loaded.load_errors = [line.strip() for line in summary(load) if line.startswith("  ")]
    print("\n".join(summary(load)))
    report(quiet, loaded, spec, args.checkout)


if __name__ == "__main__":
    main()
