// Calls to the judge's REST API (the page has no other way to reach the judge).

/** A non-2xx answer: `status`, the decoded JSON `body` (or null) and a readable `message`. */
export class ApiError extends Error {
  constructor(status, body, retryAfter) {
    super(errorText(status, body, retryAfter));
    this.name = "ApiError";
    this.status = status;
    this.body = body;
    this.retryAfter = retryAfter;
  }
}

/** The human-readable message of an API error body, whatever its exact shape. */
function errorText(status, body, retryAfter) {
  const error = body && typeof body === "object" ? (body.error ?? body) : null;
  let text = null;
  if (error && typeof error.message === "string") text = error.message;
  else if (error && typeof error.detail === "string") text = error.detail;
  if (!text) text = status === 0 ? "The judge could not be reached." : `The judge answered ${status}.`;
  if (status === 429 && retryAfter) text += ` Try again in ${retryAfter} s.`;
  return text;
}

/**
 * `method` `path` with an optional JSON `body`; resolves to the decoded JSON answer, rejects with
 * ApiError (status 0 when the network failed).
 */
export async function api(path, { method = "GET", body, signal } = {}) {
  const headers = { Accept: "application/json" };
  if (body !== undefined) headers["Content-Type"] = "application/json";
  let response;
  try {
    response = await fetch(path, {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
      signal,
      credentials: "same-origin",
    });
  } catch (error) {
    if (error.name === "AbortError") throw error;
    throw new ApiError(0, null, null);
  }
  const text = await response.text();
  let data = null;
  if (text) {
    try {
      data = JSON.parse(text);
    } catch {
      data = null;
    }
  }
  if (!response.ok) throw new ApiError(response.status, data, response.headers.get("Retry-After"));
  return data;
}
