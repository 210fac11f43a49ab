"""The engine: load a problem, run the reference, grade a submission in the sandbox, compare, verdicts, the
engine facade and its settings."""
