"""Feedback beyond the verdict: which known mistake a wrong output looks like.

Pure functions only (no JAX, no I/O): ``notes`` reads a shipped wrong solution's teaching note from its
source, ``matching`` picks the known mistake a learner's output matches. The trusted computation of the
wrong solutions' outputs lives in ``judge.mistakes``.
"""
