// What a Run is doing, in words a learner reads (judge/progress.py names the phases).

/**
 * The text of a progress event `p` (`{phase, traced, compiled, programs, ran, cases, detail}`);
 * `waitedS`: whole seconds the Run has waited for the judge to warm up, shown while it waits.
 */
export function phaseText(p, waitedS = 0) {
  const of = (done, total) => `${Math.min(done + 1, total)} of ${total}`;
  switch (p.phase) {
    case "sending":
      return "Sending your code…";
    case "waiting":
      return warmupText(p.detail ?? "", waitedS);
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

const sum = (text, pattern) => [...text.matchAll(pattern)].reduce((total, m) => total + Number(m[1]), 0);
const plural = (n, one, many) => `${n} ${n === 1 ? one : many}`;

/**
 * The judge is still warming up: a sentence from the engine's `detail`, the pools' start status as the
 * operator reads it (judge/engine.py readiness, sandbox/pool.py start_status: "warm sandbox workers are
 * starting (tracers: 2 starting (the oldest for 3 s); executors: 1 waiting for a place at the host's start
 * gate (2 at once))", "... next start in 4 s after 2 failed start(s): <error>", "no warm sandbox pair is
 * ready (<error>)"). What is starting and for how long, never the pools' names or an error's text.
 */
export function warmupText(detail, waitedS = 0) {
  const soFar = waitedS >= 1 ? ` (${Math.floor(waitedS)} s so far)` : "";
  const then = "Your Run starts as soon as it is ready.";
  const retry = /next start in (\d+) s after \d+ failed start/.exec(detail);
  if (retry) {
    return `The judge's sandbox failed to start; it tries again in ${retry[1]} s${soFar}. ${then}`;
  }
  if (/^no warm sandbox pair is ready/.test(detail)) {
    return `The judge's sandbox failed to start and is trying again${soFar}. ${then}`;
  }
  const starting = sum(detail, /(\d+) starting\b/g);
  const queued = sum(detail, /(\d+) waiting for a place/g);
  let what = ", starting its sandbox";
  if (starting && queued) {
    what = `: ${plural(starting, "sandbox worker", "sandbox workers")} starting, ${queued} more waiting their turn`;
  } else if (starting) {
    what = `: ${plural(starting, "sandbox worker", "sandbox workers")} starting`;
  } else if (queued) {
    what = `: ${plural(queued, "sandbox worker", "sandbox workers")} waiting their turn to start`;
  }
  return `The judge is still warming up${what}${soFar}. ${then}`;
}
