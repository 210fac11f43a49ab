"""The listing's queries (``GET /api/submissions``; ``Store.listing``: ``page``, ``count_matching``,
``total``): which submissions match a filter, as one range of an index after the owner; a tag read from
``submission_tags`` in the way ``tag_way`` picks. Pure query building: ``judge.store.pages`` runs them.

    where(chosen)     conditions on ``submissions``
    tagged(chosen)    conditions on ``submission_tags`` of a tag filter
    matching(chosen)  (SELECT of the matching ids, the columns of its order)
    tag_way(chosen)   how a tag filter is served
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import select

from judge.store.models import Submission, SubmissionTag
from judge.store.records import Status, SubmissionFilter


def where(chosen: SubmissionFilter) -> list[Any]:
    key = chosen.key_id
    conditions: list[Any] = [Submission.key_id.is_(None) if key is None else Submission.key_id == key]
    if chosen.problem is not None:
        conditions.append(Submission.problem == chosen.problem)
    if chosen.status is not None:
        conditions.append(Submission.status == chosen.status.value)
    if chosen.verdict is not None:
        conditions.append(Submission.verdict == chosen.verdict)
    if chosen.external_user is not None:
        conditions.append(Submission.external_user == chosen.external_user)
    if chosen.created_after is not None:
        conditions.append(Submission.created_at >= chosen.created_after)
    if chosen.created_before is not None:
        conditions.append(Submission.created_at < chosen.created_before)
    if chosen.regrade_of is not None:
        conditions.append(Submission.regrade_of == chosen.regrade_of)
    return conditions


def tagged(chosen: SubmissionFilter) -> list[Any]:
    """The conditions on ``submission_tags`` of a tag filter: its owner's rows with this tag, of the
    problem, status and verdict and within the creation times asked (the tag rows copy them: one range of
    an index, status and verdict read from the index too)."""
    assert chosen.tag is not None
    name, value = chosen.tag
    key = chosen.key_id
    owner = SubmissionTag.key_id.is_(None) if key is None else SubmissionTag.key_id == key
    conditions = [owner, SubmissionTag.name == name, SubmissionTag.value == value]
    if chosen.problem is not None:
        conditions.append(SubmissionTag.problem == chosen.problem)
    if chosen.status is not None:
        conditions.append(SubmissionTag.status == chosen.status.value)
    if chosen.verdict is not None:
        conditions.append(SubmissionTag.verdict == chosen.verdict)
    if chosen.created_after is not None:
        conditions.append(SubmissionTag.created_at >= chosen.created_after)
    if chosen.created_before is not None:
        conditions.append(SubmissionTag.created_at < chosen.created_before)
    return conditions


def matching(chosen: SubmissionFilter) -> tuple[Any, Any, Any]:
    """(SELECT the ids (``id``) of the submissions matching ``chosen``, and the (created_at, id)
    columns of its order). A tag is read from ``submission_tags``, never the JSON column (which no
    index serves alike on both databases), in the way ``tag_way`` picks."""
    if chosen.tag is None:
        return select(Submission.id).where(*where(chosen)), Submission.created_at, Submission.id
    way = tag_way(chosen)
    if way == "tag_rows":
        # The tag's range (of its problem and times), newest first; a broad status or verdict beside it
        # is checked on the index entries themselves (the tag rows copy them).
        query = select(SubmissionTag.submission_id.label("id")).where(*tagged(chosen))
        return query, SubmissionTag.created_at, SubmissionTag.submission_id
    if way == "join":
        query = (
            select(Submission.id)
            .join(SubmissionTag, SubmissionTag.submission_id == Submission.id)
            .where(*where(chosen), *tagged(chosen))
        )
        return query, Submission.created_at, Submission.id
    # "lookup": the narrow filter's range, each submission's tag looked up by its key.
    name, value = chosen.tag
    tag_value = (
        select(SubmissionTag.value)
        .where(SubmissionTag.submission_id == Submission.id, SubmissionTag.name == name)
        .scalar_subquery()
    )
    query = select(Submission.id).where(*where(chosen), tag_value == value)
    return query, Submission.created_at, Submission.id


_BROAD_STATUSES = frozenset({Status.DONE})
_BROAD_VERDICTS = frozenset({"accepted", "wrong_answer"})


def tag_way(chosen: SubmissionFilter) -> str:
    """How a tag filter is served, each way walking an index in the page's order and stopping at the
    page's end (or the count's cap), chosen by what a platform's data looks like, measured at a million
    (bench/bench_listing.py), where the databases' own choice misjudged two filters together (a hash join
    of a common tag's rows with a common problem's took 100 ms):

    ``tag_rows``  the tag's range of its index (of its problem and times), a broad status or verdict
                  beside it (done; accepted, wrong_answer) checked on the index entries, which copy them
                  (the tag rows answer the whole filter)
    ``lookup``    beside a narrow status or verdict (queued, failed, ...; a rare verdict): that filter's
                  range, each submission's tag looked up by its key (fewer entries than the tag's range)
    ``join``      beside an external user or a regrade (a few hundred rows at most): the tag's and the
                  user's rows joined as the database sees fit
    """
    if chosen.external_user is not None or chosen.regrade_of is not None:
        return "join"
    narrow = (chosen.status is not None and chosen.status not in _BROAD_STATUSES) or (
        chosen.verdict is not None and chosen.verdict not in _BROAD_VERDICTS
    )
    return "lookup" if narrow else "tag_rows"
