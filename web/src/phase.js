// What a Run is doing, in words a learner reads (judge/core/progress.py names the phases).

/**
 * The text of a progress event `p` (`{phase, traced, compiled, programs, ran, cases, detail, warmup}`);
 * `waitedS`: seconds the Run has waited for the judge to warm up, shown (whole) while it waits.
 */
export function phaseText(p, waitedS = 0) {
  const of = (done, total) => `${Math.min(done + 1, total)} of ${total}`;
  switch (p.phase) {
    case "sending":
      return "Sending your code…";
    case "waiting":
      return warmupText(p.warmup, waitedS);
    case "loading":
      return "Loading your code…";
    case "tracing":
      return `Tracing ${of(p.traced, p.programs)}…`;
    case "compiling":
      return `Compiling ${of(p.compiled, p.programs)}…`;
    case "running":
      return `Running case ${of(p.ran, p.cases)}…`;
    default:
      return "Running…";
  }
}

const plural = (n, one, many) => `${n} ${n === 1 ? one : many}`;

/**
 * The judge is still warming up: a sentence from the event's `warmup` fields (judge/core/progress.py
 * WarmupProgress: `starting`, `queued`, `retry_in_s`, `start_failed`, `ahead` (other judges' starts queued
 * first on the host), `estimate_s`; null or absent: nothing known yet).
 * What is starting and for how long, never the pools' names or an error's text; `detail`, the operator's
 * wording of the same, is not read.
 */
export function warmupText(warmup, waitedS = 0) {
  const soFar = waitedS >= 1 ? ` (${Math.floor(waitedS)} s so far)` : "";
  const count = (n) => (Number.isInteger(n) && n > 0 ? n : 0);
  const w = warmup ?? {};
  const estimate = count(w.estimate_s);
  const then = estimate
    ? `Your Run starts as soon as it is ready, in about ${estimate} s.`
    : "Your Run starts as soon as it is ready.";
  const retryIn = count(w.retry_in_s);
  if (retryIn) {
    return `The judge's sandbox failed to start; it tries again in ${retryIn} s${soFar}. ${then}`;
  }
  if (w.start_failed === true) {
    return `The judge's sandbox failed to start and is trying again${soFar}. ${then}`;
  }
  const starting = count(w.starting);
  const queued = count(w.queued);
  let what = ", starting its sandbox";
  if (starting && queued) {
    what = `: ${plural(starting, "sandbox worker", "sandbox workers")} starting, ${queued} more waiting their turn`;
  } else if (starting) {
    what = `: ${plural(starting, "sandbox worker", "sandbox workers")} starting`;
  } else if (queued) {
    what = `: ${plural(queued, "sandbox worker", "sandbox workers")} waiting their turn to start`;
  }
  const ahead = count(w.ahead);
  if (ahead && queued) what += ` behind ${plural(ahead, "start", "starts")} of other judges on this machine`;
  return `The judge is still warming up${what}${soFar}. ${then}`;
}
