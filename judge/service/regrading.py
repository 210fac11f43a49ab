"""Regrades as gradings: what ``POST .../regrade`` does, and the runner that moves problem regrades on.

    regrade_one(services, record, caller, notify=False)   -> (grading number, the version it grades with)
    start_problem_regrade(services, problem, ...)         -> JobRecord (its first batch queued)
    RegradeRunner(services).start() / step() / close()    queues every running job's next batch

A regrade grades an existing submission again with the problem as it is now and stores the result as a
new grading of it (``judge.store.gradings``): no new submission, no callback unless ``notify``. A
problem regrade is a job in the database: at most ``batch`` of its gradings unfinished at once, queued
oldest first from its cursor as the queue has room, so it resumes after a restart on any API node (each
runs a ``RegradeRunner``; the store lets one at a time advance a job).
"""

from __future__ import annotations

import logging
import threading

from judge.core.errors import ProblemNotFound
from judge.core.problems import Problem
from judge.dispatch import QueueFull
from judge.dispatch.base import Reservation
from judge.service.api_errors import ApiError
from judge.service.ratelimit import Principal
from judge.service.state import Services
from judge.store import SubmissionRecord
from judge.store.gradings import GradingStore, OwnerCap, ProblemVersion, RegradeOverCap, RegradeRefused
from judge.store.regrade_jobs import JobRecord, RegradeJobs

log = logging.getLogger(__name__)

#: Seconds between two looks of a runner at the running problem regrades.
RUNNER_PERIOD_S = 0.5
#: Gradings of one problem regrade unfinished at once, unless the operator says otherwise.
DEFAULT_BATCH = 20
MAX_BATCH = 500


def is_operator(services: Services, caller: Principal) -> bool:
    operators = services.settings.operator_keys
    return caller.key_name is not None and (caller.key_name in operators or caller.key_id in operators)


def current_version(services: Services, problem: Problem) -> ProblemVersion:
    """The version of ``problem`` this judge grades with now (what a regrade is asked for)."""
    manifest = services.worker.manifest(problem)
    return ProblemVersion(manifest["problem_hash"], manifest.get("problem_revision"))


def _problem(services: Services, slug: str) -> Problem:
    try:
        return services.catalog.get(slug)
    except ProblemNotFound:
        known = ", ".join(p.slug for p in services.catalog)
        raise ApiError(
            404, "problem_not_found", f"no problem {slug[:100]!r} (known: {known})", path="problem"
        ) from None


def _reserve(services: Services) -> Reservation:
    try:
        return services.dispatcher.reserve()
    except QueueFull as exc:
        services.metrics.rejected.labels("queue_full").inc()
        raise ApiError(429, "queue_full", str(exc), headers={"Retry-After": str(exc.retry_after)}) from None


def regrade_one(
    services: Services, record: SubmissionRecord, caller: Principal, *, notify: bool = False
) -> tuple[int, ProblemVersion]:
    """Queue a regrade of one finished submission. Its owner's regrade counts against the owner's
    submissions_per_client (regrades included); an operator's does not. Raises ApiError: 404 (its problem
    is gone), 409 ``regrade_conflict`` (it is queued or being graded: ask again once it is finished), 429
    (the queue is full, or the owner's cap)."""
    version = current_version(services, _problem(services, record.problem))
    cap = None
    if not is_operator(services, caller):
        address = caller.address if caller.key_name is None else None
        cap = OwnerCap(caller.key_id, address, services.settings.submissions_per_client)
    reservation = _reserve(services)
    try:
        number = GradingStore(services.store).request(record.id, version, notify=notify, owner_cap=cap)
    except RegradeRefused as exc:
        reservation.cancel()
        if exc.status is None:
            raise ApiError(404, "submission_not_found", f"no submission {record.id!r}", path="id") from None
        raise ApiError(
            409,
            "regrade_conflict",
            f"submission {record.id} is {exc.status}: it can be regraded once its grading is finished",
            path="id",
        ) from None
    except RegradeOverCap as exc:
        reservation.cancel()
        services.metrics.rejected.labels("client_queue_full").inc()
        raise ApiError(
            429,
            "queue_full",
            f"this client has {exc.count} submissions queued or running (regrades included), the most "
            "one client may have; wait for one to finish",
            limit="submissions_per_client",
            headers={"Retry-After": "5"},
        ) from None
    except BaseException:
        reservation.cancel()
        raise
    reservation.commit(record.id)
    services.feed.announce(record.id)
    return number, version


def start_problem_regrade(
    services: Services,
    problem: Problem,
    caller: Principal,
    *,
    force: bool,
    notify: bool,
    batch: int,
) -> JobRecord:
    """Start an operator's regrade of ``problem`` and queue its first batch now."""
    job = RegradeJobs(services.store).create(
        problem.slug,
        current_version(services, problem),
        force=force,
        notify=notify,
        batch=batch,
        requested_by=caller.key_id or caller.key_name,
    )
    advance(services, job.id)
    latest = RegradeJobs(services.store).job(job.id)
    return latest if latest is not None else job


def advance(services: Services, job_id: str) -> int:
    """Queue the job's next regrades, as many as the queue has places for (held first, so a full queue
    queues none). How many were queued."""
    jobs = RegradeJobs(services.store)
    job = jobs.job(job_id)
    if job is None:
        return 0
    places: list[Reservation] = []
    for _ in range(max(0, job.batch - job.in_flight)):
        try:
            places.append(services.dispatcher.reserve())
        except QueueFull:
            break
    ids: list[str] = []
    try:
        ids = jobs.advance(job_id, len(places)) if places else []
    finally:
        for place in places[len(ids) :]:
            place.cancel()
    for submission_id, place in zip(ids, places, strict=False):
        place.commit(submission_id)
        services.feed.announce(submission_id)
    return len(ids)


class RegradeRunner:
    """A background thread of an API node that moves every running problem regrade on."""

    def __init__(self, services: Services, period_s: float = RUNNER_PERIOD_S) -> None:
        self.services = services
        self.period_s = period_s
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def step(self) -> int:
        """One look at every running job; how many regrades were queued."""
        queued = 0
        for job_id in RegradeJobs(self.services.store).running_jobs():
            queued += advance(self.services, job_id)
        return queued

    def _loop(self) -> None:
        while not self._stop.wait(self.period_s):
            try:
                self.step()
            except Exception as exc:  # the database is down: the next look tries again
                log.warning("regrade runner: %s: %s", type(exc).__name__, exc)

    def start(self) -> None:
        self._thread = threading.Thread(target=self._loop, name="regrades", daemon=True)
        self._thread.start()

    def close(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=5)
