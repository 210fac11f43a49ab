// What the page keeps in the browser's local storage, per problem: the code and the last verdict.
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
