"""Several judges on one host, as the trials ran them: the shape under which waits used to end in errors.

    with host_load(HostLoadSpec(services=3, checks=1, graders=2, spinners=4), scratch) as load:
        load.services[0].url             # a real `judge serve`, ready, with its own learners' traffic
        load.failures()                  # every answer or command that was not what a quiet host gives
    # everything stopped and killed here: services (their sandboxes die with them), loops, spinners

Each component is a real judge process of this checkout, bounded in count and time:

- ``services``: ``judge serve`` processes, each with its own data directory and sandbox slot base
  (``JUDGE_SANDBOX_SLOT_BASE``), started at once; per service a learner sends a Run of an accepted
  solution every ``run_every_s`` and, every ``submit_every_s``, a submission (accepted and spinning ones in
  turn, the spinning one a ``time_limit_exceeded``). A Run must answer 200 with the accepted verdict (an
  honest "later", a 429/503 with ``Retry-After`` saying the judge is warming up or busy, is waited out
  and asked again, and counted as ``later``); a submission must be accepted (202) and graded in ONE
  attempt with its folder's verdict;
- ``checks``: loops of ``judge check --werror`` on ``check_problem``: each run must exit 0;
- ``graders``: loops of ``judge grade`` of an accepted solution: each run must exit 0 (accepted);
- ``spinners``: busy loops (``tests.load.machine_load``, nothing else of it).

Every process of the load shares one start gate folder (``JUDGE_START_GATE_DIR``, as every judge of a host
shares the default one) kept apart from the host's other judges, and ``env`` passes it on to a judge
started beside the load (a benchmark's measured service). ``redis_url`` puts the services' rate limits
on a Redis (the README's distributed set-up), so a Redis stop can be tried during the traffic.
Nothing outlives the ``with``: services get SIGTERM then their session is killed, each CLI run is killed
with its session, the spinners' driver ends its session; the whole load also ends after ``duration_s``.
``python -m tests.host_load --seconds 120`` loads the host by hand and prints what failed;
``python -m tests.host_load --suite CLONE`` runs the README's test command (``scripts/test``) of a clean clone
under the load instead, then prints its exit status and time, the host's load average meanwhile and what the
load's own traffic got (issue 37: "run the README's test command once under that load").
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
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

from tests.conftest import FIXTURE_SLUG, FIXTURES, ROOT
from tests.load import LoadSpec, machine_load
from tests.service_support import ServeProcess

#: A learner's function for ``problem`` that never returns (a time limit).
SPIN = "def {function}(*args, **kwargs):\n    while True:\n        pass\n"
#: Seconds one HTTP request may take (a Run, with the times it was told to come back later), one CLI run.
REQUEST_S = 300.0
COMMAND_S = 900.0
#: The answers that honestly say "later" (issue 37: a quick 429/503 with Retry-After when capacity is
#: short), and the longest wait before trying again.
LATER = frozenset({"warming_up", "run_busy", "rate_limited", "queue_full"})
LATER_WAIT_S = 30.0


def later_by(answer: httpx.Response) -> float | None:
    """Seconds to wait when ``answer`` says "later" (429/503, a ``LATER`` code and a Retry-After)."""
    if answer.status_code not in (429, 503) or "retry-after" not in answer.headers:
        return None
    try:
        code = answer.json()["error"]["code"]
        retry = float(answer.headers["retry-after"])
    except (ValueError, KeyError, TypeError):
        return None
    return retry if code in LATER else None


@dataclass(frozen=True)
class HostLoadSpec:
    services: int = 3
    checks: int = 1
    graders: int = 2
    spinners: int = 4
    run_every_s: float = 2.0
    submit_every_s: float = 6.0
    #: Pause between one ``judge check`` (or ``judge grade``) of a loop and its next (0: back to back).
    command_pause_s: float = 0.0
    #: The problems the services serve and the CLI loops use; the problem of the traffic and the loops.
    problems_dir: Path = FIXTURES
    problem: str = FIXTURE_SLUG
    check_problem: str = FIXTURE_SLUG
    #: An accepted solution of ``problem`` (the Runs, half the submissions and ``judge grade``).
    accepted: Path = FIXTURES / FIXTURE_SLUG / "solutions" / "accepted" / "tree_util_map.py"
    function: str = "scale_tree"
    #: Service ``i`` has slot base ``slot_base + slot_step * i``.
    slot_base: int = 300
    slot_step: int = 40
    redis_url: str | None = None
    #: Everything ends after this long even if nobody stops it.
    duration_s: float = 900.0
    #: Settings of every service (``JUDGE_*`` variables) on top of small warm pools.
    service_env: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Outcome:
    """One answer or command of the load: who (``service 1``, ``check 0``, ``grade 1``), what (``run``,
    ``submit``, ``check``, ``grade``), whether it was what a quiet host gives, how long it took."""

    source: str
    what: str
    ok: bool
    seconds: float
    detail: str = ""
    status: int | None = None
    #: When it ended (``time.monotonic()``).
    at: float = field(default_factory=time.monotonic)


class HostLoad:
    def __init__(self, spec: HostLoadSpec, scratch: Path) -> None:
        self.spec = spec
        self.scratch = scratch
        #: What every judge of the load shares, and a judge started beside it should have too.
        self.env = {"JUDGE_START_GATE_DIR": str(scratch / "start-gate")}
        self.services: list[ServeProcess] = []
        self.ready_s: list[float] = []
        self.outcomes: list[Outcome] = []
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._threads: list[threading.Thread] = []
        self._commands: set[subprocess.Popen[bytes]] = set()
        self.deadline = time.monotonic() + spec.duration_s

    # ---------------------------------------------------------------------------------- what happened

    def record(self, outcome: Outcome) -> None:
        with self._lock:
            self.outcomes.append(outcome)

    def of(self, what: str) -> list[Outcome]:
        with self._lock:
            return [o for o in self.outcomes if o.what == what]

    def failures(self) -> list[Outcome]:
        with self._lock:
            return [o for o in self.outcomes if not o.ok]

    def server_errors(self) -> list[Outcome]:
        """Answers with a 5xx status (the services' own failures), but for an honest "later"."""
        with self._lock:
            return [
                o for o in self.outcomes if o.status is not None and o.status >= 500 and o.what != "later"
            ]

    def running(self) -> bool:
        return not self._stop.is_set() and time.monotonic() < self.deadline

    # ---------------------------------------------------------------------------------- services

    def start_services(self, ready_timeout: float) -> None:
        spec = self.spec
        env = {
            **self.env,
            "JUDGE_PROBLEMS_DIR": str(spec.problems_dir),
            "JUDGE_SUBMISSION_CONCURRENCY": "1",
            "JUDGE_RUN_RESERVE": "1",
            "JUDGE_SPARE_WORKERS": "0",
            "JUDGE_QUEUE_SIZE": "10000",
            **({"JUDGE_RATE_LIMIT_STORAGE": spec.redis_url} if spec.redis_url else {}),
            **spec.service_env,
        }
        for i in range(spec.services):
            service = ServeProcess(
                self.scratch / f"service-{i}",
                JUDGE_SANDBOX_SLOT_BASE=str(spec.slot_base + spec.slot_step * i),
                **env,
            )
            self.services.append(service)

        def start(service: ServeProcess) -> float:
            began = time.monotonic()
            service.start(ready_timeout)
            return time.monotonic() - began

        with ThreadPoolExecutor(max_workers=max(1, spec.services)) as pool:
            self.ready_s = list(pool.map(start, self.services))

    def _learner(self, index: int, service: ServeProcess) -> None:
        spec = self.spec
        accepted = spec.accepted.read_text()
        spin = SPIN.format(function=spec.function)
        source = f"service {index}"
        next_submit = time.monotonic() + spec.submit_every_s / 2
        submitted = 0
        with httpx.Client(base_url=service.url, timeout=REQUEST_S) as client:
            while self.running():
                began = time.monotonic()
                self._run(client, source, accepted)
                if time.monotonic() >= next_submit:
                    code, verdict = (
                        (accepted, "accepted") if submitted % 2 == 0 else (spin, "time_limit_exceeded")
                    )
                    submitted += 1
                    next_submit = time.monotonic() + spec.submit_every_s
                    thread = threading.Thread(
                        target=self._submit, args=(service.url, source, code, verdict), daemon=True
                    )
                    thread.start()
                    self._threads.append(thread)
                self._stop.wait(max(0.0, spec.run_every_s - (time.monotonic() - began)))

    def _run(self, client: httpx.Client, source: str, code: str) -> None:
        """One learner's Run, until it answers: an honest "later" (``LATER``) is waited out and tried again,
        recorded as ``later``; anything else but a 200 with the accepted verdict is a failure."""
        began = time.monotonic()
        later = 0
        while True:
            asked = time.monotonic()
            try:
                answer = client.post(f"/api/v1/problems/{self.spec.problem}/run", json={"code": code})
            except httpx.HTTPError as exc:
                if not self._stop.is_set():  # cut short by the end of the load: no result
                    why = f"{type(exc).__name__}: {exc}"
                    self.record(Outcome(source, "run", False, time.monotonic() - began, why))
                return
            retry = later_by(answer)
            if retry is None or self._stop.is_set() or time.monotonic() - began + retry > REQUEST_S:
                break
            later += 1
            self.record(
                Outcome(
                    source, "later", True, time.monotonic() - asked, answer.text[:300], answer.status_code
                )
            )
            if self._stop.wait(min(retry, LATER_WAIT_S)):
                return
        took = time.monotonic() - began
        verdict = answer.json().get("verdict") if answer.status_code == 200 else None
        ok = answer.status_code == 200 and verdict == "accepted"
        detail = f"{later} times told to come back later" if later else ""
        if not ok:
            detail = f"HTTP {answer.status_code}: {answer.text[:300]}" + (f" ({detail})" if later else "")
        self.record(Outcome(source, "run", ok, took, detail, answer.status_code))

    def _submit(self, url: str, source: str, code: str, expected: str) -> None:
        with httpx.Client(base_url=url, timeout=REQUEST_S) as client:
            self._submit_with(client, source, code, expected)

    def _submit_with(self, client: httpx.Client, source: str, code: str, expected: str) -> None:
        began = time.monotonic()

        def done(ok: bool, detail: str, status: int | None) -> None:
            if ok or not self._stop.is_set():  # a wait cut short by the end of the load is no result
                self.record(Outcome(source, "submit", ok, time.monotonic() - began, detail, status))

        try:
            answer = client.post("/api/v1/submissions", json={"problem": self.spec.problem, "code": code})
            if answer.status_code != 202:
                done(False, f"HTTP {answer.status_code}: {answer.text[:300]}", answer.status_code)
                return
            sid = answer.json()["id"]
            while time.monotonic() - began < COMMAND_S and not self._stop.is_set():
                read = client.get(f"/api/v1/submissions/{sid}", params={"wait": 20})
                if read.status_code >= 500:
                    done(False, f"HTTP {read.status_code} reading it: {read.text[:300]}", read.status_code)
                    return
                body: dict[str, Any] = read.json()
                if body.get("status") in ("done", "failed"):
                    ok = (
                        body["status"] == "done" and body.get("verdict") == expected and body["attempts"] == 1
                    )
                    detail = "" if ok else (
                        f"{body['status']} {body.get('verdict')} after {body['attempts']} attempts "
                        f"(expected {expected} in one): {str(body.get('error'))[:300]}"
                    )  # fmt: skip
                    done(ok, detail, 202)
                    return
            if not self._stop.is_set():
                done(False, "no result in time", 202)
        except httpx.HTTPError as exc:
            done(False, f"{type(exc).__name__}: {exc}", None)

    # ---------------------------------------------------------------------------------- CLI loops

    def _command(self, source: str, what: str, argv: list[str]) -> None:
        env = {**os.environ, **self.env}
        while self.running():
            began = time.monotonic()
            proc = subprocess.Popen(
                [sys.executable, "-m", "judge", *argv],
                cwd=ROOT,
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
            with self._lock:
                self._commands.add(proc)
            try:
                output, _ = proc.communicate(timeout=COMMAND_S)
            except subprocess.TimeoutExpired:
                _kill_session(proc)
                output, _ = proc.communicate()
            finally:
                with self._lock:
                    self._commands.discard(proc)
            if self._stop.is_set() and proc.returncode != 0:
                return  # cut short by the end of the load: not a result
            text = output.decode(errors="replace")
            self.record(
                Outcome(source, what, proc.returncode == 0, time.monotonic() - began,
                        "" if proc.returncode == 0 else f"exit {proc.returncode}: {text[-1500:]}")
            )  # fmt: skip
            if self._stop.wait(self.spec.command_pause_s):
                return

    # ---------------------------------------------------------------------------------- lifecycle

    def start_traffic(self) -> None:
        spec = self.spec
        problems = ["--problems", str(spec.problems_dir)]
        jobs: list[tuple[Any, tuple[Any, ...]]] = [
            (self._learner, (i, service)) for i, service in enumerate(self.services)
        ]
        jobs += [
            (
                self._command,
                (f"check {i}", "check", ["check", spec.check_problem, "--werror", "-q", *problems]),
            )
            for i in range(spec.checks)
        ]
        jobs += [
            (self._command, (f"grade {i}", "grade", ["grade", spec.problem, str(spec.accepted), *problems]))
            for i in range(spec.graders)
        ]
        for target, args in jobs:
            thread = threading.Thread(target=target, args=args, daemon=True)
            thread.start()
            self._threads.append(thread)

    def stop(self) -> None:
        self._stop.set()
        with self._lock:
            commands = list(self._commands)
        for proc in commands:
            _kill_session(proc)
        for thread in list(self._threads):
            thread.join(60)
        for service in self.services:
            service.stop(30)


def _kill_session(proc: subprocess.Popen[bytes]) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)


@contextlib.contextmanager
def host_load(
    spec: HostLoadSpec | None = None, scratch: Path | None = None, *, ready_timeout: float = 600.0
) -> Iterator[HostLoad]:
    """Start the spinners, then the services (waited for until ready), then their traffic and the CLI
    loops; yield; stop and kill all of it at exit, whatever happened."""
    spec = spec or HostLoadSpec()
    with contextlib.ExitStack() as stack:
        if scratch is None:
            scratch = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="judge-host-load-")))
        if spec.spinners:
            spinners = LoadSpec(jax=0, spinners=spec.spinners, evict=False, io=0, duration_s=spec.duration_s)
            stack.enter_context(machine_load(spinners, warm_s=0.5))
        load = HostLoad(spec, scratch)
        stack.callback(load.stop)
        load.start_services(ready_timeout)
        load.start_traffic()
        yield load


def summary(load: HostLoad) -> list[str]:
    """One line per kind of outcome (count, failures, p50/p95 seconds), then each failure."""
    lines = []
    for what in ("run", "later", "submit", "check", "grade"):
        done = load.of(what)
        if not done:
            continue
        times = sorted(o.seconds for o in done)
        p50, p95 = times[len(times) // 2], times[min(len(times) - 1, round(0.95 * (len(times) - 1)))]
        failed = sum(not o.ok for o in done)
        lines.append(
            f"{what:<7}{len(done):>5} done, {failed} not as on a quiet host; p50 {p50:.1f} s, p95 {p95:.1f} s"
        )
    lines += [f"  {o.source} {o.what} ({o.seconds:.1f} s): {o.detail}" for o in load.failures()]
    return lines


def run_suite(clone: Path, log: Path) -> tuple[int, float, list[float]]:
    """``scripts/test`` of ``clone`` (output to ``log``), in a session of its own (stopping it stops no
    load); its exit status, seconds, and the 1-minute load average every 30 s meanwhile."""
    loads: list[float] = []
    began = time.monotonic()
    with log.open("wb") as out:
        proc = subprocess.Popen(
            ["scripts/test", "-rf"], cwd=clone, stdout=out, stderr=subprocess.STDOUT, start_new_session=True
        )
        try:
            while proc.poll() is None:
                loads.append(os.getloadavg()[0])
                with contextlib.suppress(subprocess.TimeoutExpired):
                    proc.wait(30)
        finally:
            if proc.poll() is None:
                _kill_session(proc)
                proc.wait()
    return proc.returncode, time.monotonic() - began, loads


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=120.0, help="traffic after every service is ready")
    parser.add_argument("--suite", type=Path, help="run scripts/test of this clean clone under the load")
    parser.add_argument("--services", type=int, default=HostLoadSpec.services)
    parser.add_argument("--checks", type=int, default=HostLoadSpec.checks)
    parser.add_argument("--graders", type=int, default=HostLoadSpec.graders)
    parser.add_argument("--spinners", type=int, default=HostLoadSpec.spinners)
    parser.add_argument("--run-every", type=float, default=HostLoadSpec.run_every_s)
    parser.add_argument("--submit-every", type=float, default=HostLoadSpec.submit_every_s)
    parser.add_argument("--command-pause", type=float, default=HostLoadSpec.command_pause_s)
    args = parser.parse_args()
    spec = HostLoadSpec(
        services=args.services, checks=args.checks, graders=args.graders, spinners=args.spinners,
        run_every_s=args.run_every, submit_every_s=args.submit_every, command_pause_s=args.command_pause,
        duration_s=(4 * 3600 if args.suite else args.seconds) + 900,
    )  # fmt: skip
    with host_load(spec) as load:
        print(f"ready in {', '.join(f'{s:.0f} s' for s in load.ready_s)}", flush=True)
        if args.suite is None:
            time.sleep(args.seconds)
        else:
            log = args.suite / "host-load-suite.log"
            code, took, loads = run_suite(args.suite, log)
            print(f"scripts/test exited {code} after {took:.0f} s under the load (its output: {log})")
            if loads:
                loads.sort()
                print(f"load average meanwhile: min {loads[0]:.1f}, median {loads[len(loads) // 2]:.1f}, "
                      f"max {loads[-1]:.1f}")  # fmt: skip
    print("\n".join(summary(load)))


if __name__ == "__main__":
    main()
