"""One router per resource: problems, runs, submissions, health (health, readiness, metrics)."""
