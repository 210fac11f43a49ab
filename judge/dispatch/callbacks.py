"""Result callbacks: POST a finished submission to its ``callback_url``, signed, retried, recorded.

Only URLs whose host is on the operator's allowlist are ever called (checked when the submission is
accepted and again before each delivery). The body is the submission as ``GET /api/submissions/{id}``
returns it; the header ``X-Judge-Signature: sha256=<hex>`` is the HMAC-SHA256 of the exact body bytes with
the operator's secret, so the receiver can verify it came from this judge. A delivery that fails with a
network error, a timeout, 408, 429 or 5xx is retried after ``backoff_s * 2**(attempt - 1)`` seconds, up to
``attempts`` tries; redirects are never followed. Every try is recorded (``Store.record_callback_attempt``)
and the submission's ``callback_state`` ends ``delivered`` or ``failed``. Pending deliveries survive a
restart: ``start`` resumes them.
"""

from __future__ import annotations

import hashlib
import heapq
import hmac
import logging
import threading
import time
from collections.abc import Callable, Iterable
from urllib.parse import urlsplit

import httpx

from judge.store import CallbackState, Store, SubmissionRecord

log = logging.getLogger(__name__)

SIGNATURE_HEADER = "X-Judge-Signature"
_RETRYABLE_STATUS = frozenset({408, 425, 429})
MAX_URL_LENGTH = 2048


def sign(secret: bytes, body: bytes) -> str:
    """The signature header's value for ``body``: ``sha256=<hex HMAC-SHA256>``."""
    return "sha256=" + hmac.new(secret, body, hashlib.sha256).hexdigest()


def verify(secret: bytes, body: bytes, header: str) -> bool:
    """What a receiver does: recompute the signature and compare in constant time."""
    return hmac.compare_digest(sign(secret, body), header)


def _authority(url: str) -> tuple[str, str, int | None]:
    parts = urlsplit(url)
    return parts.scheme, (parts.hostname or "").lower(), parts.port


def callback_refusal(url: str, allowed_hosts: Iterable[str]) -> str | None:
    """None when ``url`` may be called, else why not (for a 4xx naming ``callback_url``)."""
    allowed = {h.strip().lower() for h in allowed_hosts if h.strip()}
    if not allowed:
        return "callbacks are not enabled on this judge (no host is on the callback allowlist)"
    if len(url) > MAX_URL_LENGTH:
        return f"longer than {MAX_URL_LENGTH} characters"
    try:
        scheme, host, port = _authority(url)
        parts = urlsplit(url)
    except ValueError as exc:
        return f"not a valid URL ({exc})"
    if scheme not in ("http", "https"):
        return "must be an http:// or https:// URL"
    if not host:
        return "has no host"
    if parts.username is not None or parts.password is not None:
        return "must not contain user information"
    if host in allowed or (port is not None and f"{host}:{port}" in allowed):
        return None
    return f"host {host!r} is not on the callback allowlist"


class CallbackSender:
    """Delivers callbacks on background threads. ``render`` gives the JSON body bytes of a submission."""

    def __init__(
        self,
        store: Store,
        *,
        secret: bytes,
        allowed_hosts: Iterable[str],
        render: Callable[[SubmissionRecord], bytes],
        attempts: int = 5,
        backoff_s: float = 1.0,
        timeout_s: float = 10.0,
        threads: int = 2,
    ) -> None:
        self.store = store
        self.secret = secret
        self.allowed_hosts = tuple(allowed_hosts)
        self.render = render
        self.attempts = attempts
        self.backoff_s = backoff_s
        self.timeout_s = timeout_s
        self._cond = threading.Condition()
        self._heap: list[tuple[float, int, str, int]] = []
        self._seq = 0
        self._closing = False
        self._client = httpx.Client(follow_redirects=False, timeout=timeout_s, trust_env=False)
        self._threads = [
            threading.Thread(target=self._loop, name=f"callbacks-{n}", daemon=True) for n in range(threads)
        ]

    def start(self) -> None:
        """Start delivering, beginning with the callbacks a previous run left pending."""
        for submission_id in self.store.pending_callbacks():
            done = len(self.store.callback_attempts(submission_id))
            self._push(time.monotonic(), submission_id, done + 1)
        for thread in self._threads:
            thread.start()

    def submit(self, submission_id: str) -> None:
        self._push(time.monotonic(), submission_id, 1)

    def close(self) -> None:
        with self._cond:
            self._closing = True
            self._cond.notify_all()
        for thread in self._threads:
            if thread.is_alive():
                thread.join(self.timeout_s + 1)
        self._client.close()

    def pending(self) -> int:
        with self._cond:
            return len(self._heap)

    def _push(self, due: float, submission_id: str, attempt: int) -> None:
        with self._cond:
            self._seq += 1
            heapq.heappush(self._heap, (due, self._seq, submission_id, attempt))
            self._cond.notify()

    def _next(self) -> tuple[str, int] | None:
        with self._cond:
            while not self._closing:
                now = time.monotonic()
                if self._heap and self._heap[0][0] <= now:
                    _, _, submission_id, attempt = heapq.heappop(self._heap)
                    return submission_id, attempt
                wait = self._heap[0][0] - now if self._heap else 60.0
                self._cond.wait(max(0.01, wait))
            return None

    def _loop(self) -> None:
        while (item := self._next()) is not None:
            try:
                self._deliver(*item)
            except Exception:  # the store failed: the callback stays pending until the next start
                log.exception("delivering the callback of submission %s failed", item[0])

    def _deliver(self, submission_id: str, attempt: int) -> None:
        record = self.store.get(submission_id)
        if record is None or not record.callback_url or record.callback_state is not CallbackState.PENDING:
            return
        url = record.callback_url
        refusal = callback_refusal(url, self.allowed_hosts)
        if refusal is not None:
            self.store.record_callback_attempt(submission_id, attempt, url, None, f"not sent: {refusal}")
            self.store.set_callback_state(submission_id, CallbackState.FAILED)
            return
        body = self.render(record)
        headers = {
            "Content-Type": "application/json",
            SIGNATURE_HEADER: sign(self.secret, body),
            "X-Judge-Submission": submission_id,
            "X-Judge-Delivery-Attempt": str(attempt),
            "User-Agent": "jax-judge-callback",
        }
        status: int | None = None
        error: str | None = None
        try:
            response = self._client.post(url, content=body, headers=headers)
            status = response.status_code
        except httpx.HTTPError as exc:
            error = f"{type(exc).__name__}: {exc}"[:500]
        self.store.record_callback_attempt(submission_id, attempt, url, status, error)
        if status is not None and 200 <= status < 300:
            self.store.set_callback_state(submission_id, CallbackState.DELIVERED)
            return
        retryable = status is None or status >= 500 or status in _RETRYABLE_STATUS
        if retryable and attempt < self.attempts:
            self._push(time.monotonic() + self.backoff_s * 2 ** (attempt - 1), submission_id, attempt + 1)
        else:
            self.store.set_callback_state(submission_id, CallbackState.FAILED)
