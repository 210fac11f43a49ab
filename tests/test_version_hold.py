"""A submission is graded only with the version of its problem it was accepted for: a grader that lacks
it gives it back (no attempt used, a ``queued`` event and GET saying which version it waits for), a grader
that has it grades it, and once it waited ``version_hold_s`` with no live grader having it, it ends
``failed`` saying so. In-process (``LocalDispatcher``) and on two grading nodes during a rollout (one with
the new revision, one without; real Redis)."""

from __future__ import annotations

import shutil
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import redis

from judge.core.problem_hash import problem_hash
from judge.core.problems import Problems, ProblemSet
from judge.core.settings import Settings
from judge.dispatch import GradingLoop, LocalDispatcher, Outcome, ProgressFeed
from judge.dispatch.capabilities import SUBMISSIONS_QUEUE
from judge.dispatch.metrics import Metrics
from judge.dispatch.node import GradingNode
from judge.store import NewSubmission, NodeState, Status, Store, sqlite_url
from sandbox.backends import get_backend
from tests import redis_server
from tests.conftest import FIXTURE_SLUG, FIXTURES
from tests.fakes import FakeEngine
from tests.scale_support import wait_until
from tests.service_support import make_settings, running

SCALE = FIXTURE_SLUG
CODE = "def scale_tree(tree, factor):\n    return tree\n"
PROCESS = get_backend("process")


def bumped(tmp_path: Path, revision: int = 2) -> Path:
    """A copy of the fixture problems with ``scale-tree`` at ``revision`` (another content hash)."""
    root = tmp_path / f"fixtures-r{revision}" / FIXTURES.name
    shutil.copytree(FIXTURES.parent, root.parent)  # the problems and their reference/ beside them
    toml = root / SCALE / "problem.toml"
    toml.write_text(
        toml.read_text().replace('difficulty = "easy"\n', f'difficulty = "easy"\nrevision = {revision}\n', 1)
    )
    return root


def accepted_for(store: Store, problems: Problems, slug: str = SCALE, **extra: Any) -> str:
    """A queued submission accepted for ``slug`` as ``problems`` serve it."""
    problem = problems.get(slug)
    manifest = {
        "problem": slug,
        "problem_revision": problem.spec.revision,
        "problem_hash": problem_hash(problem),
    }
    return store.submissions.create(NewSubmission(problem=slug, code=CODE, manifest=manifest, **extra)).id


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    db = Store(sqlite_url(tmp_path / "judge.sqlite3"))
    db.migrate()
    yield db
    db.close()


def grader(store: Store, problems: ProblemSet, engine: FakeEngine, **kw: Any) -> GradingLoop:
    return GradingLoop(store, engine, problems, ProgressFeed(store), backend_name="fake", **kw)


def test_a_grader_without_the_version_gives_it_back_without_an_attempt(
    store: Store, problems: ProblemSet, tmp_path: Path
) -> None:
    new = ProblemSet(bumped(tmp_path))
    sid = accepted_for(store, new)
    engine, metrics = FakeEngine(), Metrics()
    old = grader(store, problems, engine, max_attempts=1, observer=metrics)
    for _ in range(3):  # more holds than max_attempts: none counts
        assert old.process(sid) is Outcome.HELD
        record = store.submissions.get(sid)
        assert record is not None and record.status is Status.QUEUED and record.attempts == 0
        [event] = store.events.after(sid)
        assert event.data["status"] == "queued" and event.data["waiting"] == "version"
        short = problem_hash(new.get(SCALE))[:12]
        assert (
            f"waiting for a grading node with version revision 2 ({short}) of problem {SCALE}"
            in (event.data["reason"])
        )
    assert engine.graded == []  # never graded with revision 1
    assert b'judge_requeues_total{reason="version"} 3.0' in metrics.render()
    assert grader(store, new, engine).process(sid) is Outcome.GRADED
    record = store.submissions.get(sid)
    assert record is not None and record.status is Status.DONE and record.attempts == 1
    assert record.manifest["problem_hash"] == problem_hash(new.get(SCALE))
    assert record.manifest["problem_revision"] == 2 and "accepted_problem_hash" not in record.manifest


def test_a_version_no_grader_has_fails_after_the_hold_saying_so(
    store: Store, problems: ProblemSet, tmp_path: Path
) -> None:
    sid = accepted_for(store, ProblemSet(bumped(tmp_path, 3)))
    elsewhere: list[tuple[str, str]] = []

    def served(slug: str, content_hash: str) -> bool:
        elsewhere.append((slug, content_hash))
        return len(elsewhere) == 1  # another live node has it, then it is gone

    old = grader(store, problems, FakeEngine(), hold_s=0.0, served_elsewhere=served)
    assert old.process(sid) is Outcome.HELD  # past the hold, but a live node still has it
    assert old.process(sid) is Outcome.FAILED
    record = store.submissions.get(sid)
    assert record is not None and record.status is Status.FAILED and record.attempts == 1
    assert record.error is not None and "no grading node has version revision 3" in record.error
    assert "not graded with another version" in record.error
    assert [e.kind for e in store.events.after(sid)] == ["failed"]


def test_a_vanished_problem_waits_then_fails(store: Store, problems: ProblemSet) -> None:
    sid = store.submissions.create(NewSubmission(problem="deleted-problem", code=CODE, manifest={})).id
    assert grader(store, problems, FakeEngine()).process(sid) is Outcome.HELD
    assert grader(store, problems, FakeEngine(), hold_s=0.0).process(sid) is Outcome.FAILED
    assert "no grading node has problem deleted-problem" in (store.submissions.get(sid).error or "")  # type: ignore[union-attr]


def test_the_in_process_queue_offers_a_held_submission_again_until_the_version_is_served(
    store: Store, problems: ProblemSet, tmp_path: Path
) -> None:
    """The dispatcher puts a held submission aside and offers it again: once the grader serves the
    version (a rollout reached it), it is graded, with that version, on its first attempt."""
    new = ProblemSet(bumped(tmp_path))
    sid = accepted_for(store, new)
    engine = FakeEngine()
    worker = grader(store, problems, engine)
    dispatcher = LocalDispatcher(worker, store, concurrency=1, queue_size=10)
    dispatcher.start()
    try:
        dispatcher.reserve().commit(sid)
        wait_until(lambda: store.events.after(sid), 10, "the hold's event")
        time.sleep(0.5)
        assert store.submissions.get(sid).status is Status.QUEUED and engine.graded == []  # type: ignore[union-attr]
        where = dispatcher.waiting(sid)  # None only while an offer is being turned down
        assert where is None or (where.reason == "queue" and where.ahead == 0)
        worker.problems = new
        wait_until(lambda: store.submissions.get(sid).status is Status.DONE, 20, "the grading")  # type: ignore[union-attr]
    finally:
        dispatcher.close(5)
    record = store.submissions.get(sid)
    assert record is not None and record.attempts == 1 and record.manifest["problem_revision"] == 2


def test_get_says_what_version_a_held_submission_waits_for_and_it_fails_after_the_hold(
    tmp_path: Path,
) -> None:
    settings = make_settings(tmp_path, version_hold_s=1.0)
    new = ProblemSet(bumped(tmp_path))
    engine = FakeEngine()
    with running(settings, backend=PROCESS, engine=engine) as (client, services):
        graded = client.post("/api/v1/submissions", json={"problem": SCALE, "code": CODE}).json()["id"]
        body = client.get(f"/api/v1/submissions/{graded}?wait=30").json()
        assert body["status"] == "done" and body["manifest"]["problem_revision"] == 1
        sid = accepted_for(services.store, new)
        services.dispatcher.reserve().commit(sid)
        wait_until(lambda: services.store.events.after(sid), 10, "the hold")
        body = client.get(f"/api/v1/submissions/{sid}").json()
        assert body["status"] == "queued", body  # between two offers, 2 s apart
        waiting = body["waiting"]
        assert waiting["reason"] == "version" and waiting["estimate_s"] is None
        assert (
            f"version revision 2 ({problem_hash(new.get(SCALE))[:12]}) of problem {SCALE}"
            in (waiting["message"])
        )
        body = client.get(f"/api/v1/submissions/{sid}?wait=30").json()
    assert body["status"] == "failed" and "no grading node has version revision 2" in body["error"]
    assert len(engine.graded) == 1  # only the first one


# ---------------------------------------------------------------------------------------- two nodes

needs_redis = pytest.mark.skipif(
    redis_server.why_unavailable() is not None, reason=str(redis_server.why_unavailable())
)


@pytest.fixture(scope="module")
def broker() -> Iterator[redis_server.RedisServer]:
    server = redis_server.RedisServer()
    try:
        server.start()
        yield server
    finally:
        server.stop()


@needs_redis
def test_two_nodes_during_a_rollout_grade_each_submission_with_its_own_version(
    broker: redis_server.RedisServer, tmp_path: Path
) -> None:
    """Node A serves revision 1, node B revision 2 (B has been rolled out, A not yet). Whichever node a
    message reaches, each submission is graded by the node with its version; the other gives it back
    and publishes it again later; a node that has left no longer counts as having its version."""
    database = f"sqlite:///{tmp_path / 'shared.sqlite3'}"
    common: dict[str, Any] = {"queue_url": broker.url, "database_url": database, "version_hold_s": 0.0}
    engines = {"a": FakeEngine(), "b": FakeEngine()}
    nodes = {
        "a": GradingNode(Settings(data_dir=tmp_path / "a", problems_dir=FIXTURES, **common), concurrency=1,
                         backend=PROCESS, engine=engines["a"]),
        "b": GradingNode(Settings(data_dir=tmp_path / "b", problems_dir=bumped(tmp_path), **common),
                         concurrency=1, backend=PROCESS, engine=engines["b"]),
    }  # fmt: skip
    connection = redis.Redis.from_url(broker.url)
    try:
        nodes["a"].store.migrate()
        connection.delete(SUBMISSIONS_QUEUE)
        for node in nodes.values():
            node.state = NodeState.READY
            node._heartbeat_once()
        old = accepted_for(nodes["a"].store, nodes["a"].problems)
        new = accepted_for(nodes["a"].store, nodes["b"].problems)
        # Each reaches the wrong node first: held (B is live with revision 2, A with revision 1), not
        # failed though version_hold_s is 0, and published again after the hold's delay.
        assert nodes["a"].handle(new) == "held" and nodes["b"].handle(old) == "held"
        wait_until(lambda: connection.llen(SUBMISSIONS_QUEUE) == 2, 10, "the held messages published again")
        for sid in (old, new):
            record = nodes["a"].store.submissions.get(sid)
            assert record is not None and record.status is Status.QUEUED and record.attempts == 0
        assert nodes["a"].handle(old) == "graded" and nodes["b"].handle(new) == "graded"
        graded = {sid: nodes["a"].store.submissions.get(sid) for sid in (old, new)}
        assert graded[old].manifest["problem_revision"] == 1  # type: ignore[union-attr]
        assert graded[new].manifest["problem_revision"] == 2  # type: ignore[union-attr]
        assert len(engines["a"].graded) == 1 and len(engines["b"].graded) == 1
        # B leaves: a revision-2 submission reaching A now fails (the hold is 0 s), saying why.
        nodes["b"].state = NodeState.STOPPED
        nodes["b"]._heartbeat_once()
        late = accepted_for(nodes["a"].store, nodes["b"].problems)
        assert nodes["a"].handle(late) == "failed"
        record = nodes["a"].store.submissions.get(late)
        assert record is not None and "no grading node has version revision 2" in (record.error or "")
    finally:
        connection.delete(SUBMISSIONS_QUEUE)
        connection.close()
        for node in nodes.values():
            node._stop.set()
            node.engine.close()
            node.queue.close()
            node.notifier.close()
            node.store.close()


@needs_redis
def test_a_grading_node_takes_up_a_pushed_version_without_a_restart(
    broker: redis_server.RedisServer, tmp_path: Path
) -> None:
    """An operator's version goes live in the store: the node loads it at its next poll, reports it (the
    problems folder's version as ``also``), grades new submissions with it and those accepted for the
    older version with that one; retired, it is dropped."""
    from judge.authoring.problem_archive import pack
    from judge.dispatch.served import serves
    from judge.store.problem_versions import ProblemVersions

    settings = Settings(
        data_dir=tmp_path / "node",
        problems_dir=FIXTURES,
        queue_url=broker.url,
        database_url=f"sqlite:///{tmp_path / 'db.sqlite3'}",
    )
    engine = FakeEngine()
    node = GradingNode(settings, concurrency=1, backend=PROCESS, engine=engine)
    try:
        node.store.migrate()
        base = node.problems.get(SCALE)
        bumped_set = ProblemSet(bumped(tmp_path))
        new = bumped_set.get(SCALE)
        versions = ProblemVersions(node.store)
        versions.push(SCALE, problem_hash(new), 2, pack(new.root), tenants=None, pushed_by="op")
        assert not node.refresh_problems() or node.problems.get(SCALE) is base  # still checking
        versions.settle(SCALE, problem_hash(new), live=True, findings=[])
        assert node.refresh_problems()
        assert node.problems.get(SCALE).spec.revision == 2
        reported = node.beat().problem_versions
        assert reported is not None and reported[SCALE]["hash"] == problem_hash(new)
        assert serves(reported, SCALE, problem_hash(base)) and serves(reported, SCALE, problem_hash(new))
        old_sid = accepted_for(node.store, ProblemSet(FIXTURES))
        new_sid = accepted_for(node.store, bumped_set)
        assert node.handle(old_sid) == "graded" and node.handle(new_sid) == "graded"
        assert node.store.submissions.get(old_sid).manifest["problem_revision"] == 1  # type: ignore[union-attr]
        assert node.store.submissions.get(new_sid).manifest["problem_revision"] == 2  # type: ignore[union-attr]
        versions.retire(SCALE)
        assert node.refresh_problems() and node.problems.get(SCALE) is base
        assert not serves(node.beat().problem_versions, SCALE, problem_hash(new))
    finally:
        node._stop.set()
        node.engine.close()
        node.queue.close()
        node.notifier.close()
        node.store.close()


def test_a_regrade_is_held_for_the_version_it_was_asked_for_and_its_failure_keeps_the_grading(
    store: Store, problems: ProblemSet, tmp_path: Path
) -> None:
    """A regrade is graded with the version it was asked for (not the one its submission was first
    graded with): a grader without it gives it back, attempts untouched; once the hold is over with no
    live grader having it, the regrade fails and the submission keeps its earlier grading."""
    from judge.store.gradings import GradingStore, ProblemVersion

    sid = accepted_for(store, problems)
    engine = FakeEngine()
    assert grader(store, problems, engine).process(sid) is Outcome.GRADED
    first = store.submissions.get(sid)
    assert first is not None and first.status is Status.DONE
    new = ProblemSet(bumped(tmp_path))
    asked = ProblemVersion(problem_hash(new.get(SCALE)), 2)
    number = GradingStore(store).request(sid, asked)
    old = grader(store, problems, engine, served_elsewhere=lambda slug, h: False)
    assert old.process(sid) is Outcome.HELD  # revision 1 is not what the regrade asked for
    assert len(engine.graded) == 1
    held = store.submissions.get(sid)
    assert held is not None and held.status is Status.QUEUED and held.attempts == first.attempts
    gone = grader(store, problems, engine, hold_s=0.0, served_elsewhere=lambda slug, h: False)
    assert gone.process(sid) is Outcome.FAILED
    after = store.submissions.get(sid)
    assert after is not None and after.status is Status.DONE and after.verdict == first.verdict
    [*_, last] = GradingStore(store).history(sid)
    assert last.number == number and last.status == "failed"
    assert len(engine.graded) == 1  # never graded with revision 1 for the regrade
