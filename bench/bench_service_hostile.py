"""The service under hostile load, side by side with the same load alone, in one run (loopback only).

A real ``judge serve`` (real sandbox) serves 16 clients, each with its own API key, each looping a Run
of the public examples and a submission (POSTed, not waited for). The same workload runs three times:

  quiet     the 16 clients alone
  hostile   the 16 clients plus 200 event streams (each following an unfinished submission, then the
            next) and 1,000 slow connections (half-sent request headers, reopened when the server's
            header timeout closes them), all at once
  quiet     the 16 clients alone again (the baseline is both quiet rounds: drift hits both sides)

Printed: Run p50/p95 per round and the ratio hostile p95 / quiet p95 (target <= 1.5), the streams and
slow connections actually held, and over everything: submissions lost (accepted but never finished),
duplicated (graded more than once, or more than one final event), 5xx answers, and 429s (allowed).

    .venv/bin/python bench/bench_service_hostile.py [--per-client 6] [--streams 200] [--slow 1000]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import resource
import selectors
import socket
import sys
import tempfile
import threading
import time
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from bench_service import SOLUTIONS, Server, Tally, pct  # noqa: E402

from judge.service.apikeys import generate_key, hash_key  # noqa: E402

CLIENTS = 16
#: Loopback source addresses: client k (and the streams that follow its submissions) connects from
#: 127.0.0.(10+k); the slow connections come from SLOW_ADDRESSES, so the per-address connection limit
#: meets them as it would meet a few hostile hosts.
SLOW_ADDRESSES = [f"127.0.1.{n}" for n in range(1, 6)]


def source(k: int) -> str:
    return f"127.0.0.{10 + k}"


def http_client(url: str, key: str, k: int, timeout: httpx.Timeout | float) -> httpx.Client:
    return httpx.Client(
        base_url=url,
        timeout=timeout,
        headers={"Authorization": f"Bearer {key}"},
        transport=httpx.HTTPTransport(local_address=source(k)),
    )


class Submissions:
    """Every accepted submission id with the client (key index) that made it, and which are not known to
    be finished yet (what the streams follow: a submission is visible to its own key only)."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.owner: dict[str, int] = {}
        self.unfinished: dict[int, list[str]] = {}
        self.turn = 0

    @property
    def accepted(self) -> list[str]:
        with self.lock:
            return list(self.owner)

    def add(self, sid: str, k: int) -> None:
        with self.lock:
            self.owner[sid] = k
            self.unfinished.setdefault(k, []).append(sid)

    def follow(self, k: int) -> str | None:
        with self.lock:
            ids = self.unfinished.get(k)
            if not ids:
                return None
            self.turn += 1
            return ids[self.turn % len(ids)]

    def finished(self, sid: str) -> None:
        with self.lock, contextlib.suppress(ValueError, KeyError):
            self.unfinished[self.owner[sid]].remove(sid)


def client_loop(
    url: str,
    key: str,
    slug: str,
    code: str,
    k: int,
    rnd: str,
    per_client: int,
    tally: Tally,
    runs: list[float],
    subs: Submissions,
) -> None:
    with http_client(url, key, k, 180) as client:
        for j in range(per_client):
            started = time.perf_counter()
            response = client.post(f"/api/problems/{slug}/run", json={"code": code})
            tally.add(response.status_code)
            if response.status_code == 200:
                runs.append(time.perf_counter() - started)
            body = {"problem": slug, "code": f"{code}\n# {rnd} client {k} submission {j}\n"}
            while True:
                response = client.post("/api/submissions", json=body)
                tally.add(response.status_code)
                if response.status_code != 429:
                    break
                time.sleep(float(response.headers.get("retry-after", "1")))
            if response.status_code == 202:
                subs.add(response.json()["id"], k)


def stream_loop(
    url: str,
    key: str,
    k: int,
    stop: threading.Event,
    tally: Tally,
    subs: Submissions,
    open_now: list[int],
    ended: list[int],
) -> None:
    """Follow client ``k``'s unfinished submissions, one stream after another, until ``stop``."""
    with http_client(url, key, k, httpx.Timeout(30, read=120)) as client:
        while not stop.is_set():
            sid = subs.follow(k)
            if sid is None:
                stop.wait(0.5)
                continue
            try:
                with client.stream("GET", f"/api/submissions/{sid}/events") as response:
                    tally.add(response.status_code)
                    if response.status_code != 200:
                        stop.wait(1)
                        continue
                    open_now[0] += 1
                    try:
                        final = False
                        for line in response.iter_lines():
                            if line.startswith("event: ") and line[7:] in ("result", "failed"):
                                final = True
                            if stop.is_set():
                                break
                        if final:
                            ended[0] += 1
                            subs.finished(sid)
                    finally:
                        open_now[0] -= 1
            except httpx.HTTPError:
                stop.wait(0.5)


def slow_loop(url: str, count: int, stop: threading.Event, held: list[int], opened: list[int]) -> None:
    """Keep trying to hold ``count`` connections, spread over SLOW_ADDRESSES, each sending a request line
    and one header, then a byte now and then. Each one the server closes (its header timeout, or a
    connection limit) is opened again a second later. ``held``: connections open for over a second."""
    host, port = url.removeprefix("http://").split(":")
    selector = selectors.DefaultSelector()
    socks: dict[socket.socket, float] = {}
    due: list[float] = []

    def open_one() -> None:
        sock = socket.socket()
        sock.bind((SLOW_ADDRESSES[opened[0] % len(SLOW_ADDRESSES)], 0))
        sock.setblocking(False)
        with contextlib.suppress(BlockingIOError):
            sock.connect((host, int(port)))
        socks[sock] = time.monotonic()
        selector.register(sock, selectors.EVENT_READ | selectors.EVENT_WRITE, "new")
        opened[0] += 1

    def close(sock: socket.socket) -> None:
        selector.unregister(sock)
        del socks[sock]
        sock.close()
        due.append(time.monotonic() + 1.0)

    for _ in range(count):
        open_one()
    last_drip = time.monotonic()
    while not stop.is_set():
        for item, events in selector.select(timeout=0.2):
            sock = item.fileobj
            assert isinstance(sock, socket.socket)
            if item.data == "new" and events & selectors.EVENT_WRITE:
                try:
                    sock.send(b"GET /api/problems HTTP/1.1\r\nHost: judge\r\n")
                    selector.modify(sock, selectors.EVENT_READ, "sent")
                except OSError:
                    close(sock)
            elif events & selectors.EVENT_READ:
                try:
                    data = sock.recv(4096)
                except OSError:
                    data = b""
                if not data:
                    close(sock)
        now = time.monotonic()
        while due and due[0] <= now:
            due.pop(0)
            open_one()
        if now - last_drip > 2:
            last_drip = now
            for sock in list(socks):
                with contextlib.suppress(OSError):
                    sock.send(b"X")  # a byte of a header that never ends
        held[0] = sum(now - since > 1.0 for since in socks.values())
    for sock in socks:
        sock.close()
    selector.close()


def one_round(
    url: str,
    keys: list[str],
    slug: str,
    code: str,
    rnd: str,
    per_client: int,
    tally: Tally,
    subs: Submissions,
) -> list[float]:
    runs: list[float] = []
    threads = [
        threading.Thread(
            target=client_loop,
            args=(url, keys[k], slug, code, k, rnd, per_client, tally, runs, subs),
        )
        for k in range(CLIENTS)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return runs


def check_all(url: str, keys: list[str], subs: Submissions) -> tuple[int, int]:
    """(lost, duplicated) over every accepted submission: lost when not done, duplicated when graded
    more than once or its stream holds more than one final event."""
    lost = duplicated = 0
    for sid in subs.accepted:
        k = subs.owner[sid]
        with http_client(url, keys[k], k, 30) as client:
            body = client.get(f"/api/submissions/{sid}").json()
            events = client.get(f"/api/submissions/{sid}/events").text
        if body.get("status") != "done":
            lost += 1
            continue
        finals = sum(line in ("event: result", "event: failed") for line in events.splitlines())
        if body.get("attempts") != 1 or finals != 1:
            duplicated += 1
    return lost, duplicated


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--per-client", type=int, default=6, help="Runs and submissions per client per round")
    parser.add_argument("--streams", type=int, default=200)
    parser.add_argument("--slow", type=int, default=1000)
    parser.add_argument("--problem", default="global-norm-clipping", choices=sorted(SOLUTIONS))
    parser.add_argument("--log", type=Path, help="copy the server's log here at the end")
    args = parser.parse_args()
    _, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))  # this process holds the slow connections
    slug, code = args.problem, (ROOT / SOLUTIONS[args.problem]).read_text()
    client_keys = [generate_key() for _ in range(CLIENTS)]
    hashes = {f"client{k}": hash_key(key) for k, key in enumerate(client_keys)}
    tally = Tally()
    subs = Submissions()
    with tempfile.TemporaryDirectory(prefix="judge-bench-hostile-") as scratch:
        server = Server(
            Path(scratch),
            {
                "JUDGE_API_KEYS": json.dumps(hashes),
                "JUDGE_RATE_LIMIT": "1000000/minute",
                "JUDGE_QUEUE_SIZE": "1000",
                "JUDGE_SANDBOX_SLOT_BASE": "100",
            },
        )
        try:
            server.wait_ready(300)
            url = server.url
            print(
                f"judge serve at {url}; {CLIENTS} clients x {args.per_client} Runs and submissions per round"
            )
            rounds: dict[str, list[float]] = {}
            held_streams: list[int] = []
            held_slow: list[int] = []
            ended = [0]
            opened_slow = [0]
            for rnd in ("quiet-1", "hostile", "quiet-2"):
                stop = threading.Event()
                extra: list[threading.Thread] = []
                open_now, slow_held = [0], [0]
                if rnd == "hostile":
                    # Queue the submissions first, so the streams have unfinished ones to follow.
                    extra = [
                        threading.Thread(
                            target=stream_loop,
                            args=(
                                url,
                                client_keys[i % CLIENTS],
                                i % CLIENTS,
                                stop,
                                tally,
                                subs,
                                open_now,
                                ended,
                            ),
                            daemon=True,
                        )
                        for i in range(args.streams)
                    ]
                    extra.append(
                        threading.Thread(
                            target=slow_loop, args=(url, args.slow, stop, slow_held, opened_slow), daemon=True
                        )
                    )
                    for t in extra:
                        t.start()
                    time.sleep(3)  # let the slow connections and streams open before the clients start
                sampler_stop = threading.Event()

                def sample(
                    open_now: list[int] = open_now,
                    slow_held: list[int] = slow_held,
                    sampler_stop: threading.Event = sampler_stop,
                ) -> None:
                    while not sampler_stop.wait(1):
                        held_streams.append(open_now[0])
                        held_slow.append(slow_held[0])

                sampler = threading.Thread(target=sample, daemon=True)
                if rnd == "hostile":
                    sampler.start()
                started = time.perf_counter()
                rounds[rnd] = one_round(url, client_keys, slug, code, rnd, args.per_client, tally, subs)
                took = time.perf_counter() - started
                stop.set()
                sampler_stop.set()
                for t in extra:
                    t.join(30)
                print(
                    f"  {rnd:<8} Runs {len(rounds[rnd]):3d}  p50 {pct(rounds[rnd], 0.5) * 1000:7.1f} ms  "
                    f"p95 {pct(rounds[rnd], 0.95) * 1000:7.1f} ms  ({took:.0f} s)"
                )
                # Drain the queue before the next round, so each round starts from an idle judge.
                wait_idle(url, 600)
            lost, duplicated = check_all(url, client_keys, subs)
        finally:
            server.stop()
            if args.log is not None:
                args.log.write_bytes(server.log.read_bytes())
    quiet = rounds["quiet-1"] + rounds["quiet-2"]
    ratio = pct(rounds["hostile"], 0.95) / pct(quiet, 0.95)
    print("\n== Run p95 under hostile load vs quiet")
    print(
        f"  quiet   p95 {pct(quiet, 0.95) * 1000:7.1f} ms   "
        f"hostile p95 {pct(rounds['hostile'], 0.95) * 1000:7.1f} ms"
    )
    print(
        f"  ratio hostile/quiet p95: {ratio:.2f}  ({'meets' if ratio <= 1.5 else 'MISSES'} the target <= 1.5)"
    )
    print(f"  ratio hostile/quiet p50: {pct(rounds['hostile'], 0.5) / pct(quiet, 0.5):.2f}")
    streams_held = sorted(held_streams)
    print(
        f"  event streams held: median {median(streams_held):.0f}, "
        f"max {max(streams_held, default=0)} of {args.streams}; {ended[0]} ended with their final event"
    )
    print(
        f"  slow connections held: median {median(held_slow):.0f} of {args.slow}; "
        f"{opened_slow[0]} opened in all (the header timeout and the connection limits closed the rest)"
    )
    fives = sum(n for s, n in tally.statuses.items() if s >= 500)
    print("\n== Integrity over all rounds")
    print(f"  submissions accepted {len(subs.accepted)}, lost {lost}, duplicated {duplicated}")
    print(f"  5xx answers {fives}; answers by status {dict(sorted(tally.statuses.items()))}")
    ok = lost == 0 and duplicated == 0 and fives == 0 and ratio <= 1.5
    print(f"\n{'PASS' if ok else 'FAIL'}")
    return 0 if ok else 1


def median(values: list[int]) -> float:
    return float(sorted(values)[len(values) // 2]) if values else 0.0


def wait_idle(url: str, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        text = httpx.get(f"{url}/metrics", timeout=30).text
        values = {
            line.split()[0]: float(line.split()[1])
            for line in text.splitlines()
            if line.startswith(("judge_queue_depth ", "judge_gradings_running "))
        }
        if values.get("judge_queue_depth", 1) == 0 and values.get("judge_gradings_running", 1) == 0:
            return
        time.sleep(0.5)


if __name__ == "__main__":
    raise SystemExit(main())
