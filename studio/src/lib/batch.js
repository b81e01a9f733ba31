// Workflow actions on many items or pages. The API's POST /{locale}/batch
// (issue 13) applies one action to all of them in one transaction; on an
// origin without it, the actions are sent one by one, with progress, and
// the failures are listed.
import { api, post } from './api.js';
import { has } from './capabilities.js';

/** The request of one action on one item or page. */
function single(kind, locale, id, action) {
  const path = `/${locale}/${kind}/${id}`;
  return action === 'delete' ? api('DELETE', path) : post(`${path}/${action}`);
}

/**
 * Applies action to ids ("items" or "pages") in locale, calling
 * progress(done, total) as it goes; resolves with {done, failed: [{id,
 * error}]}.
 */
export async function applyAll(kind, locale, ids, action, progress = () => {}) {
  if (await has('POST', '/{locale}/batch')) {
    try {
      await post(`/${locale}/batch`, { action, [kind]: ids });
      progress(ids.length, ids.length);
      return { done: ids.length, failed: [] };
    } catch (err) {
      // All or nothing: the problem names the first that cannot.
      return { done: 0, failed: [{ id: ids.join(', '), error: err }] };
    }
  }
  const failed = [];
  let done = 0;
  progress(0, ids.length);
  for (const id of ids) {
    try {
      await single(kind, locale, id, action);
      done++;
    } catch (error) {
      failed.push({ id, error });
    }
    progress(done + failed.length, ids.length);
  }
  return { done, failed };
}

/** The workflow actions, with the role each needs. */
export const ACTIONS = [
  { action: 'publish', label: 'Publish', role: 'publish' },
  { action: 'unpublish', label: 'Unpublish', role: 'publish' },
  { action: 'request-approval', label: 'Request approval', role: 'edit' },
  { action: 'approve', label: 'Approve', role: 'publish' },
  { action: 'decline', label: 'Decline', role: 'publish' },
  { action: 'delete', label: 'Delete', role: 'publish' },
];
