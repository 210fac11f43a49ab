// How verdicts read on the page. The set is closed (judge/core/verdicts.py); an unknown one still shows.

const LABELS = {
  accepted: "Accepted",
  wrong_answer: "Wrong answer",
  trace_error: "Trace error",
  runtime_error: "Runtime error",
  compile_error: "Compile error",
  time_limit_exceeded: "Time limit exceeded",
  memory_limit_exceeded: "Memory limit exceeded",
  output_limit_exceeded: "Output limit exceeded",
  internal_error: "Internal error (the judge's fault)",
  not_run: "Not run",
};

export function verdictLabel(verdict) {
  return LABELS[verdict] ?? String(verdict).replaceAll("_", " ");
}

/** A badge element for `verdict`, with the wrong-answer `reason` when there is one. */
export function verdictBadge(verdict, reason) {
  const badge = document.createElement("span");
  badge.className = `verdict verdict-${verdict === "accepted" ? "ok" : "bad"}`;
  badge.dataset.verdict = verdict;
  badge.textContent = verdictLabel(verdict) + (reason ? ` (${String(reason).replaceAll("_", " ")})` : "");
  return badge;
}
