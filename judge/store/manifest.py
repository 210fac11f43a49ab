"""The manifest stored with every submission, so a regrade can tell what graded it the first time."""

from __future__ import annotations

from functools import cache
from importlib.metadata import PackageNotFoundError, version
from typing import Any

from judge import __version__
from judge.core.problem_hash import problem_hash
from judge.core.problems import Problem


@cache
def _version(package: str) -> str:
    try:
        return version(package)
    except PackageNotFoundError:
        return "unknown"


def manifest(problem: Problem, backend: str, content_hash: str | None = None) -> dict[str, Any]:
    """``judge``, ``jax``, ``jaxlib`` versions, the problem's revision and content hash, and the sandbox
    backend."""
    return {
        "judge_version": __version__,
        "jax_version": _version("jax"),
        "jaxlib_version": _version("jaxlib"),
        "problem": problem.slug,
        "problem_revision": problem.spec.revision,
        "problem_hash": content_hash or problem_hash(problem),
        "sandbox_backend": backend,
    }


def version_note(manifest: dict[str, Any]) -> dict[str, Any] | None:
    """When a submission was graded with another version of its problem than the one it was accepted
    for: both versions and a sentence saying so (``schemas.VersionMismatch``); else None."""
    accepted = manifest.get("accepted_problem_hash")
    if not accepted:
        return None
    graded = {"hash": manifest.get("problem_hash"), "revision": manifest.get("problem_revision")}
    before = {"hash": accepted, "revision": manifest.get("accepted_problem_revision")}

    def label(version: dict[str, Any]) -> str:
        short = str(version["hash"] or "")[:12]
        return f"revision {version['revision']} ({short})" if version["revision"] else short

    message = (
        f"accepted for {manifest.get('problem', 'the problem')} {label(before)} but graded with "
        f"{label(graded)}: the grading node served another version"
    )
    return {"accepted": before, "graded": graded, "message": message}


def version_label(slug: str, content_hash: object, revision: object) -> str:
    """A problem's version in words: ``revision 2 (ab12cd34ef56) of problem scale-tree``."""
    if not content_hash:
        return f"problem {slug}"
    short = str(content_hash)[:12]
    named = f"revision {revision} ({short})" if revision else short
    return f"version {named} of problem {slug}"
