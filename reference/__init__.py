"""Reference solutions, one module per problem (trusted code).

Each module defines the function named in its problem's ``problem.toml`` (``function``); the module name is
the spec's ``reference`` field. The judge runs these on the trusted side, under ``jax.jit`` like user code,
to produce the expected outputs of every case.
"""
