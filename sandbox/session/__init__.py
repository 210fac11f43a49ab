"""One grading's session on the host: a tracer and an executor driven through their channels.

    raw = run_session(pair, job, limits, progress=callback)   # sandbox.session.driver

The units, each with one job, composed by the driver (``driver``, the protocol's story):

- ``channel``: a worker's request and reply pipes (buffered non-blocking writes, bounded frame reads), the
  frame limits of each party, and a tracer's stop on a thread of its own;
- ``output``: the tracer's printed output (kept up to the cap, section marks, the cut at the output mark);
- ``tracer``: the tracer protocol (the plan's steps in order, each frame checked against it, the hidden
  phase, closing and stopping the tracer, what a failure is charged to);
- ``tracer_messages``: the job the tracer receives and what is kept of its claims (pure functions);
- ``lanes``: the executor's lanes (which program compiles and which case runs next, hidden cases last);
- ``replies``: the executor's replies written into the record, and its failure;
- ``deadlines``: charged time against the limits (a step's, a request's, the whole job's);
- ``reports``: the record (``RawRun``) and the decoding of every message that becomes part of it, once,
  into frozen typed fields (no dict of a sandbox's crosses into the judge).

This package's ``__init__`` imports nothing, so a module of it can be imported alone.
"""
