// The admin API, called with the key the operator typed in. The key lives in this module's
// memory and in the tab's sessionStorage (never a URL, a cookie or a log); chatd checks it
// on every request, as for any other client of the admin API.

const keyName = "chatd-admin-key";
let key = sessionStorage.getItem(keyName);

/** A refusal or failure from chatd, with its message for the operator. */
export class ApiError extends Error {
    constructor(status, code, message) {
        super(message);
        this.status = status;
        this.code = code;
    }
}

export const hasKey = () => key !== null;

export function setKey(value) {
    key = value;
    sessionStorage.setItem(keyName, value);
}

export function forgetKey() {
    key = null;
    sessionStorage.removeItem(keyName);
}

/** Called when chatd refuses the key mid-session (set by the app). */
let onRefused = () => {};
export function whenRefused(handler) {
    onRefused = handler;
}

async function send(method, path, body) {
    const headers = { "X-Admin-Key": key ?? "" };
    if (body !== undefined) headers["Content-Type"] = "application/json";
    let response;
    try {
        response = await fetch(path, {
            method, headers, body: body === undefined ? undefined : JSON.stringify(body),
            cache: "no-store", credentials: "omit", referrerPolicy: "no-referrer",
        });
    } catch (error) {
        throw new ApiError(0, "network", `chatd cannot be reached (${error.message})`);
    }
    if (response.status === 401 && key !== null) onRefused();
    return response;
}

async function failure(response) {
    let code = "http";
    let message = `${response.status} ${response.statusText}`;
    try {
        const body = await response.json();
        code = body.code ?? code;
        message = body.message ?? message;
    } catch { /* not JSON: the status says it */ }
    return new ApiError(response.status, code, message);
}

/** A JSON request to the admin API: the answer's JSON (null for 204), or an `ApiError`. */
export async function api(method, path, body) {
    const response = await send(method, path, body);
    if (!response.ok) throw await failure(response);
    return response.status === 204 ? null : response.json();
}

/** `GET /metrics` as text, with the node that answered (`X-Chatd-Node`). */
export async function scrape() {
    const response = await send("GET", "/metrics");
    if (!response.ok) throw await failure(response);
    return { node: response.headers.get("X-Chatd-Node") ?? "chatd", text: await response.text() };
}

/** `GET /v1/health` (200 or 503, the same shape), with the node that answered. */
export async function health() {
    const response = await send("GET", "/v1/health");
    const node = response.headers.get("X-Chatd-Node");
    if (response.status !== 200 && response.status !== 503) throw await failure(response);
    return { node, body: await response.json() };
}

/**
 * Path segments escaped for a URL (`path("/v1/admin/users", uid, "groups")`). A segment `.` or
 * `..` is refused: the browser would resolve it away and the request would name another path.
 */
export function path(base, ...segments) {
    for (const segment of segments) {
        if (segment === "." || segment === ".." || segment === "") throw new Error(`"${segment}" cannot be named in a URL`);
    }
    return [base, ...segments.map(encodeURIComponent)].join("/");
}

/** A query string of the non-empty values. */
export function query(values) {
    const pairs = Object.entries(values).filter(([, value]) => value !== undefined && value !== null && value !== "");
    return pairs.length === 0 ? "" : "?" + new URLSearchParams(pairs).toString();
}
