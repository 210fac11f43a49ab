"""The grading side of dispatch: grade one stored submission and store its result exactly once.

``GradingLoop.process(id)`` is all a queue needs to call, in this process (``LocalDispatcher``) or on a
grading node. It claims the submission (``queued -> running``; anyone else's claim makes it a no-op),
publishes ``running`` and one event per case, then stores the result together with the final event. A
failure of the judge itself (the sandbox cannot start, a bug) gives the submission back for another
attempt, up to ``max_attempts``, and then marks it ``failed`` with a reason that holds no server detail.
The judge's contention is never the learner's attempt: when the grading could not get capacity (no warm
worker came up while nothing progressed, or the machine starved a case: ``CAPACITY_ERRORS``), the submission
is queued again with its attempt given back (``Store.attempts.release(refund=True)``, a ``status`` event
``queued`` saying why, ``judge_requeues_total{reason="capacity"}``), at most ``MAX_CAPACITY_REQUEUES`` times
per submission on one node; only a failure of a grading that had its workers counts toward ``max_attempts``.
Once ``abandon()`` is called (shutdown) nothing more is stored: a grading cut short by the shutdown must
not be reported as the user's failure; it stays ``running`` and the next start queues it again.

A submission is graded only with the version of its problem it was accepted for (its manifest's
``problem_hash``). A grader that lacks that version (a rollout under way: this node still serves another
revision, or not the problem at all) grades nothing: it gives the claim back with its attempt
(``Outcome.HELD``, a ``status`` event ``queued`` with ``waiting: version`` and a sentence naming the version),
and its queue offers it again after ``VERSION_HOLD_DELAY_S``, to a grader that has it. Once the submission
has waited ``hold_s`` and no live grader has that version (it was retired, or never rolled out), it ends
``failed`` with a reason that says so: never graded with another version.

A result that cannot be serialized or stored because of what the submission put in it (text no encoder
holds, a value the database refuses) is the submission's outcome, not the judge's failure: it is stored
once, as ``runtime_error`` with a message that says so (``unstorable``), never retried.

A regrade (``judge.store.gradings``) is claimed and graded like any submission, with the problem as it is
now; its result becomes a new grading of the same submission (``GradingStore.finish``), its callback is
sent only when the regrade asked for it (``notify``), and its attempts count from its own first try. A
regrade the judge gives up on leaves the earlier grading the current one (``GradingStore.fail``).
"""

from __future__ import annotations

import itertools
import json
import logging
import threading
import time
from collections.abc import Callable
from enum import StrEnum
from typing import Any, Protocol

from judge.core.problems import Problem, Problems
from judge.core.results import CaseResult, GradeResult, case_json, result_json
from judge.core.verdicts import Verdict
from judge.dispatch.events import CASE, FAILED, RESULT, STATUS, ProgressFeed
from judge.store import Claim, Deferred, Store, SubmissionRecord
from judge.store.gradings import GradingStore, PendingGrading
from judge.store.manifest import manifest, version_label
from judge.store.models import utcnow
from sandbox.errors import HostOverloaded, ProcessStartError

log = logging.getLogger(__name__)

#: Errors that serializing or storing a result raises when its content is at fault, not the judge.
CONTENT_ERRORS: tuple[type[BaseException], ...] = (ValueError, TypeError, UnicodeError, RecursionError)


def _content_errors() -> tuple[type[BaseException], ...]:
    """CONTENT_ERRORS plus the database's own refusal of a value (SQLAlchemy's DataError)."""
    from sqlalchemy.exc import DataError

    return (*CONTENT_ERRORS, DataError)


def running_status(problem: Problem, attempt: int) -> dict[str, Any]:
    """The ``status`` event that starts a grading: its ``attempt``, the number of ``cases`` it grades and
    how many are ``public`` (their ``case`` events come one by one, before the first hidden case; from it
    on they come together at the end), so a client can say "2 of 30 cases graded"."""
    hidden = [case.hidden for case in problem.cases]
    public = hidden.index(True) if True in hidden else len(hidden)
    return {"status": "running", "attempt": attempt, "cases": len(hidden), "public": public}


def unstorable(result: GradeResult, exc: BaseException) -> GradeResult:
    """What is stored instead of a result its own content kept from being stored: the verdict is the
    submission's (``runtime_error``), and nothing of the offending content is kept."""
    cases = [
        CaseResult(name=c.name, visibility=c.visibility, verdict=Verdict.NOT_RUN, message="not stored")
        for c in result.cases
    ]
    message = (
        f"the result could not be stored ({type(exc).__name__}): the output, a message or the prints hold "
        "a value that cannot be stored as text"
    )
    return GradeResult(
        problem=result.problem,
        verdict=Verdict.RUNTIME_ERROR,
        passed=0,
        total=result.total,
        message=message,
        cases=cases,
        backend=result.backend,
        elapsed_ms=result.elapsed_ms,
    )


DEFAULT_MAX_ATTEMPTS = 3
#: Failures that mean the judge had no capacity for the grading, not that the grading failed.
CAPACITY_ERRORS: tuple[type[BaseException], ...] = (ProcessStartError, HostOverloaded)
#: Times one node queues a submission again for want of capacity, without using up an attempt, before such
#: failures count as attempts too (a judge that can never start a worker must end in ``failed``, not loop).
MAX_CAPACITY_REQUEUES = 20
#: Seconds a held submission (its problem's version not on this grader) waits before it is offered again.
VERSION_HOLD_DELAY_S = 2.0
#: Default ``hold_s``: how long a submission may wait for a grader with its version (``version_hold_s``).
DEFAULT_VERSION_HOLD_S = 600.0


class Outcome(StrEnum):
    GRADED = "graded"  # the result is stored
    FAILED = "failed"  # the judge gave up on it (stored as failed)
    RETRY = "retry"  # the judge failed this time; it is queued again
    SKIPPED = "skipped"  # not queued (already taken or finished, or unknown): nothing done
    DEFERRED = "deferred"  # its owner has gradings_per_client running: still queued, try again later
    ABANDONED = "abandoned"  # shutdown: nothing stored, the next start grades it
    HELD = "held"  # this grader lacks the problem's version it was accepted for: queued again, no attempt


class GradingEngine(Protocol):
    """What the worker needs of ``judge.core.engine.Engine``."""

    def grade(
        self, problem: Problem, code: str, *, on_case: Callable[[CaseResult], None] | None = None
    ) -> GradeResult: ...


class GradingObserver(Protocol):
    """Metrics hooks (``judge.dispatch.metrics``); every method must be cheap and never raise."""

    def grading_started(self) -> None: ...

    def grading_finished(self, verdict: str | None, seconds: float) -> None: ...

    def submission_failed(self) -> None: ...


class CallbackQueue(Protocol):
    def submit(self, submission_id: str) -> None: ...


class GradingLoop:
    def __init__(
        self,
        store: Store,
        engine: GradingEngine,
        problems: Problems,
        feed: ProgressFeed,
        *,
        backend_name: str,
        callbacks: CallbackQueue | None = None,
        observer: GradingObserver | None = None,
        max_attempts: int = DEFAULT_MAX_ATTEMPTS,
        node: str | None = None,
        gradings_cap: int | None = None,
        hold_s: float = DEFAULT_VERSION_HOLD_S,
        served_elsewhere: Callable[[str, str], bool] | None = None,
    ) -> None:
        """``node``: the grading node's name, recorded with each claim (distributed dispatch), so that the
        work of a node that dies is queued again. ``gradings_cap``: the most submissions of one owner
        graded at once across every grader (``gradings_per_client``); past it a claim is DEFERRED.
        ``hold_s``: how long a submission waits for a grader with its problem's version;
        ``served_elsewhere(slug, hash)``: whether another live grader has that version (None: there is
        no other grader)."""
        self.hold_s = hold_s
        self.served_elsewhere = served_elsewhere
        self.node = node
        self.gradings_cap = gradings_cap
        self.store = store
        self.gradings = GradingStore(store)
        self.engine = engine
        self.problems = problems
        self.feed = feed
        self.backend_name = backend_name
        self.callbacks = callbacks
        self.observer = observer
        self.max_attempts = max_attempts
        self._abandoned = threading.Event()
        self._hashes: dict[str, str] = {}
        #: Submission id -> times this node queued it again for want of capacity (attempt given back).
        self._capacity_requeues: dict[str, int] = {}
        self._requeue_lock = threading.Lock()

    def abandon(self) -> None:
        """From now on store nothing (the engine is about to be closed under running gradings)."""
        self._abandoned.set()

    def manifest(self, problem: Problem) -> dict[str, Any]:
        """The manifest of a grading of ``problem`` by this worker (content hash computed once per package
        folder)."""
        key = str(problem.root)  # one package folder per version: a new version is a new folder
        if key not in self._hashes:
            from judge.core.problem_hash import problem_hash

            self._hashes[key] = problem_hash(problem)
        return manifest(problem, self.backend_name, self._hashes[key])

    def process(self, submission_id: str) -> Outcome:
        claim = self.store.attempts.claim_within(submission_id, self.node, self.gradings_cap)
        if isinstance(claim, Deferred):
            self._observe("deferred_claim")
            return Outcome.DEFERRED
        if claim is None:
            return Outcome.SKIPPED
        record = self.store.submissions.get(submission_id)
        if record is None:  # deleted under us
            return Outcome.SKIPPED
        if claim.attempt == 1 and record.started_at is not None:
            self._observe("queue_waited", (record.started_at - record.created_at).total_seconds())
        pending = self.gradings.pending(submission_id)  # a regrade: a new grading of it
        problem = self._version_for(record, pending)
        if problem is None:
            return self._hold(claim, record, pending)
        opening = running_status(problem, claim.attempt)
        if pending is not None:
            opening |= {"regrade": True, "grading": pending.number}
        self.feed.publish(claim, STATUS, opening)
        counter = itertools.count()

        def on_case(case: CaseResult) -> None:
            index = next(counter)
            try:
                self.feed.publish(claim, CASE, {"index": index, "case": case_json(case)})
            except _content_errors() as exc:  # the case's content, not the judge: say so and go on
                bare = CaseResult(name=case.name, visibility=case.visibility, verdict=case.verdict)
                log.warning("case %d of %s not storable (%s)", index, submission_id, type(exc).__name__)
                self.feed.publish(claim, CASE, {"index": index, "case": case_json(bare)})

        started = time.monotonic()
        self._observe("grading_started")
        try:
            result = self.engine.grade(problem, record.code, on_case=on_case)
        except Exception as exc:
            self._observe("grading_finished", None, time.monotonic() - started)
            if self._abandoned.is_set():
                return Outcome.ABANDONED
            if isinstance(exc, CAPACITY_ERRORS) and self._may_requeue_for_capacity(submission_id):
                log.warning(
                    "submission %s waits for capacity (%s: %s)", submission_id, type(exc).__name__, exc
                )
                self.feed.publish(
                    claim,
                    STATUS,
                    {
                        "status": "queued",
                        "attempt": claim.attempt - 1,
                        "waiting": "capacity",
                        "reason": "the judge is busy: no sandbox worker was free for it yet; it is queued "
                        "again, and this does not count as an attempt",
                    },
                )
                self.store.attempts.release(claim, refund=True)
                self._observe("requeued", "capacity")
                self.feed.announce(submission_id)
                return Outcome.RETRY
            log.exception("grading submission %s (attempt %d) failed", submission_id, claim.attempt)
            reason = f"the judge could not grade it ({type(exc).__name__})"
            tries = claim.attempt - (pending.first_attempt - 1 if pending is not None else 0)
            if tries < self.max_attempts:
                self.store.attempts.release(claim)
                self._observe("requeued", "retry")
                self.feed.announce(submission_id)
                return Outcome.RETRY
            return self._give_up(claim, f"{reason} after {tries} attempts", pending)
        self._observe("grading_finished", result.verdict.value, time.monotonic() - started)
        with self._requeue_lock:
            self._capacity_requeues.pop(submission_id, None)
        if self._abandoned.is_set():
            return Outcome.ABANDONED
        try:
            stored = self._finish(claim, problem, result, pending)
        except _content_errors() as exc:
            log.warning("result of %s not storable (%s): stored as its verdict", submission_id, exc)
            stored = self._finish(claim, problem, unstorable(result, exc), pending)
        self.feed.announce(submission_id)
        if not stored:
            return Outcome.SKIPPED
        if pending is None or pending.notify:
            self._call_back(record)
        return Outcome.GRADED

    def _version_for(self, record: SubmissionRecord, pending: PendingGrading | None) -> Problem | None:
        """The problem in the version the submission was accepted for (a regrade: the version it was
        asked for), if this grader has it. A submission stored without a hash (before versions were
        recorded) takes the version served now."""
        accepted = _accepted(record, pending)["problem_hash"]
        if accepted is None:
            versions = self.problems.versions(record.problem)
            return versions[0] if versions else None
        return self._find(record.problem, str(accepted))

    def _find(self, slug: str, content_hash: str) -> Problem | None:
        return next(
            (p for p in self.problems.versions(slug) if self.manifest(p)["problem_hash"] == content_hash),
            None,
        )

    def has_version(self, slug: str, content_hash: str) -> bool:
        """Whether this grader can grade ``slug`` in version ``content_hash``."""
        return self._find(slug, content_hash) is not None

    def _hold(self, claim: Claim, record: SubmissionRecord, pending: PendingGrading | None) -> Outcome:
        """This grader lacks the submission's version: give it back for a grader that has it (its attempt
        too), or, once it waited ``hold_s`` and no live grader has that version, fail it saying so (a
        regrade: the regrade fails, the submission keeps its current grading)."""
        version = _accepted(record, pending)
        accepted = version["problem_hash"]
        label = version_label(record.problem, accepted, version["problem_revision"])
        since = record.created_at if pending is None else pending.asked_at
        waited = (utcnow() - since).total_seconds()
        if waited >= self.hold_s and not self._served_elsewhere(record.problem, accepted):
            return self._give_up(
                claim,
                f"no grading node has {label} (it was retired, or never rolled out): "
                f"waited {waited:.0f} s for one; it is not graded with another version",
                pending,
            )
        self.feed.publish(
            claim,
            STATUS,
            {
                "status": "queued",
                "attempt": claim.attempt - 1,
                "waiting": "version",
                "reason": f"waiting for a grading node with {label}; this does not count as an attempt",
            },
        )
        self.store.attempts.release(claim, refund=True)
        self._observe("requeued", "version")
        self.feed.announce(record.id)
        return Outcome.HELD

    def _served_elsewhere(self, slug: str, content_hash: str | None) -> bool:
        if self.served_elsewhere is None or content_hash is None:
            return False
        try:
            return self.served_elsewhere(slug, content_hash)
        except Exception:  # the database cannot tell: keep waiting rather than fail it wrongly
            log.exception("looking up the graders of %s failed", slug)
            return True

    def _may_requeue_for_capacity(self, submission_id: str) -> bool:
        with self._requeue_lock:
            count = self._capacity_requeues.get(submission_id, 0)
            if count >= MAX_CAPACITY_REQUEUES:
                return False
            self._capacity_requeues[submission_id] = count + 1
            return True

    def _finish(
        self, claim: Claim, problem: Problem, result: GradeResult, pending: PendingGrading | None = None
    ) -> bool:
        data = result_json(result)
        json.dumps(data, allow_nan=False).encode()  # what every store and client must be able to take
        graded = self.manifest(problem)
        final_data: dict[str, Any] = {"status": "done", "verdict": result.verdict.value, "result": data}
        if pending is not None:
            final_data |= {"regrade": True, "grading": pending.number}
            final = (RESULT, final_data)
            return self.gradings.finish(claim, pending, data, result.verdict.value, graded, final)
        return self.store.attempts.finish(claim, data, result.verdict.value, graded, (RESULT, final_data))

    def _give_up(self, claim: Claim, error: str, pending: PendingGrading | None = None) -> Outcome:
        with self._requeue_lock:
            self._capacity_requeues.pop(claim.submission_id, None)
        if pending is not None:
            # The regrade failed, not the submission: it keeps its current grading (no callback).
            data = {"status": "failed", "error": error, "regrade": True, "grading": pending.number}
            stored = self.gradings.fail(claim, pending, error, (FAILED, data))
            self.feed.announce(claim.submission_id)
            return Outcome.FAILED if stored else Outcome.SKIPPED
        stored = self.store.attempts.fail(claim, error, (FAILED, {"status": "failed", "error": error}))
        self.feed.announce(claim.submission_id)
        if stored:
            self._observe("submission_failed")
        if stored:
            record = self.store.submissions.get(claim.submission_id)
            if record is not None:
                self._call_back(record)
        return Outcome.FAILED if stored else Outcome.SKIPPED

    def _call_back(self, record: SubmissionRecord) -> None:
        """Send the finished submission's callback. A grader without callback settings cannot sign it:
        it hands the callback off (still pending, with a note naming this node) to the API nodes, whose
        sender polls for such callbacks and delivers them (``CallbackSender(poll_s=...)``); the API node
        that accepted a ``callback_url`` necessarily has callback settings."""
        if not record.callback_url:
            return
        if self.callbacks is not None:
            self.callbacks.submit(record.id)
            return
        note = (
            f"not sent by grading node {self.node or 'local'}: it has no callback settings "
            "(callback_hosts, callback_secret); left pending for an API node to send"
        )
        if self.store.callbacks.hand_off(record.id, record.callback_url, note):
            log.warning("submission %s: callback %s", record.id, note)

    def _observe(self, method: str, *args: Any) -> None:
        if self.observer is not None:
            try:
                getattr(self.observer, method)(*args)
            except Exception:  # metrics never break grading
                log.exception("metrics observer %s failed", method)


def _accepted(record: SubmissionRecord, pending: PendingGrading | None) -> dict[str, Any]:
    """The version (``problem_hash``, ``problem_revision``; the hash None for a submission stored before
    versions were recorded) a grading is for: a regrade's, the one it was asked for; else the one the
    submission was accepted for."""
    if pending is not None:
        return {"problem_hash": pending.accepted.hash or None, "problem_revision": pending.accepted.revision}
    return {key: record.manifest.get(key) for key in ("problem_hash", "problem_revision")}
