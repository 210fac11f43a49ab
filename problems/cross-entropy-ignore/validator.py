"""Constraints of cross-entropy-ignore (statement.md, "Constraints"), checked by `judge check`."""

from __future__ import annotations

from typing import Any

import numpy as np

from judge.constraints import check_dtype, check_finite, check_max_abs

IGNORE = -100
MAX_ABS = 100.0
MAX_ROWS = 256
MAX_CLASSES = 256
MAX_ENTRIES = 4096


def validate(args: dict[str, Any], dtype: str) -> list[str]:
    logits, labels = np.asarray(args["logits"]), np.asarray(args["labels"])
    errors: list[str] = []
    if logits.ndim == 2 and labels.ndim == 1:
        rows, classes = logits.shape
        if not 1 <= rows <= MAX_ROWS:
            errors.append(f"logits: {rows} rows, needs 1 to {MAX_ROWS}")
        if not 1 <= classes <= MAX_CLASSES:
            errors.append(f"logits: {classes} classes, needs 1 to {MAX_CLASSES}")
        if logits.size > MAX_ENTRIES:
            errors.append(f"logits: {logits.size} entries, at most {MAX_ENTRIES}")
        if labels.shape != (rows,):
            errors.append(f"labels: shape {labels.shape}, expected ({rows},): one label per row")
        elif labels.size:
            bad = labels[(labels != IGNORE) & ((labels < 0) | (labels >= classes))]
            if bad.size:
                errors.append(f"labels: {bad[0]} is neither -100 nor a class index from 0 to {classes - 1}")
    if labels.dtype != np.int32:
        errors.append(f"labels: dtype {labels.dtype}, expected int32")
    return [
        *errors,
        *check_dtype(logits, "logits", dtype),
        *check_finite(logits, "logits"),
        *check_max_abs(logits, "logits", MAX_ABS),
    ]


# ------------------------------------------------ promises of the statement ([[promises]] in problem.toml)


def every_label_ignored(args: dict[str, Any], dtype: str) -> bool:
    return bool(np.all(np.asarray(args["labels"]) == IGNORE))


def some_rows_ignored(args: dict[str, Any], dtype: str) -> bool:
    """Ignored rows beside labelled ones: the mean divides by the labelled rows alone."""
    ignored = np.asarray(args["labels"]) == IGNORE
    return bool(ignored.any() and not ignored.all())


def ignored_row_with_large_logits(args: dict[str, Any], dtype: str) -> bool:
    """An ignored row holds a logit of magnitude 50 or more (it must not reach the result)."""
    logits, ignored = np.asarray(args["logits"]), np.asarray(args["labels"]) == IGNORE
    return bool(ignored.any() and np.abs(logits[ignored]).max() >= 50.0)


def logit_past_exp_overflow(args: dict[str, Any], dtype: str) -> bool:
    """A labelled row's largest logit is 89 or more: exp of it overflows float32 unshifted."""
    logits, kept = np.asarray(args["logits"]), np.asarray(args["labels"]) != IGNORE
    return bool(kept.any() and logits[kept].max() >= 89.0)


def first_and_last_class(args: dict[str, Any], dtype: str) -> bool:
    """Labels 0 and c - 1 both occur, with c >= 2."""
    labels, classes = np.asarray(args["labels"]), np.asarray(args["logits"]).shape[1]
    return classes >= 2 and bool(np.any(labels == 0) and np.any(labels == classes - 1))


def one_row(args: dict[str, Any], dtype: str) -> bool:
    return bool(np.asarray(args["logits"]).shape[0] == 1)


def most_rows(args: dict[str, Any], dtype: str) -> bool:
    return bool(np.asarray(args["logits"]).shape[0] == MAX_ROWS)


def one_class(args: dict[str, Any], dtype: str) -> bool:
    return bool(np.asarray(args["logits"]).shape[1] == 1)


def most_classes(args: dict[str, Any], dtype: str) -> bool:
    return bool(np.asarray(args["logits"]).shape[1] == MAX_CLASSES)


def many_entries(args: dict[str, Any], dtype: str) -> bool:
    """At least 15/16 of the stated 4,096 entries."""
    return bool(np.asarray(args["logits"]).size * 16 >= MAX_ENTRIES * 15)


_OK = {"logits": [[1.0, 2.0], [0.5, -0.5]], "labels": [1, -100]}

#: Inputs that break the constraints; the converter or validate() must reject each one.
JUNK: list[dict[str, Any]] = [
    {"why": "a label past the classes", "args": {**_OK, "labels": [2, 0]}},
    {"why": "a negative label other than -100", "args": {**_OK, "labels": [-1, 0]}},
    {"why": "one label too few", "args": {**_OK, "labels": [1]}},
    {"why": "a fractional label", "args": {**_OK, "labels": [0.5, 1]}},
    {"why": "1-D logits", "args": {"logits": [1.0, 2.0], "labels": [1]}},
    {"why": "no rows", "args": {"logits": [], "labels": []}},
    {"why": "no classes", "args": {"logits": [[], []], "labels": [-100, -100]}},
    {"why": "a logit past 100", "args": {**_OK, "logits": [[101.0, 2.0], [0.5, -0.5]]}},
    {"why": "an infinite logit", "args": {**_OK, "logits": [[float("inf"), 2.0], [0.5, -0.5]]}},
    {"why": "257 classes", "args": {"logits": [[0.0] * 257], "labels": [0]}},
    {"why": "too many entries", "args": {"logits": [[0.0] * 64] * 65, "labels": [0] * 65}},
    {"why": "bfloat16 case", "dtype": "bfloat16", "args": _OK},
]

#: Inputs at the limits of the constraints; they must validate, and the reference must give finite outputs.
EDGE: list[dict[str, Any]] = [
    {"why": "every label ignored", "args": {**_OK, "labels": [-100, -100]}},
    {"why": "largest logits", "args": {"logits": [[100.0, -100.0], [-100.0, 100.0]], "labels": [1, 0]}},
    {"why": "one class", "args": {"logits": [[100.0], [-100.0]], "labels": [0, 0]}},
    {"why": "most classes", "args": {"logits": [[100.0] * 256] * 16, "labels": [255] * 16}},
]
