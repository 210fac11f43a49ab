"""Several judges on one host (``tests/host_load.py``): load changes how long an answer takes, never whether
it comes. The trials' shape, small enough for the suite: three ``judge serve`` processes with their own
slot bases and learners, a ``judge check --werror`` loop, two ``judge grade`` loops and four busy loops (the
trials failed with six services, and not with three; ``bench/bench_contention.py`` measures larger loads).

A module of its own: ``tests/test_under_load.py`` keeps its machine load up for its whole module."""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from sandbox.backends import get_backend
from tests import redis_server
from tests.host_load import HostLoadSpec, host_load, later_by, summary
from tests.service_support import ServeProcess

HOST = HostLoadSpec(services=3, checks=1, graders=2, spinners=4, duration_s=1200)
#: Seconds of traffic after every service is ready; the Redis stop starts and ends within them.
TRAFFIC_S = 60.0
REDIS_STOP = (15.0, 35.0)
#: Seconds the test waits after the traffic for a whole check and a grade of each loop, however slow.
FINISH_S = 600.0


@pytest.fixture
def broker() -> Iterator[redis_server.RedisServer]:
    yield from redis_server.started()


@pytest.mark.slow
def test_several_judges_on_one_host_answer_later_never_fail(
    broker: redis_server.RedisServer, tmp_path: Path
) -> None:
    """Every Run answers with the quiet verdict, every submission is graded in one attempt with its
    verdict, ``judge check --werror`` stays green, every ``judge grade`` gives its verdict, and a stop of
    the services' Redis (their rate limits, as the README's distributed set-up has it) during the traffic
    gives no 5xx."""
    reason = get_backend("bwrap").available()
    if reason is not None:
        pytest.skip(f"bwrap: {reason}")
    spec = dataclasses.replace(HOST, redis_url=broker.url)
    with host_load(spec, tmp_path) as load:
        began = time.monotonic()
        time.sleep(REDIS_STOP[0])
        broker.kill()
        probes = probe_while_stopped(load.services, REDIS_STOP[1] - REDIS_STOP[0])
        broker.start()
        time.sleep(max(0.0, TRAFFIC_S - (time.monotonic() - began)))
        deadline = time.monotonic() + FINISH_S
        while time.monotonic() < deadline and (
            not load.of("check") or len({o.source for o in load.of("grade")}) < spec.graders
        ):
            time.sleep(1.0)
    lines = [f"ready in {', '.join(f'{s:.0f} s' for s in load.ready_s)}", *summary(load)]
    print("\n".join(lines))
    assert not load.server_errors(), lines
    assert not load.failures(), lines
    # Asked while Redis was stopped (the learners' Runs may all be slower than the stop on a loaded host):
    # every service answered, none with a 5xx but an honest "later".
    assert {url for url, _ in probes} == {s.url for s in load.services}, probes
    assert all(status < 500 or later for _, (status, later) in probes), probes
    assert load.of("check") and load.of("submit") and load.of("grade"), lines


def probe_while_stopped(services: list[ServeProcess], seconds: float) -> list[tuple[str, tuple[int, bool]]]:
    """Ask every service for its problems (a rate-limited call: its counters are on the stopped Redis)
    once a second for ``seconds``; (service URL, (status, whether it was an honest "later")) of each
    answer, asked and answered within the stop."""
    answers: list[tuple[str, tuple[int, bool]]] = []
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        for service in services:
            try:
                answer = httpx.get(f"{service.url}/api/v1/problems", timeout=max(0.5, end - time.monotonic()))
            except httpx.HTTPError:
                continue  # not answered within the stop: the learners' traffic says how it ended
            if time.monotonic() <= end:
                answers.append((service.url, (answer.status_code, later_by(answer) is not None)))
        time.sleep(max(0.0, min(1.0, end - time.monotonic())))
    return answers


@pytest.mark.parametrize(
    ("status", "code", "headers", "expected"),
    [
        (503, "warming_up", {"Retry-After": "7"}, 7.0),  # the judge says when: waited out, asked again
        (429, "run_busy", {"Retry-After": "2"}, 2.0),
        (503, "sandbox_unavailable", {"Retry-After": "5"}, None),  # the judge failed: a failure
        (503, "warming_up", {}, None),  # no Retry-After: not an honest "later"
        (500, "internal_error", {"Retry-After": "1"}, None),
    ],
)
def test_only_an_honest_later_is_waited_out(
    status: int, code: str, headers: dict[str, str], expected: float | None
) -> None:
    answer = httpx.Response(status, json={"error": {"code": code, "message": "m"}}, headers=headers)
    assert later_by(answer) == expected
