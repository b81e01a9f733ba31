// A small history router for the Studio's paths under /studio/: the origin
// answers every such path with index.html, and links inside the Studio
// change the path without reloading.

export const PREFIX = '/studio/';

export const route = $state({ path: location.pathname, query: new URLSearchParams(location.search) });

function update() {
  route.path = location.pathname;
  route.query = new URLSearchParams(location.search);
}

/** Goes to a Studio path (absolute, or relative to /studio/). */
export function navigate(to, { replace = false } = {}) {
  const target = to.startsWith('/') ? to : PREFIX + to;
  if (target === location.pathname + location.search) return;
  history[replace ? 'replaceState' : 'pushState']({}, '', target);
  update();
  window.scrollTo(0, 0);
}

/** Sets query parameters of the current path (null deletes one). */
export function setQuery(params) {
  const q = new URLSearchParams(location.search);
  for (const [k, v] of Object.entries(params)) {
    if (v === null || v === undefined || v === '') q.delete(k);
    else q.set(k, String(v));
  }
  const s = q.toString();
  navigate(location.pathname + (s ? '?' + s : ''), { replace: true });
}

addEventListener('popstate', update);

// Links to Studio paths navigate in place (a click with a modifier key
// still opens a new tab).
document.addEventListener('click', (e) => {
  const a = e.target.closest?.('a[href]');
  if (!a || a.target || a.hasAttribute('download') || e.defaultPrevented || e.button !== 0) return;
  if (e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return;
  const href = a.getAttribute('href');
  if (!href.startsWith(PREFIX)) return;
  e.preventDefault();
  navigate(href);
});

/**
 * Matches the current path against patterns like "content/:ref/:id" (after
 * /studio/<guid>/) and returns the parameters, or null.
 */
export function match(pattern, path) {
  const a = pattern.split('/').filter(Boolean);
  const b = path.split('/').filter(Boolean);
  if (a.length !== b.length) return null;
  const params = {};
  for (let i = 0; i < a.length; i++) {
    if (a[i].startsWith(':')) params[a[i].slice(1)] = decodeURIComponent(b[i]);
    else if (a[i] !== b[i]) return null;
  }
  return params;
}

/** The path of a screen of an instance. */
export function href(guid, ...parts) {
  return PREFIX + [guid, ...parts].map((p) => encodeURIComponent(String(p))).join('/');
}
