"""judge.core.memo.BoundedMemo: the trusted side's memos stay bounded, and None is a value."""

from __future__ import annotations

from judge.core.memo import MISSING, BoundedMemo


def test_the_oldest_key_goes_first_and_a_put_again_does_not_evict() -> None:
    memo: BoundedMemo[str, int] = BoundedMemo(2)
    memo.put("a", 1)
    memo.put("b", 2)
    memo.put("b", 3)
    assert len(memo) == 2 and memo.get("a", MISSING) == 1
    memo.put("c", 4)
    assert memo.get("a", MISSING) is MISSING and memo.get("b", MISSING) == 3 and memo.get("c", MISSING) == 4


def test_none_is_remembered_and_made_once() -> None:
    memo: BoundedMemo[str, int | None] = BoundedMemo(4)
    made: list[str] = []

    def make() -> None:
        made.append("x")

    assert memo.get_or_make("x", make) is None
    assert memo.get_or_make("x", make) is None
    assert made == ["x"] and memo.get("x", MISSING) is None
