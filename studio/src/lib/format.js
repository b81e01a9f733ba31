// Names and formats the screens share.
import { format, formatDistanceToNowStrict } from 'date-fns';

export const STATES = {
  1: 'Staging',
  2: 'Published',
  3: 'Deleted',
  4: 'Approved',
  5: 'Awaiting approval',
  6: 'Declined',
  7: 'Unpublished',
};

export function stateName(s) {
  return STATES[s] ?? (s ? String(s) : 'New');
}

/** A date for tables: 2026-03-01 14:05, or '' for none. */
export function when(iso) {
  if (!iso) return '';
  const d = new Date(iso);
  return isNaN(d) ? '' : format(d, 'yyyy-MM-dd HH:mm');
}

/** How long ago: "3 minutes ago". */
export function ago(iso) {
  return iso ? formatDistanceToNowStrict(new Date(iso), { addSuffix: true }) : '';
}

export function bytes(n) {
  if (!n && n !== 0) return '';
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KB`;
  return `${(n / 1024 / 1024).toFixed(1)} MB`;
}

/** A short text of an item for lists and pickers: its first text field. */
export function title(item, model) {
  const f = item?.fields || {};
  const names = (model?.fields || []).filter((x) => x.type === 'text').map((x) => x.name);
  for (const n of [...names, ...Object.keys(f)]) if (typeof f[n] === 'string' && f[n]) return f[n];
  return `#${item?.contentID ?? ''}`;
}

/** A locale as menus show it: "English (en-us)". */
export function localeLabel(l) {
  return l.name.includes(l.code) ? l.name : `${l.name} (${l.code})`;
}
