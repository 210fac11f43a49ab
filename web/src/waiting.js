// The Submit status line in words while a submission waits or is graded (never its id): why it waits and
// for how long, then how many of its cases are graded.

const PLAIN = "Queued: waiting for the judge…";

/**
 * A queued submission's status line: the judge's own sentence for why it waits and its estimate
 * (`waiting.message` of GET /api/v1/submissions/{id} and of the first `status` event of its stream: behind
 * N submissions, the Run reserve, a start under way), or a plain "queued" while the judge says nothing more
 * (a distributed judge, an old server).
 */
export function queuedText(submission) {
  const message = submission?.waiting?.message;
  return typeof message === "string" && message ? message : PLAIN;
}

/**
 * The status line for a `status` event of the submission's stream: `running` (with the number of `cases`
 * when the judge says it), or `queued` (the judge's `waiting` sentence, or a requeue's `reason`); null for
 * any other status.
 */
export function statusText(data) {
  if (data?.status === "running") return gradedText(0, data);
  if (data?.status === "queued") {
    if (typeof data.waiting === "object" && data.waiting) return queuedText(data);
    const reason = typeof data.reason === "string" ? data.reason.trim() : "";
    return reason ? `${reason[0].toUpperCase()}${reason.slice(1)}.` : PLAIN;
  }
  return null;
}

/**
 * The status line while cases come in: `count` graded, of the `cases` the running event announced; once
 * the public ones are in, the hidden ones are graded with their verdicts held until the end (judge.core.grader),
 * and the line says so rather than seeming stuck.
 */
export function gradedText(count, progress = null) {
  const total = Number(progress?.cases) || 0;
  if (!total) return count ? `${count} case${count === 1 ? "" : "s"} graded…` : "Grading…";
  const shown = Math.min(Number(progress.public ?? total), total);
  const head = `Grading: ${count} of ${total} case${total === 1 ? "" : "s"} graded`;
  if (count >= shown && count < total) {
    return `${head}; the hidden cases are being graded, their verdicts come together at the end (${total - count} to go)…`;
  }
  return `${head}…`;
}
