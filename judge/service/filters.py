"""A submission listing's query parameters, checked: each value out of range is a 422 naming its
parameter, never a 500 (an offset past a day, a time whose UTC conversion overflows, a cursor this API
did not write, a tag name or an external user the submit would have refused).

    instant("created_after", "2026-01-01T00:00:00Z")   -> an aware UTC datetime
    tag_filter("course:jax-101")                        -> ("course", "jax-101")
    cursor(text) / next_cursor(record)                  a listing position, opaque to clients
    id_list("a,b,c", most=200)                          -> canonical submission ids, in order
"""

from __future__ import annotations

import base64
import re
import uuid
from datetime import UTC, datetime

from judge.service.api_errors import ApiError
from judge.store import Cursor, SubmissionRecord

#: ``tag=name:value``: a name as a submit accepts it (schemas.TagName), a value of at most 200 characters.
_TAG_NAME = re.compile(r"[A-Za-z0-9_.\-]{1,64}")
_TAG_VALUE_MAX = 200
#: ``external_user`` as a submit accepts it (schemas.ExternalUser).
_EXTERNAL_USER = re.compile(r"[A-Za-z0-9._:@+\-]{1,200}")
#: ISO 8601 as the API writes it and RFC 3339 defines it: a date, ``T`` (or a space), a time, an offset.
_ISO_8601 = re.compile(
    r"\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}(:\d{2}(\.\d{1,6})?)?([Zz]|[+-]\d{2}:?\d{2}(:\d{2}(\.\d{1,6})?)?)?"
)


def instant(name: str, text: str | None) -> datetime | None:
    """``text`` (ISO 8601 with a time zone) as an aware UTC datetime; 422 ``invalid_time`` naming ``name``
    for a number, a string that is no such date-time, an offset of a day or more, no time zone, or a time
    outside the years 1-9999 once in UTC."""
    if text is None:
        return None
    if not _ISO_8601.fullmatch(text):
        raise ApiError(
            422,
            "invalid_time",
            f"{name}: not an ISO 8601 date-time with a time zone, e.g. 2026-01-31T12:00:00Z",
            path=name,
        )
    try:
        when = datetime.fromisoformat(text.replace("z", "Z").replace("t", "T"))
    except ValueError as exc:  # a month 13, an offset of 24 hours or more, ...
        raise ApiError(422, "invalid_time", f"{name}: {exc}", path=name) from None
    if when.tzinfo is None:
        raise ApiError(422, "invalid_time", f"{name}: give a time zone (e.g. Z)", path=name)
    try:
        return when.astimezone(UTC)
    except OverflowError:
        raise ApiError(
            422, "invalid_time", f"{name}: outside the years 1 to 9999 once converted to UTC", path=name
        ) from None


def tag_filter(text: str | None) -> tuple[str, str] | None:
    """``name:value`` -> (name, value); 422 ``invalid_tag`` for what no submission can carry."""
    if text is None:
        return None
    name, sep, value = text.partition(":")
    if not sep or not name:
        raise ApiError(422, "invalid_tag", "tag: expected name:value", path="tag")
    if not _TAG_NAME.fullmatch(name):
        raise ApiError(422, "invalid_tag", "tag: a name is 1 to 64 letters, digits or `_.-`", path="tag")
    if len(value) > _TAG_VALUE_MAX:
        raise ApiError(422, "invalid_tag", f"tag: a value is at most {_TAG_VALUE_MAX} characters", path="tag")
    return name, value


def external_user(text: str | None) -> str | None:
    if text is not None and not _EXTERNAL_USER.fullmatch(text):
        raise ApiError(
            422,
            "invalid_filter",
            "external_user: 1 to 200 letters, digits or `._:@+-` (as a submit accepts it)",
            path="external_user",
        )
    return text


def submission_id(name: str, text: str | None) -> str | None:
    """A submission id filter (``regrade_of``), canonical (lower case); 422 for what is no id."""
    if text is None:
        return None
    try:
        return str(uuid.UUID(text))
    except ValueError:
        raise ApiError(422, "invalid_filter", f"{name}: not a submission id", path=name) from None


def id_list(text: str, most: int) -> list[str]:
    """``a,b,c`` -> the canonical ids, in order, without repeats; 422 ``invalid_filter`` naming the first
    that is no id (by position), and past ``most`` ids."""
    parts = [part.strip() for part in text.split(",")]
    if not any(parts):
        raise ApiError(422, "invalid_filter", "ids: give at least one submission id", path="ids")
    ids: list[str] = []
    for position, part in enumerate(parts):
        try:
            ids.append(str(uuid.UUID(part)))
        except ValueError:
            raise ApiError(
                422,
                "invalid_filter",
                f"ids: item {position} ({part[:40]!r}) is not a submission id",
                path="ids",
            ) from None
    unique = list(dict.fromkeys(ids))
    if len(unique) > most:
        raise ApiError(
            422, "limit_exceeded", f"ids: at most {most} ids at once", path="ids", limit="page_max"
        )
    return unique


def cursor(text: str | None) -> Cursor | None:
    if text is None or not text:
        return None
    refused = ApiError(422, "invalid_cursor", "cursor: not a cursor this API returned", path="cursor")
    try:
        raw = base64.urlsafe_b64decode(text.encode("ascii") + b"==").decode()
        stamp, ident = raw.split("|", 1)
        when = datetime.fromisoformat(stamp)
        canonical = str(uuid.UUID(ident))
        if when.tzinfo is None:
            raise refused
        return Cursor(when.astimezone(UTC), canonical)
    except (ValueError, UnicodeError, OverflowError):
        raise refused from None


def next_cursor(record: SubmissionRecord) -> str:
    raw = f"{record.created_at.isoformat()}|{record.id}"
    return base64.urlsafe_b64encode(raw.encode()).decode().rstrip("=")
