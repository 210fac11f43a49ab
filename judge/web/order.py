"""The problem list's suggested order: a walk along the catalog's "similar problems" links.

It starts at the easiest problem (the catalog's first among the easiest). Each next problem is one that the
problem just placed links to (``similar`` in its problem.toml, already limited to this catalog), the
easiest of its links still unplaced, in link order among equals; when the problem just placed has no
unplaced link, the walk goes back through the problems placed before it, newest first, and takes from the
links of the first one that still has any. When no placed problem links to anything unplaced, it starts
again at the easiest unplaced problem. So every problem is placed once, a learner moves to a problem close
to the one just solved, and the order is easier first where the links leave a choice.

Pure functions of the summaries: the list page renders the order, the problem page names what comes next.
"""

from __future__ import annotations

from collections.abc import Sequence

from judge.service.schemas import ProblemSummary

#: Where each difficulty comes in the suggested order (easier first).
DIFFICULTY_RANK = {"easy": 0, "medium": 1, "hard": 2}


def suggested_order(summaries: Sequence[ProblemSummary]) -> list[ProblemSummary]:
    """Every problem once, in the order the list suggests (see the module's docstring)."""
    by_slug = {item.slug: item for item in summaries}
    position = {item.slug: index for index, item in enumerate(summaries)}

    def easiest(slugs: Sequence[str]) -> str:
        return min(slugs, key=lambda slug: (DIFFICULTY_RANK[by_slug[slug].difficulty], slugs.index(slug)))

    placed: list[str] = []
    left = set(by_slug)
    while left:
        following: str | None = None
        for slug in reversed(placed):
            links = [link for link in by_slug[slug].similar if link in left]
            if links:
                following = easiest(links)
                break
        if following is None:
            following = easiest(sorted(left, key=position.__getitem__))
        placed.append(following)
        left.discard(following)
    return [by_slug[slug] for slug in placed]


def next_problems(summaries: Sequence[ProblemSummary], slug: str) -> list[ProblemSummary]:
    """What to offer after an Accepted on ``slug``, best first: the problems it links to, then the rest of
    the suggested order after it, then the problems before it (empty for an unknown slug). The page shows
    the first one this browser has not solved."""
    by_slug = {item.slug: item for item in summaries}
    if slug not in by_slug:
        return []
    order = [item.slug for item in suggested_order(summaries)]
    at = order.index(slug)
    ranked = [*by_slug[slug].similar, *order[at + 1 :], *order[:at]]
    seen: set[str] = {slug}
    offered: list[ProblemSummary] = []
    for candidate in ranked:
        if candidate in by_slug and candidate not in seen:
            seen.add(candidate)
            offered.append(by_slug[candidate])
    return offered
