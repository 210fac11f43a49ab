"""The programs that run INSIDE a sandbox. Nothing here is trusted by the judge.

- ``tracer``: the only process that runs user Python. It loads the submission, traces the function on ABSTRACT
  inputs (structure, shapes, dtypes, weak types, static values) through its own captured ``jax.jit`` and sends
  each program back as data (the trace lowered to StableHLO, as MLIR bytecode: ``lowering``) with a JSON
  skeleton of the output. It never receives a hidden case's values; it runs the function on public and custom
  Run values only to show the learner's ``jax.debug.print`` output. One tracer serves one submission.
- ``executor``: runs NO user Python. It reads each program, checks it (custom calls, host callbacks,
  input and output types), compiles it with XLA and runs it on the concrete inputs, hidden ones included.
  Long-lived: it serves job after job, as its own uid, and is recycled after a bounded number.
- ``zygote``: a fork server that imported JAX once; it forks one tracer per submission, and each child
  confines itself (``confine``: private mounts, its own uid, no capabilities, no_new_privs, seccomp)
  before any user code runs. It reads commands only from the judge and never runs user code.

These modules import only the wire format (``sandbox.shared.wire``) and the tree types
(``sandbox.shared.tree``) of the project, so a reader sees at once which code user code can touch.
"""
