"""Sandboxing: isolation backends and the session driver (host side), and the programs that run INSIDE.

``sandbox.inside`` holds the programs that run in a sandbox (tracer, executor, zygote); they import only
``sandbox.shared.wire`` (the wire format) and ``sandbox.shared.tree`` (tree types), which depend on nothing
from ``judge``, so no judge file needs to be visible inside. Everything else here runs in the judge's process.
"""
