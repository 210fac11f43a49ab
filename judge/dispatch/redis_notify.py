"""Progress notices across processes over Redis pub/sub (distributed dispatch).

A grading node's ``ProgressFeed`` stores each event in the database, then publishes the submission's id on
one channel; every API node listens on it and wakes its own waiters (``?wait=`` and event streams), which
then read the events from the database. A notice carries only an id: a lost notice costs latency, never
data (waiters also poll the database every ``poll_s``).
"""

from __future__ import annotations

import contextlib
import logging
import threading

from judge.dispatch.events import Notifier

log = logging.getLogger(__name__)

CHANNEL = "judge:progress"
#: Longest wait for a notice before checking whether to stop; back-off after a broker failure.
LISTEN_TICK_S = 0.5
RECONNECT_S = 1.0


class RedisNotifier(Notifier):
    """``notify`` wakes local waiters and publishes the id; ``listen()`` (API nodes) starts a thread that
    turns other processes' notices into local wake-ups."""

    def __init__(self, url: str) -> None:
        super().__init__()
        # The [distributed] extra's client, imported when a deployment has a queue (a lone `judge serve`
        # imports this module without it).
        import redis
        from redis.exceptions import RedisError

        self._redis = redis.Redis.from_url(url, socket_timeout=5, socket_connect_timeout=5)
        self._redis_error: type[Exception] = RedisError
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def notify(self, key: str) -> None:
        super().notify(key)
        try:
            self._redis.publish(CHANNEL, key)
        except self._redis_error as exc:  # waiters poll the database anyway
            log.debug("publishing a progress notice failed: %s", exc)

    def listen(self) -> None:
        self._thread = threading.Thread(target=self._listen, name="progress-listener", daemon=True)
        self._thread.start()

    def _listen(self) -> None:
        while not self._stop.is_set():
            pubsub = self._redis.pubsub(ignore_subscribe_messages=True)  # type: ignore[no-untyped-call]
            try:
                pubsub.subscribe(CHANNEL)
                while not self._stop.is_set():
                    message = pubsub.get_message(timeout=LISTEN_TICK_S)
                    if message is None:
                        continue
                    data = message.get("data")
                    if isinstance(data, bytes) and len(data) <= 64:
                        Notifier.notify(self, data.decode("ascii", "replace"))
            except (self._redis_error, OSError) as exc:
                log.debug("progress listener: %s; reconnecting", exc)
                self._stop.wait(RECONNECT_S)
            finally:
                with contextlib.suppress(self._redis_error, OSError):
                    pubsub.close()

    def close(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=5)
        self._redis.close()
