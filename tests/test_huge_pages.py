"""A zygote's anonymous memory moved onto huge pages before it forks (``sandbox.inside.huge_pages``)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from sandbox.inside.huge_pages import HUGE_PAGE, anonymous_ranges

ROOT = Path(__file__).resolve().parent.parent

MAPS = """\
55ac0bd62000-55ac0d7f7000 rw-p 00000000 00:00 0                          [heap]
7f7cd7d08000-7f7cd8608000 rw-p 00000000 00:00 0
7f7cd8b2e000-7f7cd8c00000 rw-p 00000000 00:00 0
7f7ce7421000-7f7ce76fc000 r--p 0e287000 fe:00 5366266                    /venv/jaxlib/libjax_common.so
7f7ce76fc000-7f7ce9800000 rw-p 0e561000 fe:00 5366266                    /venv/jaxlib/libjax_common.so
7f7cea000000-7f7cec000000 r-xp 00000000 fe:00 5366266                    /venv/jaxlib/libjax_common.so
7f7cec000000-7f7cee000000 rw-s 00000000 00:01 12                         /dev/shm/x
7ffd58071000-7ffd58492000 rw-p 00000000 00:00 0                          [stack]
"""


def test_only_whole_huge_pages_of_the_heap_and_anonymous_writable_mappings_are_chosen() -> None:
    ranges = anonymous_ranges(MAPS)
    assert ranges == [(0x55AC0BE00000, 0x55AC0D600000), (0x7F7CD7E00000, 0x7F7CD8600000)]
    assert all(start % HUGE_PAGE == 0 and end % HUGE_PAGE == 0 and end > start for start, end in ranges)
    # a mapping with no whole aligned huge page inside, file mappings (even private writable ones), shared
    # memory and the stack are left as they are
    assert anonymous_ranges("7f7cd8b2e000-7f7cd8c00000 rw-p 00000000 00:00 0\n") == []


CHECK = """
import json, random
from sandbox.inside.huge_pages import collapse_heap
random.seed(7)
blocks = [bytearray(random.randbytes(1 << 16)) for _ in range(300)]  # ~19 MiB on the heap and mappings
before = [bytes(b) for b in blocks]
done = collapse_heap()
rollup = open("/proc/self/smaps_rollup").read()
huge = int(rollup.split("AnonHugePages:")[1].split()[0])
print(json.dumps({"done": done, "same": [bytes(b) for b in blocks] == before, "huge_kib": huge}))
"""


def test_collapsing_keeps_every_byte_and_reports_what_it_did() -> None:
    """Where the kernel cannot (older, huge pages off) nothing is done; where it can, memory is backed by
    huge pages. Either way the contents are what they were."""
    out = subprocess.run(
        [sys.executable, "-c", CHECK], cwd=ROOT, capture_output=True, text=True, check=True, timeout=120
    )
    got = json.loads(out.stdout)
    assert got["same"] is True
    assert got["done"] >= 0 and got["done"] % HUGE_PAGE == 0
    if got["done"]:
        assert got["huge_kib"] * 1024 >= HUGE_PAGE
