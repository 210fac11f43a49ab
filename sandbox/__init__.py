"""Sandboxing: isolation backends (host side) and the harness that runs INSIDE the sandbox.

``sandbox.harness`` and ``sandbox.protocol`` are the only modules the sandboxed process imports; they
depend on nothing from ``judge`` so that no judge file needs to be visible inside.
"""
