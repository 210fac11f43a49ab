"""Why a queued submission waits, in words for a learner (no ids, no operator detail)."""

from __future__ import annotations

from judge.dispatch.base import Waiting


def waiting_message(waiting: Waiting) -> str:
    """The sentence of a ``Waiting``: its reason, how many go first, and an estimate."""
    about = f" (about {waiting.estimate_s} s)" if waiting.estimate_s is not None else ""
    if waiting.reason == "queue":
        n = waiting.ahead
        if not n:
            return f"Queued: next, once a grading under way finishes{about}."
        return f"Queued behind {n} other submission{'s' * (n != 1)}{about}."
    if waiting.reason == "run_reserve":
        return f"Queued: the judge keeps a sandbox free for Runs and starts your grading shortly{about}."
    if waiting.reason == "capacity":
        return (
            f"Queued again: the judge is busy starting its sandbox; this does not count as an attempt{about}."
        )
    return f"Starting: waiting for a sandbox worker{about}."
