// What the page keeps in the browser's local storage, per problem: the code, the last verdict, the
// submissions, the last Run and the Run panel's own input ("my input below").
// Storage may be unavailable (private windows, quotas): every call degrades to "nothing kept".

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

/** The code last typed for `slug`, or null. */
export function loadCode(slug) {
  return read(`code:${slug}`);
}

/** Keep `code` for `slug` (null forgets it); false when the browser refused to store it. */
export function saveCode(slug, code) {
  return write(`code:${slug}`, code);
}

/** The last submission verdict for `slug`: {verdict, passed, total, at} or null. */
export function loadVerdict(slug) {
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
  write(`verdict:${slug}`, JSON.stringify(verdict));
}

/** Most submissions kept per problem (the newest). */
const SUBMISSIONS_KEPT = 20;
/** The largest last Run result kept (characters of JSON); a larger one is not kept. */
const LAST_RUN_MAX = 200_000;

/** This browser's submissions of `slug`, newest first: [{id, at}]. */
export function loadSubmissions(slug) {
  try {
    const value = JSON.parse(read(`submissions:${slug}`) ?? "[]");
    return Array.isArray(value) ? value.filter((item) => item && typeof item.id === "string") : [];
  } catch {
    return [];
  }
}

/** Remember submission `id` of `slug` (newest first, at most SUBMISSIONS_KEPT). */
export function addSubmission(slug, id, at = Date.now()) {
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
