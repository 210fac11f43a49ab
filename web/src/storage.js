// What the page keeps in the browser's local storage, per problem: the code, the last verdict, the
// submissions, the last Run and the Run panel's own input ("my input below").
// Storage may be unavailable (private windows, quotas): every call degrades to "nothing kept".
//
// Signed in to an account (account.js), the account is the source instead: code, verdicts, the solved set
// and the submissions come from what the server rendered into the page, the code goes back to the
// server as it is saved, and localStorage keeps only a copy of the code under the account's own prefix
// (used when it is newer than the server's: a save that did not reach the judge). The anonymous entries
// are neither read nor written while signed in.
import { account, putCode } from "./account.js";

const PREFIX = "jax-judge:";

function read(key) {
  try {
    return window.localStorage.getItem(PREFIX + key);
  } catch {
    return null;
  }
}

function write(key, value) {
  try {
    if (value === null) window.localStorage.removeItem(PREFIX + key);
    else window.localStorage.setItem(PREFIX + key, value);
    return true;
  } catch {
    return false;
  }
}

/** Where code is kept, for the page's words: "your account" or "this browser". */
export function keptWhere() {
  return account() ? "your account" : "this browser";
}

/** The account's copy of `slug`'s code in this browser: {code, at} or null. */
function accountCopy(state, slug) {
  try {
    const value = JSON.parse(read(`@${state.id}:code:${slug}`) ?? "null");
    return value && "code" in value && typeof value.at === "number" ? value : null;
  } catch {
    return null;
  }
}

/** The code last typed for `slug`, or null. */
export function loadCode(slug) {
  const state = account();
  if (!state) return read(`code:${slug}`);
  const mine = state.problem?.slug === slug ? state.problem : null;
  const server = mine?.code ?? null;
  const serverAt = mine?.code_saved_at ? Date.parse(mine.code_saved_at) : 0;
  const copy = accountCopy(state, slug);
  if (copy && copy.at > serverAt && copy.code !== server) {
    putCode(slug, copy.code); // a save that never reached the judge: send it now
    return copy.code;
  }
  return server;
}

/** Keep `code` for `slug` (null forgets it); false when the browser refused to store it. */
export function saveCode(slug, code, { keepalive = false } = {}) {
  const state = account();
  if (!state) return write(`code:${slug}`, code);
  write(`@${state.id}:code:${slug}`, JSON.stringify({ code, at: Date.now() }));
  if (state.problem?.slug === slug) {
    state.problem.code = code;
    state.problem.code_saved_at = new Date().toISOString();
  }
  putCode(slug, code, { keepalive });
  return true;
}

/** Whether `slug` is solved: an Accepted kept in this browser, or (signed in) in the account. */
export function isSolved(slug) {
  const state = account();
  if (state) return Boolean(state.problems[slug]?.solved);
  return loadVerdict(slug)?.verdict === "accepted";
}

/** The last submission verdict for `slug`: {verdict, passed, total, at} or null. */
export function loadVerdict(slug) {
  const state = account();
  if (state) {
    const mine = state.problems[slug];
    if (!mine?.verdict) return null;
    return { verdict: mine.verdict, at: mine.at ? Date.parse(mine.at) : null };
  }
  const raw = read(`verdict:${slug}`);
  if (!raw) return null;
  try {
    const value = JSON.parse(raw);
    return value && typeof value.verdict === "string" ? value : null;
  } catch {
    return null;
  }
}

export function saveVerdict(slug, verdict) {
  const state = account();
  if (!state) {
    write(`verdict:${slug}`, JSON.stringify(verdict));
    return;
  }
  // The server derives it from the account's submissions; this page shows it at once.
  const before = state.problems[slug] ?? { solved: false };
  state.problems[slug] = {
    solved: before.solved || verdict.verdict === "accepted",
    verdict: verdict.verdict,
    at: new Date(verdict.at ?? Date.now()).toISOString(),
  };
}

/** Most submissions kept per problem (the newest). */
const SUBMISSIONS_KEPT = 20;
/** The largest last Run result kept (characters of JSON); a larger one is not kept. */
const LAST_RUN_MAX = 200_000;

/** This browser's (signed in: the account's) submissions of `slug`, newest first: [{id, at}]. */
export function loadSubmissions(slug) {
  const state = account();
  if (state) {
    const history = state.problem?.slug === slug ? state.problem.history : [];
    return history.map((item) => ({ id: item.id, at: Date.parse(item.at) }));
  }
  try {
    const value = JSON.parse(read(`submissions:${slug}`) ?? "[]");
    return Array.isArray(value) ? value.filter((item) => item && typeof item.id === "string") : [];
  } catch {
    return [];
  }
}

/** Remember submission `id` of `slug` (newest first, at most SUBMISSIONS_KEPT). */
export function addSubmission(slug, id, at = Date.now()) {
  const state = account();
  if (state) {
    // The server recorded it with the account when it took the submission; this page lists it at once.
    if (state.problem?.slug === slug && !state.problem.history.some((item) => item.id === id)) {
      state.problem.history.unshift({ id, at: new Date(at).toISOString() });
    }
    return;
  }
  const kept = [{ id, at }, ...loadSubmissions(slug).filter((item) => item.id !== id)];
  write(`submissions:${slug}`, JSON.stringify(kept.slice(0, SUBMISSIONS_KEPT)));
}

/** The last Run of `slug`: {result, at} or null. */
export function loadLastRun(slug) {
  try {
    const value = JSON.parse(read(`run:${slug}`) ?? "null");
    return value && value.result && Array.isArray(value.result.cases) ? value : null;
  } catch {
    return null;
  }
}

/** Keep the last Run's `result` of `slug` (unless it is too large to keep). */
export function saveLastRun(slug, result, at = Date.now()) {
  const text = JSON.stringify({ result, at });
  write(`run:${slug}`, text.length <= LAST_RUN_MAX ? text : null);
}

/** The largest Run-panel input kept (characters of JSON); a larger one is not kept. */
const RUN_INPUT_MAX = 200_000;

/** The Run panel's input of `slug` as last left: {mode: "examples"|"custom", texts: {argument: text},
 * dtype: string|null}, or null. */
export function loadRunInput(slug) {
  try {
    const value = JSON.parse(read(`input:${slug}`) ?? "null");
    if (!value || typeof value.texts !== "object" || value.texts === null) return null;
    const texts = Object.fromEntries(Object.entries(value.texts).filter(([, text]) => typeof text === "string"));
    const mode = value.mode === "custom" ? "custom" : "examples";
    return { mode, texts, dtype: typeof value.dtype === "string" ? value.dtype : null };
  } catch {
    return null;
  }
}

/** Keep the Run panel's input of `slug` (unless it is too large to keep). */
export function saveRunInput(slug, { mode, texts, dtype }) {
  const text = JSON.stringify({ mode, texts, dtype });
  write(`input:${slug}`, text.length <= RUN_INPUT_MAX ? text : null);
}
