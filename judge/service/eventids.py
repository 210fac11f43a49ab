"""Server-sent event ids: per submission, so a ``Last-Event-ID`` from another stream is refused.

An id is ``<submission id>/<n>``: ``n`` is the stored event's number (0 for the first event, the status
the stream opens with). ``parse`` checks the header where it arrives: the submission must be this one,
``n`` a decimal integer from 0 to 2**63 - 1 (what the database's ids hold); anything else is a 422.
"""

from __future__ import annotations

import re

from judge.service.api_errors import ApiError

#: Largest event number (the database's BIGINT).
MAX_EVENT = (1 << 63) - 1
_ID = re.compile(r"([0-9a-fA-F-]{1,64})/([0-9]{1,40})")
_PATH = "header.last-event-id"


def event_id(submission_id: str, number: int) -> str:
    return f"{submission_id}/{number}"


def _refuse(message: str) -> ApiError:
    return ApiError(422, "invalid_request", f"Last-Event-ID: {message}", path=_PATH)


def parse(header: str | None, submission_id: str) -> int:
    """The event number to resume after (0: from the start) named by ``header``; 422 when malformed, out
    of range or another submission's."""
    if header is None or not header.strip():
        return 0
    match = _ID.fullmatch(header.strip())
    if match is None:
        raise _refuse(
            f"{header[:80]!r} is not an event id of this stream ('<submission id>/<number>', as sent)"
        )
    owner, number = match.group(1).lower(), int(match.group(2))
    if owner != submission_id:
        raise _refuse(f"{header[:80]!r} is an event id of another submission")
    if number > MAX_EVENT:
        raise _refuse(f"event number {match.group(2)} is larger than {MAX_EVENT}")
    return number
