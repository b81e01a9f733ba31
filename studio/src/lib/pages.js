// Every page of a channel in a locale, in tree order: the pages list
// answers at most 500 at a time, so the Studio reads it window by window.
import { get } from './api.js';

export async function channelPages(locale, channel) {
  const out = [];
  for (;;) {
    const q = new URLSearchParams({ channel, take: '500', skip: String(out.length) });
    const page = await get(`/${locale}/pages?${q}`);
    const items = page.items ?? page;
    out.push(...items);
    if (!page.items || !items.length || out.length >= page.totalCount) return out;
  }
}
