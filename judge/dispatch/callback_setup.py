"""The callback sender a process's settings ask for: None without callback hosts and a secret. Built alike
by a grading node (which sends the callbacks of what it grades) and an API node (which redelivers on
request and takes over handed-off callbacks every ``poll_s``)."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from judge.dispatch.document import submission_json
from judge.dispatch.metrics import Metrics
from judge.store import Store

if TYPE_CHECKING:
    from judge.core.settings import Settings
    from judge.dispatch.callbacks import CallbackSender


def callback_sender(
    settings: Settings, store: Store, metrics: Metrics, *, poll_s: float | None = None
) -> CallbackSender | None:
    """The sender of ``settings``' callback hosts, secrets and retry policy; failures counted in
    ``metrics``; ``poll_s``: look for handed-off callbacks that often (an API node), or never."""
    if not settings.callback_hosts or settings.callback_secret is None:
        return None
    from judge.dispatch.callbacks import CallbackSender

    return CallbackSender(
        store,
        secret=settings.callback_secret.get_secret_value().encode(),
        previous_secret=(
            settings.callback_secret_previous.get_secret_value().encode()
            if settings.callback_secret_previous is not None
            else None
        ),
        allowed_hosts=settings.callback_hosts,
        render=lambda record: json.dumps(submission_json(record)).encode(),
        attempts=settings.callback_attempts,
        backoff_s=settings.callback_backoff_s,
        timeout_s=settings.callback_timeout_s,
        on_failure=metrics.callback_failed,
        poll_s=poll_s,
    )
