"""The typed refusals of the submission use-cases: each names what is wrong; the route maps it to an API
error (``judge.service.routes.submissions``)."""

from __future__ import annotations


class IdempotencyConflict(Exception):
    """An ``Idempotency-Key`` that cannot answer this request: used with another body, or its submission
    gone or held by a concurrent request. ``names_key``: the key itself is what is wrong (another body)."""

    def __init__(self, message: str, *, names_key: bool = False) -> None:
        super().__init__(message)
        self.message = message
        self.names_key = names_key


class NotRedeliverable(Exception):
    """A callback that cannot be delivered again: ``reason`` is ``no_callback`` or ``not_finished``."""

    def __init__(self, reason: str, message: str) -> None:
        super().__init__(message)
        self.reason = reason
        self.message = message
