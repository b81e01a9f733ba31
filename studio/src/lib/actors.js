// Who made a change, as the API records it ("user:<id>", "token:<id>"),
// in words: the user's email or the token's name when the role may read
// them (full), "you" for the signed-in user, the bare id otherwise.
import { get } from './api.js';
import { session, can } from './session.svelte.js';

const names = new Map(); // guid and user -> Promise<Map actor -> name>

function load(key) {
  if (!names.has(key)) {
    const p = (async () => {
      const out = new Map();
      if (!can('full')) return out;
      const [users, tokens] = await Promise.all([get('/users'), get('/tokens')]);
      for (const u of users) out.set(`user:${u.id}`, u.email);
      for (const t of tokens) out.set(`token:${t.id}`, `token ${t.name}`);
      return out;
    })();
    p.catch(() => names.delete(key));
    names.set(key, p);
  }
  return names.get(key);
}

/** Resolves to a function naming an actor. */
export async function actorNames() {
  let known = new Map();
  try {
    known = await load(`${session.guid} ${session.user?.id}`);
  } catch {
    // the ids are shown instead
  }
  return (actor) => {
    if (!actor) return 'the system';
    if (session.user && actor === `user:${session.user.id}`) return `you (${session.user.email})`;
    if (known.has(actor)) return known.get(actor);
    const [kind, id] = actor.split(':');
    return kind === 'token' ? `token #${id}` : kind === 'user' ? `user #${id}` : actor;
  };
}
