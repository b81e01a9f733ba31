// Workflow actions on many items or pages: one POST /{locale}/batch, one
// transaction on the server. All or nothing: when one copy cannot take
// the action, nothing changes and the problem names that copy and why.
import { post } from './api.js';

/**
 * Applies action to ids ("items" or "pages") in locale. Resolves with
 * {ok: true, states: Map id -> state}, or {ok: false, failed: {kind, id} or
 * null, error} when the server refused the batch.
 */
export async function applyAll(kind, locale, ids, action) {
  try {
    const r = await post(`/${locale}/batch`, { action, [kind]: ids });
    const key = kind === 'items' ? 'contentID' : 'pageID';
    return { ok: true, states: new Map((r[kind] ?? []).map((x) => [x[key], x.state])) };
  } catch (error) {
    const failed = error.doc?.failed ?? null;
    return { ok: false, failed: failed && { kind: failed.kind, id: Number(failed.id) }, error };
  }
}

/** The most ids one batch takes (the API answers 400 past it). */
export const MAX_BATCH = 500;

/** The workflow actions, with the role each needs. */
export const ACTIONS = [
  { action: 'publish', label: 'Publish', role: 'publish' },
  { action: 'unpublish', label: 'Unpublish', role: 'publish' },
  { action: 'request-approval', label: 'Request approval', role: 'edit' },
  { action: 'approve', label: 'Approve', role: 'publish' },
  { action: 'decline', label: 'Decline', role: 'publish' },
  { action: 'delete', label: 'Delete', role: 'publish' },
];
