"""A fake sandboxed program for the monitor's tests: it speaks (or abuses) the protocol, without JAX.

    python tests/fake_worker.py ROLE SCENARIO --result-fd N

ROLE is ``tracer`` or ``executor``. A well-behaved fake tracer answers every step with a program whose
skeleton is ``{"out": 0}``; a well-behaved fake executor compiles everything and returns the case's first
input leaf as the output. SCENARIO names a misbehaviour (see ``TRACER`` and ``EXECUTOR`` below).
"""

from __future__ import annotations

import json
import os
import struct
import sys
import threading
import time
from typing import Any

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from sandbox.shared.wire import (
    Blobs,
    FrameLimits,
    decode_leaves,
    encode_frame,
    encode_leaf,
    read_frame,
)

LIMITS = FrameLimits(max_frame=1 << 28, max_json=1 << 26, max_json_depth=400)


def raw_frame(json_text: bytes, blobs: bytes = b"") -> bytes:
    return struct.pack(">II", 4 + len(json_text) + len(blobs), len(json_text)) + json_text + blobs


_SEND = threading.Lock()


def send(fd: int, data: bytes) -> None:
    with _SEND:  # whole frames, also from a timer thread
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]


def program(sig: int, **extra: Any) -> bytes:
    return encode_frame(
        {"type": "program", "sig": sig, "skeleton": {"out": 0}, "module": 0, **extra}, [b"module"]
    )


def tracer(fd: int, scenario: str) -> None:
    stdin = os.fdopen(0, "rb", buffering=0)
    job = read_frame(stdin, LIMITS).message
    if scenario == "deep_frame":
        send(fd, raw_frame(b"{" + b'"a":[' * 100_000 + b"1" + b"]" * 100_000 + b', "type": "loaded"}'))
    elif scenario == "huge_int_timing":
        send(fd, encode_frame({"type": "loaded"}))
        send(
            fd,
            raw_frame(
                b'{"type":"program","sig":0,"skeleton":{"out":0},"module":0,"trace_ms":'
                + b"9" * 400
                + b',"blobs":[1]}',
                b"m",
            ),
        )
    elif scenario == "nan_timing":
        send(fd, encode_frame({"type": "loaded"}))
        send(
            fd,
            raw_frame(
                b'{"type":"program","sig":0,"skeleton":{"out":0},"module":0,"trace_ms":NaN,"blobs":[1]}', b"m"
            ),
        )
    elif scenario == "forged_progress":
        send(fd, encode_frame({"type": "loaded"}))
        while True:  # "still working": none of these is the step the judge waits for
            send(fd, encode_frame({"type": "loaded"}))
            time.sleep(0.01)
    elif scenario == "flood":
        big = program(0) + encode_frame({"type": "program", "sig": 0, "module": 0}, [b"x" * (1000 * 1024)])
        send(fd, encode_frame({"type": "loaded"}))
        for _ in range(100):
            send(fd, big)
    elif scenario == "spin_garbage":
        chunk = b"\x00\x00\x00\x10" + b"z" * 65532
        while True:
            send(fd, chunk)
    elif scenario == "spin_output":
        send(fd, encode_frame({"type": "loaded"}))
        chunk = b"y" * 65536
        while True:
            os.write(1, chunk)
    elif scenario == "silent":
        time.sleep(3600)
    else:  # "good", the output scenarios below, and every executor scenario
        send(fd, encode_frame({"type": "loaded"}))
        for sig in job["signatures"]:
            send(fd, program(sig["id"]))
        # Public prints, then the judge's output mark (as the real tracer writes it), then public_done.
        mark = str(job.get("output_mark") or "").encode()
        if scenario == "late_output":  # a relay that delivers the prints after a frame written later
            send(fd, encode_frame({"type": "public_done"}))
            time.sleep(0.5)
            send(1, b"public print\n" + mark)
        elif scenario == "no_mark":  # the tracer's fd 1 was closed or redirected: no mark comes
            send(1, b"public print\n")
            send(fd, encode_frame({"type": "public_done"}))
        elif scenario == "big_output":  # more public output than the judge keeps
            send(1, b"p" * 100_000 + mark)
            send(fd, encode_frame({"type": "public_done"}))
        elif scenario == "forged_mark":  # the mark written early, by the submission: its later prints hide
            send(1, b"public print\n" + mark + b"public print after the forged mark\n" + mark)
            send(fd, encode_frame({"type": "public_done"}))
        else:
            send(1, b"public print\n" + mark)
            send(fd, encode_frame({"type": "public_done"}))
        more = read_frame(stdin, LIMITS).message
        send(1, b"hidden print\n")
        for sig in more.get("signatures", []):
            send(fd, program(sig["id"]))
        if more.get("retrace") is not None:
            send(
                fd,
                encode_frame(
                    {"type": "retrace", "sig": more["retrace"], "skeleton": {"out": 0}, "module": 0},
                    # Other bytes than the first trace's program (a stateful function's): compiled and run.
                    [b"module" if scenario == "stateless" else b"module traced again"],
                ),
            )
        send(fd, encode_frame({"type": "done"}))
        if scenario == "linger":  # user code still alive after done (a thread, a forked child), watching
            time.sleep(30)
    time.sleep(0.2)


def executor(fd: int, scenario: str) -> None:
    stdin = os.fdopen(0, "rb", buffering=0)
    #: ``leaky``: every value this process was ever given, returned with each result (the worst a kernel
    #: bug that hands out stale buffers could do); ``slow_first``: program 0 compiles slowly, so a later one
    #: (a hidden signature's) is ready first.
    held: list[Any] = []
    while True:
        try:
            frame = read_frame(stdin, LIMITS)
        except EOFError:
            return
        kind = frame.type
        if kind == "begin":
            if scenario == "junk_unasked":
                send(fd, b"\x00\x00\x00\x05hello")
            continue
        if kind == "program":
            if scenario == "slow_compile":
                time.sleep(1.2)
            reply = encode_frame(
                {
                    "type": "compiled",
                    "id": frame.message["id"],
                    "summary": {},
                    "compile_ms": 1.0,
                    "key": str(frame.message["id"]),
                }
            )
            if scenario.endswith("slow_first") and frame.message["id"] == 0:
                # Compiled on a thread of its own, as the real executor does: later requests go on.
                threading.Timer(1.2, send, (fd, reply)).start()
                continue
            send(fd, reply)
        elif kind == "run":
            case = frame.message["case"]
            if scenario in ("huge_shape", "big_dim"):
                dim = 10**30 if scenario == "huge_shape" else 2**40
                leaf = {"leaf": {"dtype": "float32", "shape": [0, dim], "blob": 0}}
                send(
                    fd,
                    encode_frame({"type": "result", "case": case, "outputs": [leaf], "run_ms": 1.0}, [b""]),
                )
                continue
            if scenario == "huge_int_timing":
                text = b'{"type":"result","case":%d,"outputs":[],"run_ms":%s}' % (case, b"9" * 400)
                send(fd, raw_frame(text))
                continue
            if scenario == "hang":
                time.sleep(3600)
            if scenario in ("busy_600ms", "spin"):
                # A run that needs 0.6 s of CPU (or never ends), however long the machine makes that take.
                until = time.thread_time() + (0.6 if scenario == "busy_600ms" else 3600.0)
                while time.thread_time() < until:
                    pass
            leaves = decode_leaves(frame.message["leaves"], frame)
            blobs = Blobs()
            if scenario.startswith("leaky"):
                import numpy as np

                held.extend(leaves)
                node = encode_leaf(np.concatenate([np.ravel(x) for x in held]), blobs)
            else:
                node = encode_leaf(leaves[0], blobs)
            send(
                fd,
                encode_frame({"type": "result", "case": case, "outputs": [node], "run_ms": 1.0}, blobs.items),
            )
        elif kind == "end":
            send(fd, encode_frame({"type": "ended"}))


def main() -> None:
    role, scenario = sys.argv[1], sys.argv[2]
    fd = int(sys.argv[sys.argv.index("--result-fd") + 1])
    send(fd, encode_frame({"type": "ready", "pid": os.getpid()}))
    (tracer if role == "tracer" else executor)(fd, scenario)
    json.dumps({})


if __name__ == "__main__":
    main()
