// Titles of linked items, for the pickers: one listing per container and
// locale, kept while the Studio is open.
import { get } from './api.js';
import { title } from './format.js';

const cache = new Map();

/** Resolves to a Map of contentID -> title of a container's items. */
export function titles(container, locale) {
  const key = container + '\u0000' + locale;
  if (!cache.has(key)) {
    const p = (async () => {
      const c = await get(`/containers/${encodeURIComponent(container)}`);
      const model = await get(`/models/${encodeURIComponent(c.model)}`);
      const page = await get(`/${locale}/items?container=${encodeURIComponent(container)}&take=250`);
      return new Map(page.items.map((i) => [i.contentID, title(i, model)]));
    })();
    p.catch(() => cache.delete(key));
    cache.set(key, p);
  }
  return cache.get(key);
}

/** Forgets the titles of a container (after its items changed). */
export function forget(container) {
  for (const k of cache.keys()) if (k.startsWith(container + '\u0000')) cache.delete(k);
}
