"""The host side of one grading session: the units that drive a tracer and an executor, and the typed
record of what they said (``sandbox.session.reports``)."""
