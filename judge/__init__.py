"""JAX practice judge: the trusted side.

Problem loading, Run-panel JSON <-> pytree conversion, comparison, grading and the CLI live here.
User code never runs in this package's process; see ``sandbox/inside/`` for the tracer that runs it.
"""

__version__ = "0.1.0"
