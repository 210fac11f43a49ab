"""The problem versions a grading process serves, as a grading node reports them in its heartbeat (and the
API node its own, to find version skew), and whether such a report includes one version."""

from __future__ import annotations

from typing import Any

from judge.core.problem_hash import problem_hash
from judge.core.problems import Problems


def served_versions(problems: Problems) -> dict[str, dict[str, Any]]:
    """slug -> ``{"revision", "hash"}`` of every problem served (what a grading node reports), with
    ``also``: the other versions of it this node can still grade (older live ones), when there are any."""
    served: dict[str, dict[str, Any]] = {}
    for problem in problems:
        current, *older = problems.versions(problem.slug) or (problem,)
        entry: dict[str, Any] = {"revision": current.spec.revision, "hash": problem_hash(current)}
        if older:
            entry["also"] = [{"revision": p.spec.revision, "hash": problem_hash(p)} for p in older]
        served[problem.slug] = entry
    return served


def serves(versions: dict[str, Any] | None, slug: str, content_hash: str) -> bool:
    """Whether a node's reported ``problem_versions`` include ``slug`` in version ``content_hash``."""
    entry = (versions or {}).get(slug)
    if not isinstance(entry, dict):
        return False
    hashes = [entry.get("hash")] + [v.get("hash") for v in entry.get("also") or [] if isinstance(v, dict)]
    return content_hash in hashes
