"""A batch's ``Idempotency-Key``: one key for the whole batch, kept as one key per item.

    key_of(key, index)      the stored key of item ``index`` of a batch posted with ``key``
    body_hash(body)         the hash every item's key records: the whole batch's (canonical JSON)
    conflict(...)           the 409 of a key already used with another batch body, or None
    check_bounds(body, n)   a 422 for the whole batch when an item is past a bound the schema declares

An item past a bound of the schema (its code longer than ``maxLength``, as its syntax: a malformed
``callback_url``) makes the batch's body malformed: it is refused whole (422), nothing stored. An item
refused for what only the judge knows (no such problem, a host off the allowlist, code over
max_code_bytes in bytes of UTF-8 though within the characters, a full queue) is refused by itself.

Item ``index`` is stored with the key ``batch<TAB><key><TAB><index>`` (a tab is no character of a client's
key, so no single submit's key can name it) and the hash of the whole batch, so the same batch posted
again with the same key stores nothing new and answers the same submissions, and another batch body with
that key is a 409 ``idempotency_conflict`` before any item is stored. Items that were refused the first
time (a 422, a 429 past a cap) stored no key: a retry submits them again.
"""

from __future__ import annotations

import hashlib
import json
from datetime import datetime

from judge.service.api_errors import ApiError
from judge.service.schemas import BatchCreate
from judge.store import Store


def check_bounds(body: BatchCreate, max_code_bytes: int) -> None:
    """Raise the 422 of the first item whose code has more characters than max_code_bytes (the
    schema's maxLength of ``code``)."""
    for index, item in enumerate(body.items):
        if len(item.code) > max_code_bytes:
            raise ApiError(
                422,
                "limit_exceeded",
                f"items[{index}].code: longer than {max_code_bytes} characters (max_code_bytes); the batch "
                "is refused whole",
                path=f"items[{index}].code",
                limit="max_code_bytes",
            )


def key_of(key: str, index: int) -> str:
    """The stored key of item ``index`` (at most 255 characters: a long key is hashed)."""
    name = key if len(key) <= 200 else hashlib.sha256(key.encode()).hexdigest()
    return f"batch\t{name}\t{index}"


def body_hash(body: BatchCreate) -> str:
    canonical = json.dumps(body.model_dump(mode="json"), sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(canonical.encode()).hexdigest()


def conflict(store: Store, scope: str, key: str, count: int, digest: str, since: datetime) -> ApiError | None:
    """The 409 when an item key of ``key`` (of items 0 to ``count`` - 1) names another batch body."""
    for index in range(count):
        hit = store.idempotency.live(scope, key_of(key, index), since)
        if hit is not None and hit.body_hash != digest:
            return ApiError(
                409,
                "idempotency_conflict",
                f"Idempotency-Key {key[:64]!r} was used for another batch body (at "
                f"{hit.created_at.isoformat()}); use a new key for a new batch",
                path="Idempotency-Key",
            )
    return None
