"""Write ``cases/hidden.json`` for pad-to-bucket (deterministic: same bytes on every run).

Run from anywhere: ``python problems/pad-to-bucket/generate_cases.py``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from judge.casegen import render as render  # re-exported: the case check renders with it
from judge.casegen import write

SEED = 20_261_131
OUT = Path(__file__).resolve().parent / "cases" / "hidden.json"


def build_cases() -> list[dict[str, Any]]:
    rng = np.random.default_rng(SEED)
    cases: list[dict[str, Any]] = []

    def add(name: str, tokens: Any, lengths: Any, buckets: list[int], pad_id: int) -> None:
        args = {
            "tokens": np.asarray(tokens, dtype=np.int64).tolist(),
            "lengths": np.asarray(lengths, dtype=np.int64).tolist(),
            "buckets": buckets,
            "pad_id": pad_id,
        }
        cases.append({"name": name, "visibility": "hidden", "dtype": "float32", "args": args})

    def ids(batch: int, length: int, low: int = 1, high: int = 1000) -> Any:
        return rng.integers(low, high, size=(batch, length))

    def random_case(name: str, batch: int, length: int, buckets: list[int], pad_id: int) -> None:
        lengths = rng.integers(0, length + 1, size=batch)
        add(name, ids(batch, length), lengths, buckets, pad_id)

    # The examples' shapes and static values again, with other ids and lengths.
    add("example_1_lookalike", [[11, 12, 13], [14, 15, 16]], [1, 2], [2, 4, 8], 0)
    add("example_2_lookalike", [[21, 22, 23, 24]], [2], [4, 8], 99)
    add("example_3_lookalike", [[31, 32, 33, 34, 35], [36, 37, 38, 39, 40]], [3, 0], [4], 0)
    # A row exactly as long as a middle bucket: that bucket, not the next one.
    random_case("length_equals_bucket", 4, 8, [2, 4, 8, 16], 3)
    random_case("length_equals_first_bucket", 3, 2, [2, 4, 8, 16], 1)
    # One past a bucket: the next one.
    random_case("length_one_past_bucket", 3, 9, [2, 4, 8, 16], 0)
    # Rows longer than the largest bucket: cut to it; some lengths past the cut.
    add("cut_lengths_past_bucket", ids(3, 12), [12, 7, 3], [4, 6], 0)
    add("cut_single_bucket", ids(2, 20), [20, 5], [16], 7)
    # Empty rows: everything is padding.
    add("empty_rows", np.zeros((3, 0), dtype=np.int64), [0, 0, 0], [2, 4], 7)
    # Zero-length and full rows side by side; leftovers past each length are ordinary ids.
    add("zero_and_full_rows", ids(4, 5), [0, 5, 0, 5], [3, 6, 12], 1)
    # Real tokens equal to pad_id inside the length (a mask derived from `tokens != pad_id` is wrong).
    row = rng.integers(0, 3, size=(5, 7))
    add("real_tokens_equal_pad_id", row, [7, 6, 4, 2, 1], [8, 16], 0)
    # Any int32 id, at both ends: above 2**24 a float32 holds no longer every integer, so padding or
    # masking through float32 changes ids (and 2**31 - 1 rounds to 2**31, past int32).
    top, bottom = 2**31 - 1, -(2**31)
    add("smallest_pad_id_and_ids", ids(3, 6, bottom, bottom + 200), [6, 2, 4], [4, 8], bottom)
    add("largest_pad_id_and_ids", ids(2, 3, top - 200, top + 1), [3, 1], [5], top)
    # Larger batches and realistic buckets.
    random_case("batch_16_len_100", 16, 100, [32, 64, 128, 256], 0)
    random_case("batch_8_len_33", 8, 33, [16, 32, 48, 64], 2)
    random_case("batch_16_len_100_again", 16, 100, [32, 64, 128, 256], 0)
    # Eight buckets up to the largest allowed, 4096.
    random_case("many_buckets", 6, 17, [1, 2, 4, 8, 16, 24, 32, 4096], 9)
    # Odd ids between 2**24 and 2**30 (the shape and static values of zero_and_full_rows).
    add("ids_past_2_24", ids(4, 5, 2**24, 2**30) | 1, [5, 0, 3, 5], [3, 6, 12], 1)
    return cases


def main() -> None:
    write(OUT, build_cases)


if __name__ == "__main__":
    main()
