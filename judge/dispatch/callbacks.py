"""Result callbacks: POST a finished submission to its ``callback_url``, signed, retried, recorded.

Only URLs whose host is on the operator's allowlist are ever called (checked when the submission is
accepted and again before each delivery). An allowlisted host NAME is resolved at delivery, every address
it resolves to must be public (not loopback, private, link-local, reserved or multicast: DNS rebinding
must not turn an allowed name into the judge's own network), and the connection goes to that checked
address (pinned; ``Host`` and TLS's server name stay the name). An allowlisted IP address is called as
the operator wrote it.

The body is the submission as ``GET /api/v1/submissions/{id}`` returns it, less ``callback`` (the
delivery record itself). Each try is signed to the Standard Webhooks scheme (standardwebhooks.com), so a
receiver verifies it with that project's stock libraries: ``webhook-id`` (the delivery id),
``webhook-timestamp`` (Unix seconds) and ``webhook-signature: v1,<base64 HMAC-SHA256 of
"<id>.<timestamp>.<body>">``, one space-separated ``v1,`` value per secret while a secret is rotated; the
key is the secret's bytes (a ``whsec_<base64>`` secret: the bytes it encodes), and a receiver's secret is
``whsec_`` plus their base64 (``standard_secret``). The older headers, deprecated (docs/api.md says until
when), stay beside them: ``X-Judge-Timestamp`` (Unix seconds), ``X-Judge-Delivery`` (the delivery id: one
per delivery of a submission's callback, the same on every retry of it; a manual redelivery is a new
delivery with a new id) and ``X-Judge-Signature: sha256=<hex>``, the HMAC-SHA256 of
``<timestamp>.<delivery>.<body bytes>`` with the operator's secret; while a secret is rotated, one
``sha256=`` value per secret, comma-separated. A receiver (``verify``) recomputes it, refuses a timestamp
outside its tolerance window (replays of a captured callback) and drops a delivery id it has already
processed (duplicates within the window). A delivery that fails with a network error (or a URL no
request can be made to), a timeout, 408, 429 or 5xx is retried after ``backoff_s * 2**(attempt - 1)``
seconds, up to
``attempts`` tries; redirects are never followed. Every try is recorded (``Store.record_callback_attempt``)
and the submission's ``callback_state`` ends ``delivered`` or ``failed``. Pending deliveries survive a
restart: ``start`` resumes them.

A grading node without callback settings hands a finished submission's callback off (``handed_off``,
read as pending, with a try-0 note naming the node). A sender with ``poll_s`` (every API node's) looks for
such callbacks every ``poll_s`` seconds, at most ``poll_batch`` at a time and only while its own backlog
is below that, takes each with a conditional update (one API node of several gets it) and delivers it as
any other; one left unsent longer than ``handoff_max_s`` after it finished is given up (``failed``, with a
note) rather than sent that late.

Delivery is at least once, never stuck: before each try a sender leases the callback in the store for
``lease_s`` (longer than a try can take), and over the backoff before the next; a try of a callback another
live sender holds is skipped. A sender that dies mid-delivery (an API node killed while sending) leaves
a lease that passes, and the polling senders take the callback over, continuing its tries; one whose
sender died before its first try (no lease) is taken over ``lease_s`` after its submission finished. The
receiver may then see a delivery id twice (the dead sender's try may have arrived): it drops the
duplicate by ``X-Judge-Delivery``, as for any retry.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import heapq
import hmac
import ipaddress
import logging
import os
import secrets as token
import socket
import threading
import time
import uuid
from collections.abc import Callable, Iterable, Sequence
from datetime import UTC, datetime
from urllib.parse import urlsplit, urlunsplit

import httpx

from judge.store import CallbackState, Store, SubmissionRecord

log = logging.getLogger(__name__)

#: The Standard Webhooks headers (https://www.standardwebhooks.com).
WEBHOOK_ID_HEADER = "webhook-id"
WEBHOOK_TIMESTAMP_HEADER = "webhook-timestamp"
WEBHOOK_SIGNATURE_HEADER = "webhook-signature"
#: The prefix of a Standard Webhooks secret: ``whsec_`` and the key's bytes in base64.
SECRET_PREFIX = "whsec_"
#: Deprecated headers (the judge's own scheme before Standard Webhooks), sent beside the standard ones.
SIGNATURE_HEADER = "X-Judge-Signature"
TIMESTAMP_HEADER = "X-Judge-Timestamp"
DELIVERY_HEADER = "X-Judge-Delivery"
#: Seconds a receiver accepts a callback's timestamp off its own clock (``verify``'s default).
TOLERANCE_S = 300
_RETRYABLE_STATUS = frozenset({408, 425, 429})
MAX_URL_LENGTH = 2048
#: What a ``callback_url`` looks like before any check of its parts (the schema's ``pattern``): http or
#: https, then printable ASCII only (no control character, space, DEL or non-ASCII).
URL_PATTERN = r"^[Hh][Tt][Tt][Pp][Ss]?://[!-~]+$"
#: Seconds after its submission finished that a handed-off callback is still sent (then given up).
HANDOFF_MAX_S = 24 * 3600.0
_DELIVERY_NAMESPACE = uuid.UUID("6f1c1b0e-8a55-4a49-9d3f-2f3f0d6c5a11")

Resolver = Callable[[str, int], list[str]]


def lease_for(timeout_s: float) -> float:
    """Seconds a sender holds a callback for one try: well past the try's own timeout (connect and read
    each get ``timeout_s``), at least a minute."""
    return max(60.0, 4 * timeout_s)


def delivery_id(submission_id: str, delivery: int = 0) -> str:
    """The id of a submission's ``delivery``-th callback delivery (0: the one its grading sends, then 1,
    2, ... for each manual redelivery): the same on every try of that delivery, so a receiver can drop
    duplicates, and another for each delivery, so it does not drop a redelivery."""
    name = f"{submission_id}/result" if delivery == 0 else f"{submission_id}/result/{delivery}"
    return str(uuid.uuid5(_DELIVERY_NAMESPACE, name))


def deliveries_before(attempts: Sequence[int], attempt: int) -> int:
    """Which delivery a try of number ``attempt`` belongs to, from the try numbers recorded so far (in
    order): every delivery starts at try 1, so a first try starts delivery ``<tries numbered 1 so far>``
    and a later try is of the last delivery started."""
    started = sum(1 for n in attempts if n == 1)
    return started if attempt == 1 else max(0, started - 1)


def signing_key(secret: bytes) -> bytes:
    """The Standard Webhooks key of a callback secret: the bytes a ``whsec_<base64>`` secret encodes,
    else the secret's own bytes."""
    if secret.startswith(SECRET_PREFIX.encode()):
        try:
            return base64.b64decode(secret[len(SECRET_PREFIX) :], validate=True)
        except (binascii.Error, ValueError):
            return secret
    return secret


def standard_secret(secret: bytes) -> str:
    """The ``whsec_...`` secret a receiver gives a Standard Webhooks library for a callback secret."""
    return SECRET_PREFIX + base64.b64encode(signing_key(secret)).decode("ascii")


def standard_signature(secrets: Sequence[bytes], body: bytes, *, timestamp: int, delivery: str) -> str:
    """The ``webhook-signature`` value: ``v1,<base64 HMAC-SHA256 of "<id>.<timestamp>.<body>">`` per
    secret (two while a secret is rotated), space-separated, as the Standard Webhooks scheme defines."""
    signed = f"{delivery}.{timestamp}.".encode() + body
    return " ".join(
        "v1," + base64.b64encode(hmac.new(signing_key(s), signed, hashlib.sha256).digest()).decode("ascii")
        for s in secrets
    )


def _signed(timestamp: int, delivery: str, body: bytes) -> bytes:
    return f"{timestamp}.{delivery}.".encode() + body


def sign(secret: bytes, body: bytes, *, timestamp: int, delivery: str) -> str:
    """One signature: ``sha256=<hex HMAC-SHA256 of "<timestamp>.<delivery>.<body>">``."""
    return "sha256=" + hmac.new(secret, _signed(timestamp, delivery, body), hashlib.sha256).hexdigest()


def signature_header(secrets: Sequence[bytes], body: bytes, *, timestamp: int, delivery: str) -> str:
    """The header's value: one signature per secret (two while a secret is rotated), comma-separated."""
    return ", ".join(sign(s, body, timestamp=timestamp, delivery=delivery) for s in secrets)


def verify(
    secret: bytes,
    body: bytes,
    header: str,
    *,
    timestamp: str,
    delivery: str,
    tolerance_s: float = TOLERANCE_S,
    now: float | None = None,
) -> bool:
    """What a receiver does with the three headers: the timestamp must be within ``tolerance_s`` of its
    clock, and one of the header's signatures must match ``secret`` (constant-time compare). It must then
    also drop a ``delivery`` id it has processed before (kept for the tolerance window)."""
    try:
        stamp = int(timestamp)
    except ValueError:
        return False
    if abs((time.time() if now is None else now) - stamp) > tolerance_s:
        return False
    expected = sign(secret, body, timestamp=stamp, delivery=delivery)
    return any(hmac.compare_digest(expected, part.strip()) for part in header.split(","))


def _public(address: str) -> bool:
    ip = ipaddress.ip_address(address.split("%", 1)[0])
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    return ip.is_global and not ip.is_multicast


def resolve(host: str, port: int) -> list[str]:
    """Every address ``host`` resolves to now (TCP)."""
    infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    return list(dict.fromkeys(str(info[4][0]) for info in infos))


def _is_ip(host: str) -> bool:
    try:
        ipaddress.ip_address(host)
    except ValueError:
        return False
    return True


def pinned_target(url: str, resolver: Resolver = resolve) -> tuple[str, str | None, str | None]:
    """(URL to connect to, Host header, TLS server name) for a callback, or raises ValueError naming why
    not. An IP literal is used as written; a name is resolved once, all its addresses must be public, and
    the URL is rewritten to the first, so the connection cannot go anywhere the check did not see."""
    parts = urlsplit(url)
    host = (parts.hostname or "").lower()
    if _is_ip(host):
        return url, None, None
    port = parts.port or (443 if parts.scheme == "https" else 80)
    try:
        addresses = resolver(host, port)
    except OSError as exc:
        raise ValueError(f"{host!r} does not resolve ({exc})") from None
    if not addresses:
        raise ValueError(f"{host!r} does not resolve")
    blocked = [a for a in addresses if not _public(a)]
    if blocked:
        raise ValueError(f"{host!r} resolves to a non-public address ({blocked[0]})")
    ip = addresses[0]
    shown = f"[{ip}]" if ":" in ip else ip
    netloc = f"{shown}:{parts.port}" if parts.port else shown
    host_header = parts.netloc.rsplit("@", 1)[-1]
    target = urlunsplit((parts.scheme, netloc, parts.path or "/", parts.query, ""))
    return target, host_header, host if parts.scheme == "https" else None


def _authority(url: str) -> tuple[str, str, int | None]:
    parts = urlsplit(url)
    return parts.scheme, (parts.hostname or "").lower(), parts.port


def url_character_refusal(url: str) -> str | None:
    """Why ``url`` holds a character no URL may hold raw (a control character, a space, DEL or any
    non-ASCII: RFC 3986 has them percent-encoded), naming it and its position (0-based), or None."""
    for position, char in enumerate(url):
        if ord(char) < 0x21 or ord(char) == 0x7F:
            return f"control character or space U+{ord(char):04X} at position {position}"
        if ord(char) > 0x7E:
            return f"non-ASCII character U+{ord(char):04X} at position {position} (percent-encode it)"
    return None


def callback_refusal(url: str, allowed_hosts: Iterable[str]) -> str | None:
    """None when ``url`` may be called, else why not (for a 4xx naming ``callback_url``)."""
    allowed = {h.strip().lower() for h in allowed_hosts if h.strip()}
    if not allowed:
        return "callbacks are not enabled on this judge (no host is on the callback allowlist)"
    if len(url) > MAX_URL_LENGTH:
        return f"longer than {MAX_URL_LENGTH} characters"
    bad = url_character_refusal(url)
    if bad is not None:
        return bad
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
        previous_secret: bytes | None = None,
        allowed_hosts: Iterable[str],
        render: Callable[[SubmissionRecord], bytes],
        attempts: int = 5,
        backoff_s: float = 1.0,
        timeout_s: float = 10.0,
        threads: int = 2,
        resolver: Resolver = resolve,
        on_failure: Callable[[bool], None] | None = None,
        poll_s: float | None = None,
        poll_batch: int = 100,
        handoff_max_s: float = HANDOFF_MAX_S,
        lease_s: float | None = None,
        name: str | None = None,
    ) -> None:
        """``on_failure(final)``: called for each failed try (final: the callback was given up on).
        ``poll_s``: look for callbacks handed off by grading nodes without callback settings, or left by
        a sender that died, this often (None: never; the API nodes' senders poll). ``lease_s``: how long
        this sender holds a callback for a try (default ``lease_for(timeout_s)``); ``name``: who holds
        it (unique per process by default)."""
        self.on_failure = on_failure
        self.lease_s = lease_for(timeout_s) if lease_s is None else lease_s
        self.name = name or f"{socket.gethostname()[:120]}-{os.getpid()}-{token.token_hex(4)}"
        #: Callbacks this sender has queued or is delivering (a poll does not take them twice).
        self._held: set[str] = set()
        self.poll_s = poll_s
        self.poll_batch = poll_batch
        self.handoff_max_s = handoff_max_s
        self._stopping = threading.Event()
        self._poller: threading.Thread | None = None
        self.store = store
        self.secret = secret
        self.secrets = [secret] if not previous_secret else [secret, previous_secret]
        self.resolver = resolver
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

    def start(self, *, resume: bool = True) -> None:
        """Start delivering, beginning (``resume``) with the callbacks a previous run left pending; with
        ``poll_s``, also poll for handed-off ones."""
        for submission_id in self.store.callbacks.pending() if resume else ():
            done = sum(1 for attempt in self.store.callbacks.attempts(submission_id) if attempt[0] >= 1)
            self._push(time.monotonic(), submission_id, done + 1)
        for thread in self._threads:
            thread.start()
        if self.poll_s is not None:
            self._poller = threading.Thread(target=self._poll_loop, name="callbacks-poll", daemon=True)
            self._poller.start()

    def _poll_loop(self) -> None:
        assert self.poll_s is not None
        while not self._stopping.is_set():
            try:
                self.poll()
            except Exception:  # the store failed: try again at the next poll
                log.exception("looking for handed-off callbacks failed")
            self._stopping.wait(self.poll_s)

    def poll(self) -> int:
        """Take the callbacks grading nodes without callback settings handed off (at most
        ``poll_batch``, none while this sender's own backlog is that long) and queue them for delivery;
        give up those older than ``handoff_max_s``. Returns how many were taken."""
        room = self.poll_batch - self.pending()
        if room <= 0:
            return 0
        taken = 0
        now = datetime.now(UTC)
        for submission_id, finished_at in self.store.callbacks.handed_off(room, self.lease_s):
            if self._stopping.is_set() or self.holds(submission_id):
                continue  # closing, or already queued here (not yet tried)
            if not self.store.callbacks.take(submission_id, self.name, self.lease_s, self.lease_s):
                continue  # another API node took it
            taken += 1
            age = (now - finished_at).total_seconds() if finished_at is not None else 0.0
            if age > self.handoff_max_s:
                record = self.store.submissions.get(submission_id)
                url = record.callback_url if record is not None and record.callback_url else ""
                note = (
                    f"not sent: left unsent {age:.0f} s after it finished (at most {self.handoff_max_s:g} s)"
                )
                self.store.callbacks.record_attempt(submission_id, 0, url, None, note)
                self.store.callbacks.set_state(submission_id, CallbackState.FAILED)
                self._failed(True)
                continue
            # Handed off (its last record is the grading node's try-0 note): a delivery of its own, from
            # try 1, so a regrade's callback handed off after an earlier delivery gets a new delivery id;
            # taken over from a sender that died: on from its last try.
            recorded = [attempt[0] for attempt in self.store.callbacks.attempts(submission_id)]
            if recorded and recorded[-1] == 0:
                self._push(time.monotonic(), submission_id, 1)
            else:
                self._push(time.monotonic(), submission_id, sum(1 for n in recorded if n >= 1) + 1)
        return taken

    def holds(self, submission_id: str) -> bool:
        """Whether this sender has the callback queued or is delivering it."""
        with self._cond:
            return submission_id in self._held

    def submit(self, submission_id: str) -> None:
        self._push(time.monotonic(), submission_id, 1)

    def close(self) -> None:
        self._stopping.set()
        with self._cond:
            self._closing = True
            self._cond.notify_all()
        if self._poller is not None and self._poller.is_alive():
            self._poller.join(self.timeout_s + 1)
        for thread in self._threads:
            if thread.is_alive():
                thread.join(self.timeout_s + 1)
        self._client.close()
        with self._cond:
            held = list(self._held)
        try:  # what it still holds may be sent by another sender (or by it after a restart) at once
            self.store.callbacks.release_leases(self.name, held)
        except Exception:
            log.exception("releasing the callbacks this sender held failed")

    def pending(self) -> int:
        with self._cond:
            return len(self._heap)

    def _push(self, due: float, submission_id: str, attempt: int) -> None:
        with self._cond:
            self._seq += 1
            heapq.heappush(self._heap, (due, self._seq, submission_id, attempt))
            self._held.add(submission_id)
            self._cond.notify()

    def _release(self, submission_id: str) -> None:
        with self._cond:
            if all(entry[2] != submission_id for entry in self._heap):
                self._held.discard(submission_id)

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
            except Exception:  # the store failed: the callback stays pending; once its lease has
                # passed, a polling sender takes it over
                log.exception("delivering the callback of submission %s failed", item[0])
            finally:
                self._release(item[0])

    def _deliver(self, submission_id: str, attempt: int) -> None:
        record = self.store.submissions.get(submission_id)
        if record is None or not record.callback_url or record.callback_state is not CallbackState.PENDING:
            return
        if not self.store.callbacks.lease(submission_id, self.name, self.lease_s):
            log.info("submission %s: its callback is being sent by another sender", submission_id)
            return
        url = record.callback_url
        refusal = callback_refusal(url, self.allowed_hosts)
        if refusal is not None:
            self.store.callbacks.record_attempt(submission_id, attempt, url, None, f"not sent: {refusal}")
            self.store.callbacks.set_state(submission_id, CallbackState.FAILED)
            self._failed(True)
            return
        body = self.render(record)
        recorded = [n for n, *_ in self.store.callbacks.attempts(submission_id)]
        timestamp = int(time.time())
        delivery = delivery_id(submission_id, deliveries_before(recorded, attempt))
        headers = {
            "Content-Type": "application/json",
            WEBHOOK_ID_HEADER: delivery,
            WEBHOOK_TIMESTAMP_HEADER: str(timestamp),
            WEBHOOK_SIGNATURE_HEADER: standard_signature(
                self.secrets, body, timestamp=timestamp, delivery=delivery
            ),
            SIGNATURE_HEADER: signature_header(self.secrets, body, timestamp=timestamp, delivery=delivery),
            TIMESTAMP_HEADER: str(timestamp),
            DELIVERY_HEADER: delivery,
            "X-Judge-Submission": submission_id,
            "X-Judge-Delivery-Attempt": str(attempt),
            "User-Agent": "jax-judge-callback",
        }
        status: int | None = None
        error: str | None = None
        try:
            target, host_header, server_name = pinned_target(url, self.resolver)
        except Exception as exc:  # the name resolves nowhere, or somewhere private, or cannot even be
            # looked up (a label past 63 characters): a failed try like a network error
            target, error = "", f"not sent: {exc}"[:500]
        if not error:
            if host_header is not None:
                headers["Host"] = host_header
            extensions = {"sni_hostname": server_name} if server_name else None
            try:
                response = self._client.post(target, content=body, headers=headers, extensions=extensions)
                status = response.status_code
            except Exception as exc:
                # HTTPError, a bad port a ValueError; each is a failed try, recorded and retried as one
                error = f"{type(exc).__name__}: {exc}"[:500]
        self.store.callbacks.record_attempt(submission_id, attempt, url, status, error)
        if status is not None and 200 <= status < 300:
            self.store.callbacks.set_state(submission_id, CallbackState.DELIVERED)
            return
        retryable = status is None or status >= 500 or status in _RETRYABLE_STATUS
        if retryable and attempt < self.attempts:
            wait = self.backoff_s * 2 ** (attempt - 1)
            # Held over the wait too; lost meanwhile (this sender stalled past its lease): the taker
            # goes on with it.
            if self.store.callbacks.lease(submission_id, self.name, wait + self.lease_s):
                self._push(time.monotonic() + wait, submission_id, attempt + 1)
            self._failed(False)
        else:
            self.store.callbacks.set_state(submission_id, CallbackState.FAILED)
            self._failed(True)

    def redeliver(self, submission_id: str) -> bool:
        """Deliver again from the first try, as a new delivery (a new delivery id; the submission's state
        was set back to pending). False, doing nothing, while this sender holds it already."""
        if self.holds(submission_id):
            return False
        self._push(time.monotonic(), submission_id, 1)
        return True

    def _failed(self, final: bool) -> None:
        if self.on_failure is not None:
            try:
                self.on_failure(final)
            except Exception:  # metrics never break delivery
                log.exception("the callback failure hook failed")
