"""A problem package's content hash: what a grading is pinned to (the manifest stored with a submission,
the versions a node serves, a pushed version's identity), over every file grading reads."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

from judge.core.problems import Problem

#: Folders of a problem package that do not change how it is graded.
_NOT_GRADED = frozenset({"solutions", "__pycache__"})


def problem_hash(problem: Problem) -> str:
    """SHA-256 over every file of the package that grading reads (spec, statement, cases, generators,
    starter) and the reference solution, with their relative paths; solutions/ does not count."""
    return package_hash(problem.root, problem.reference_path.name, problem.reference_source)


def package_hash(root: Path, reference_name: str, reference_source: str) -> str:
    """``problem_hash`` of the package folder ``root`` and its reference module (name and text), without
    loading the package (nothing of it is imported: it may not have been checked yet)."""
    digest = hashlib.sha256()
    files = sorted(
        p for p in root.rglob("*") if p.is_file() and not _NOT_GRADED.intersection(p.relative_to(root).parts)
    )
    for file in files:
        _add(digest, file.relative_to(root).as_posix(), file.read_bytes())
    _add(digest, f"reference/{reference_name}", reference_source.encode())
    return digest.hexdigest()


def _add(digest: Any, name: str, data: bytes) -> None:
    digest.update(name.encode())
    digest.update(b"\0")
    digest.update(len(data).to_bytes(8, "big"))
    digest.update(data)
