"""Grading a raw run into verdicts: pure verdict rules, and the feedback step injected into them.

``judging.Judging`` turns a session's record (``sandbox.session.reports.RawRun``) into case results, in
order, as far as they are known; each case's verdict comes from ``verdict_rules.VerdictRules``, which decides
from the record and the reference alone (with ``claims`` for what the tracer says of its own failures,
``stops`` for a run that ended early, ``outputs`` for reading a result, ``program_rules`` and ``cost_rule``
for the rules on the compiled programs). What only teaches (a known mistake's name, the cost beside the
reference's, the program's text) is the feedback step (``feedback_step``), injected: without it
(``NO_FEEDBACK``) every verdict is the same. ``judge.core.grader`` plans and runs the session around them.
"""
