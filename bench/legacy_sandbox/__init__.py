"""Today's single-process harness before the tracer/executor split, kept ONLY as the benchmark baseline.

``bench/bench_integrity.py`` runs it in the same bwrap sandbox and warm pool as before (this folder is bound
as the sandbox's ``sandbox`` package) to measure the new design side by side with the old one. Nothing in
the judge uses it. The files are the originals (``git show 27d19fb:sandbox/harness.py`` ...) with relative
imports, and the harness writes its ``ready`` frame in today's frame header so today's pool can keep it
warm; ``grade.py`` is the old grading path (job, run, decode, compare) trimmed to what the bench needs.
"""
