// The Submit status line in words while a submission waits (never its id): why it waits and for how long.

/**
 * A queued submission's status line: the judge's own sentence for why it waits and its estimate
 * (`waiting.message` of GET /api/v1/submissions/{id}: behind N submissions, the Run reserve, a start under
 * way), or a plain "queued" while the judge says nothing more (a distributed judge, an old server).
 */
export function queuedText(submission) {
  const message = submission?.waiting?.message;
  return typeof message === "string" && message ? message : "Queued: waiting for the judge…";
}

/**
 * The status line for a `status` event of the submission's stream (`running`, or `queued` again with the
 * judge's `reason`); null for any other status.
 */
export function statusText(data) {
  if (data?.status === "running") return "Grading…";
  if (data?.status === "queued") {
    const reason = typeof data.reason === "string" ? data.reason.trim() : "";
    return reason ? `${reason[0].toUpperCase()}${reason.slice(1)}.` : "Queued: waiting for the judge…";
  }
  return null;
}

/** The status line while cases come in. */
export function gradedText(count) {
  return `${count} case${count === 1 ? "" : "s"} graded…`;
}
