"""Feedback beyond the verdict: which known mistake a wrong output looks like.

Pure functions (no JAX, no I/O): ``notes`` reads a shipped wrong solution's teaching note from its
source, ``matching`` picks the known mistake a learner's output matches. The trusted computation of the
wrong solutions' outputs lives in ``judge.feedback.mistakes``; ``known_costs`` measures what they cost
(compiled on the trusted side) and names the one a program refused by a ``[cost]`` rule looks like (its
``nearest`` is pure).
"""
