"""Check ``cost``: how far the accepted solutions sit inside the problem's ``[cost]`` rule.

The rule bounds a program's FLOPs and bytes accessed as multiples of the reference's on each case
(``judge.core.spec.CostRule``). From the gradings of the ``solutions`` check, this reports the largest ratio
any accepted solution reached on a public case beside the bound (its margin), and warns when that ratio is
within 20% of the bound: an honest variant of the same algorithm would soon be rejected. Without a rule it
reports the accepted solutions' largest ratios, so an author can choose one.
"""

from __future__ import annotations

from judge.check.context import CheckContext

NAME = "cost"

#: A largest accepted ratio above this share of the bound is a warning.
CLOSE = 0.8


def check(ctx: CheckContext) -> None:
    rule = ctx.loaded.spec.cost
    accepted = [g.result for g in ctx.grades if g.folder == "accepted" and g.result is not None]
    figures = {
        "FLOPs": (
            [c.cost.flops_ratio for r in accepted for c in r.cases if c.cost and c.cost.flops_ratio],
            rule.max_flops_ratio if rule is not None else None,
        ),
        "bytes accessed": (
            [c.cost.bytes_ratio for r in accepted for c in r.cases if c.cost and c.cost.bytes_ratio],
            rule.max_bytes_ratio if rule is not None else None,
        ),
    }
    for what, (ratios, bound) in figures.items():
        if not ratios:
            continue
        worst = max(ratios)
        if bound is None:
            ctx.diag.note(f"accepted solutions reach at most {worst:.3g}x the reference's {what}")
            continue
        ctx.diag.note(
            f"accepted solutions reach at most {worst:.3g}x the reference's {what}; "
            f"the rule allows {bound:g}x"
        )
        if worst > CLOSE * bound:
            ctx.diag.warning(
                f"an accepted solution reaches {worst:.3g}x the reference's {what}, within 20% of the "
                f"[cost] bound of {bound:g}x: honest variants may be rejected; raise the bound",
                file=ctx.root / "problem.toml",
                at="cost",
            )
