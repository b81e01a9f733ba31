// The signed-in user, the instance being worked on and its locales: the
// state every screen reads. The CSRF token lives here (in memory only);
// the session id is in an HttpOnly cookie the page never sees.

const ranks = { edit: 1, publish: 2, manage: 3, full: 4 };

export const session = $state({
  user: null, // {id, email, operator}
  instances: [], // [{guid, role}]
  csrf: '',
  idleTimeout: 0,
  guid: '', // the instance in the URL
  locales: [], // [{code, name, isDefault}] of that instance
  locale: '', // the working locale
  expired: false, // the session ended: the sign-in dialog is shown over the screen
  ready: false, // GET /auth/me has answered
});

/** The role of the user on the current instance ('' when none). */
export function role() {
  return session.instances.find((i) => i.guid === session.guid)?.role ?? '';
}

/** Whether the user's role on the current instance includes need. */
export function can(need) {
  return (ranks[role()] ?? 0) >= ranks[need];
}

/** Takes the answer of sign-in or GET /auth/me. */
export function signedIn(ans) {
  session.user = ans.user;
  session.instances = ans.instances;
  session.csrf = ans.csrfToken;
  session.idleTimeout = ans.idleTimeout;
  session.expired = false;
  const resume = waiting;
  waiting = [];
  resume.forEach((r) => r());
}

export function signedOut() {
  session.user = null;
  session.instances = [];
  session.csrf = '';
  session.locales = [];
  session.expired = false;
}

let waiting = [];

/**
 * Marks the session as ended by the server (idle time, lifetime, sign-out
 * elsewhere): the sign-in dialog opens over the current screen, which keeps
 * its state. Resolves once the user has signed in again.
 */
export function expire() {
  session.expired = true;
  return new Promise((resolve) => waiting.push(resolve));
}
