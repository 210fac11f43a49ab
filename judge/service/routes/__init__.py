"""One router per resource: problems, runs, submissions, workers (operators), health (health, readiness,
metrics)."""
