// The management API as the Studio calls it: JSON in and out, the CSRF
// token on every change, problem documents turned into ApiError, and a
// request refused because the session ended retried once the user has
// signed in again (so an edit in progress is never lost).
import { session, expire } from './session.svelte.js';

export class ApiError extends Error {
  constructor(status, doc) {
    super(doc?.detail || `The server answered ${status}`);
    this.status = status;
    this.doc = doc || {};
    /** Invalid fields by name, as the problem's errors list them. */
    this.fields = {};
    for (const e of doc?.errors || []) this.fields[e.field] = e.reason;
  }

  /** The reason given for a field: name, or fields.name for item fields. */
  field(name) {
    return this.fields[name] ?? this.fields['fields.' + name] ?? '';
  }
}

/** The management API base of the current instance. */
export function base(guid = session.guid) {
  return `/api/v1/instance/${encodeURIComponent(guid)}`;
}

function url(path) {
  return path.startsWith('/api/') ? path : base() + path;
}

async function problem(res) {
  let doc = null;
  try {
    doc = await res.json();
  } catch {
    // not JSON: the status says enough
  }
  return new ApiError(res.status, doc);
}

/**
 * Sends a request and returns the decoded answer (null for 204), or throws
 * an ApiError. opts.headers adds headers; opts.raw returns the Response.
 */
export async function api(method, path, body, opts = {}) {
  for (let attempt = 0; ; attempt++) {
    const headers = { Accept: 'application/json', ...(opts.headers || {}) };
    if (body !== undefined) headers['Content-Type'] = 'application/json';
    if (method !== 'GET' && session.csrf) headers['X-CSRF-Token'] = session.csrf;
    const res = await fetch(url(path), {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
      credentials: 'same-origin',
    });
    if (res.status === 401 && session.user && attempt === 0 && !opts.noRetry) {
      await expire();
      continue;
    }
    if (!res.ok) throw await problem(res);
    if (opts.raw) return res;
    return res.status === 204 ? null : res.json();
  }
}

export const get = (path, opts) => api('GET', path, undefined, opts);
export const post = (path, body, opts) => api('POST', path, body, opts);
export const put = (path, body, opts) => api('PUT', path, body, opts);
export const patch = (path, body, opts) => api('PATCH', path, body, opts);
export const del = (path, opts) => api('DELETE', path, undefined, opts);

/**
 * Uploads a file as multipart/form-data, reporting progress(loaded, total);
 * resolves with the created asset.
 */
export function upload(path, file, fields, progress) {
  const send = () =>
    new Promise((resolve, reject) => {
      const form = new FormData();
      form.append('file', file);
      for (const [k, v] of Object.entries(fields || {})) if (v) form.append(k, v);
      const xhr = new XMLHttpRequest();
      xhr.open('POST', url(path));
      xhr.setRequestHeader('X-CSRF-Token', session.csrf);
      xhr.responseType = 'json';
      xhr.upload.onprogress = (e) => progress?.(e.loaded, e.total);
      xhr.onload = () =>
        xhr.status >= 200 && xhr.status < 300 ? resolve(xhr.response) : reject(new ApiError(xhr.status, xhr.response));
      xhr.onerror = () => reject(new ApiError(0, { detail: 'The upload failed: the network is down or the server closed it' }));
      xhr.send(form);
    });
  return send().catch(async (err) => {
    if (err.status !== 401 || !session.user) throw err;
    await expire();
    return send();
  });
}
