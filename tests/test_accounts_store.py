"""judge.store.accounts on SQLite and PostgreSQL: accounts, the submissions that belong to one, the last
code, the solved set, import and erasure (with its submissions' events and callback records)."""

from __future__ import annotations

from typing import Any

import pytest

from judge.store import Claim, NewSubmission, Store
from judge.store.accounts import AccountStore, NameTaken

pytest_plugins = ("tests.stores",)


def new(problem: str = "scale-tree", key_id: str | None = None) -> NewSubmission:
    return NewSubmission(problem=problem, code="x = 1", manifest={}, key_name=key_id, key_id=key_id)


def graded(store: Store, problem: str, verdict: str, key_id: str | None = None) -> str:
    record = store.submissions.create(new(problem, key_id))
    claim = store.attempts.claim(record.id)
    assert isinstance(claim, Claim)
    store.events.append(claim, "case", {"name": "one"})
    result: dict[str, Any] = {"verdict": verdict, "passed": 1, "total": 1}
    assert store.attempts.finish(claim, result, verdict, {}, ("result", result))
    return record.id


def test_names_are_unique_in_any_case_and_only_a_hash_is_kept(store: Store) -> None:
    accounts = AccountStore(store)
    made = accounts.create("Ada", "$argon2id$hash")
    assert "$argon2id$hash" not in repr(made)
    with pytest.raises(NameTaken):
        accounts.create("ADA", "$argon2id$other")
    found = accounts.by_name("ada")
    assert found is not None and found.id == made.id and found.name == "Ada"
    assert accounts.get(made.id) == found


def test_progress_holds_verdicts_solved_set_code_and_history(store: Store) -> None:
    accounts = AccountStore(store)
    me = accounts.create("me", "h")
    first = graded(store, "scale-tree", "accepted")
    later = graded(store, "scale-tree", "wrong_answer")
    wrong = graded(store, "lerp-trees", "wrong_answer")
    queued = store.submissions.create(new("lerp-trees")).id
    for sid, slug in (
        (first, "scale-tree"),
        (later, "scale-tree"),
        (wrong, "lerp-trees"),
        (queued, "lerp-trees"),
    ):
        accounts.link(me.id, sid, slug)
    accounts.save_code(me.id, "scale-tree", "# mine")
    progress = accounts.progress(me.id, "scale-tree")
    assert progress["scale-tree"].solved and progress["scale-tree"].verdict == "wrong_answer"
    assert [item.id for item in progress["scale-tree"].history] == [later, first]
    assert progress["scale-tree"].code == "# mine"
    assert not progress["lerp-trees"].solved and progress["lerp-trees"].history == ()
    assert progress["lerp-trees"].code is None  # code only for the problem asked about
    # Retention removes the accepted submission: the problem stays solved.
    finished = store.submissions.get(later)
    assert finished is not None and finished.finished_at is not None
    store.deletion.purge_finished(finished.finished_at)
    assert accounts.progress(me.id)["scale-tree"].solved
    # Somebody else's account sees none of it.
    other = accounts.create("other", "h")
    assert accounts.progress(other.id) == {}


def test_import_takes_free_keyless_submissions_of_that_problem_only(store: Store) -> None:
    accounts = AccountStore(store)
    me, other = accounts.create("me", "h"), accounts.create("other", "h")
    free = graded(store, "scale-tree", "accepted")
    keyed = graded(store, "scale-tree", "accepted", key_id="a-key")
    owned = graded(store, "scale-tree", "accepted")
    accounts.link(other.id, owned, "scale-tree")
    elsewhere = graded(store, "lerp-trees", "accepted")
    accounts.save_code(me.id, "lerp-trees", "# kept")
    imported = accounts.import_local(
        me.id,
        {"scale-tree": "# local", "lerp-trees": "# local too"},
        {"scale-tree": [free, keyed, owned, elsewhere, free]},
    )
    assert (imported.code, imported.submissions) == (1, 1)
    progress = accounts.progress(me.id, "scale-tree")
    assert [item.id for item in progress["scale-tree"].history] == [free]
    assert progress["scale-tree"].code == "# local"
    assert accounts.progress(me.id, "lerp-trees")["lerp-trees"].code == "# kept"


def test_erase_removes_the_account_its_submissions_and_their_records(store: Store) -> None:
    accounts = AccountStore(store)
    me, other = accounts.create("me", "h"), accounts.create("other", "h")
    mine = graded(store, "scale-tree", "accepted")
    theirs = graded(store, "scale-tree", "accepted")
    accounts.link(me.id, mine, "scale-tree")
    accounts.link(other.id, theirs, "scale-tree")
    accounts.save_code(me.id, "scale-tree", "# mine")
    store.callbacks.record_attempt(mine, 1, "http://example.test/", 500, None)
    erased = accounts.erase(me.id)
    assert erased is not None and (erased.submissions, erased.problems) == (1, 1)
    assert (
        store.submissions.get(mine) is None
        and store.events.after(mine) == []
        and store.callbacks.attempts(mine) == []
    )
    assert accounts.get(me.id) is None and accounts.progress(me.id) == {}
    assert store.submissions.get(theirs) is not None and accounts.progress(other.id)["scale-tree"].solved
    assert accounts.erase(me.id) is None


def test_deleting_a_submission_drops_its_account_link(store: Store) -> None:
    accounts = AccountStore(store)
    me = accounts.create("me", "h")
    sid = graded(store, "scale-tree", "wrong_answer")
    accounts.link(me.id, sid, "scale-tree")
    assert store.deletion.delete(sid)
    assert accounts.progress(me.id) == {}
