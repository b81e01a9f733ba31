// What every scenario file of e2e/ shares: Debian's Chromium driven by
// playwright-core against the origin that studio/e2e_test.go starts (its
// address, users and keys come in STUDIO_E2E), axe-core, the Fetch and
// management API reads, and the runner that prints one JSON line per
// scenario ({name, ok, error}) and fails the run on a console error or a
// failed request no scenario caused on purpose.
import { chromium } from 'playwright-core';
import { readFileSync, mkdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join, basename } from 'node:path';

export const env = JSON.parse(process.env.STUDIO_E2E);
const require = createRequire(import.meta.url);
const axeSource = readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8');
export const TIMEOUT = 10000;

export const browser = await chromium.launch({
  executablePath: '/usr/bin/chromium',
  headless: true,
  args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
});
export const context = await browser.newContext({ baseURL: env.base, viewport: { width: 1280, height: 900 } });
context.setDefaultTimeout(TIMEOUT);

const consoleErrors = [];
const failedRequests = [];
/** Watches a page of the context: its console errors and failed requests count against the run. */
export function watch(p) {
  p.on('console', (m) => {
    if (m.type() === 'error') consoleErrors.push(m.text());
    if (process.env.STUDIO_E2E_DEBUG) console.error(`console ${m.type()}: ${m.text()}`);
  });
  p.on('pageerror', (e) => {
    consoleErrors.push(`uncaught: ${e.message}`);
    if (process.env.STUDIO_E2E_DEBUG) console.error(`uncaught: ${e.stack}`);
  });
  p.on('response', (r) => {
    if (r.status() >= 400) failedRequests.push({ status: r.status(), method: r.request().method(), url: r.url() });
  });
  return p;
}
export const page = watch(await context.newPage());

const forgiven = {}; // status -> failed requests of it caused on purpose
/** Forgives one failed request of status a scenario just caused on purpose (and Chromium's console line for it). */
export function forgive(status, n = 1) {
  forgiven[status] = (forgiven[status] ?? 0) + n;
}
function unforgiven(list, statusOf) {
  const left = { ...forgiven };
  return list.filter((x) => {
    const st = statusOf(x);
    if (st && left[st] > 0) {
      left[st]--;
      return false;
    }
    return true;
  });
}

export const api = `/api/v1/instance/${env.guid}`;
export const studio = (path = '') => `/studio/${env.guid}/${path}`;

/** A field of a Fetch API item, whatever the case of its name. */
export function fld(fields, name) {
  const k = Object.keys(fields || {}).find((x) => x.toLowerCase() === name.toLowerCase());
  return k === undefined ? undefined : fields[k];
}

export function assert(cond, message) {
  if (!cond) throw new Error(message);
}

/** Waits until fn returns a truthy value (polling), or fails with what. */
export async function until(what, fn, timeout = TIMEOUT) {
  const end = Date.now() + timeout;
  let last;
  for (;;) {
    try {
      last = await fn();
      if (last) return last;
    } catch (err) {
      last = err.message;
    }
    if (Date.now() > end) throw new Error(`timed out waiting for ${what} (last: ${JSON.stringify(last)?.slice(0, 300)})`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** A Fetch API read with the fetch (or preview) key, from outside the browser. */
export async function fetchAPI(path, key = env.fetchKey) {
  const res = await fetch(`${env.base}/${env.guid}/${key === env.previewKey ? 'preview' : 'fetch'}/${path}`, { headers: { APIKey: key } });
  return { status: res.status, body: res.status === 200 ? await res.json() : await res.text() };
}

/** A management API call in the browser's session (with its CSRF token for a change). */
export async function manage(path, method = 'GET', data) {
  let headers = {};
  if (method !== 'GET') headers['X-CSRF-Token'] = (await (await page.request.get('/api/v1/auth/me')).json()).csrfToken;
  const res = await page.request.fetch(api + path, { method, headers, data });
  assert(res.ok(), `${method} ${path}: ${res.status()} ${await res.text()}`);
  return res.status() === 204 ? null : res.json();
}

const axeChecked = new Set();
/** Runs axe-core on the current screen of p: no serious or critical violation, and no secret in the page. */
export async function axe(screen, p = page) {
  await p.evaluate(axeSource);
  const r = await p.evaluate(() => window.axe.run(document, { resultTypes: ['violations'] }));
  const bad = r.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
  assert(!bad.length, `axe on ${screen}: ${bad.map((v) => `${v.id} (${v.impact}): ${v.nodes.map((n) => n.target.join(' ')).slice(0, 3).join('; ')}`).join(' | ')}`);
  axeChecked.add(screen);
  const html = await p.content();
  for (const s of env.secrets) assert(!html.includes(s), `${screen}: the page holds a secret`);
}

export async function shot(name, p = page) {
  if (!env.screenshots) return;
  mkdirSync(env.screenshots, { recursive: true });
  await p.screenshot({ path: join(env.screenshots, `studio-${name}.png`), fullPage: false });
}

export async function signIn(email, password = env.password, p = page) {
  await p.getByLabel('Email').fill(email);
  await p.getByLabel('Password').fill(password);
  await p.getByRole('button', { name: 'Sign in', exact: true }).click();
}

export const axeCount = () => axeChecked.size;

export async function signOut(p = page) {
  await p.getByRole('button', { name: 'Sign out', exact: true }).click();
  await p.getByRole('button', { name: 'Sign in', exact: true }).waitFor();
}

export async function nav(name, p = page) {
  await p.getByRole('navigation', { name: 'Main' }).getByRole('link', { name, exact: true }).click();
}

/**
 * Drags the element from onto the element to with the mouse, as a person
 * does: in small steps with pauses (SortableJS ignores a target while it
 * animates), and a last wiggle at the drop point; dy shifts the drop point
 * from the target's centre.
 */
export async function drag(from, to, { dy = 0 } = {}, p = page) {
  const pause = (ms) => new Promise((r) => setTimeout(r, ms));
  const a = await from.boundingBox();
  const [x0, y0] = [a.x + a.width / 2, a.y + a.height / 2];
  await p.mouse.move(x0, y0);
  await p.mouse.down();
  await p.mouse.move(x0 + 4, y0 + 4, { steps: 2 });
  const b = await to.boundingBox();
  const [x1, y1] = [b.x + b.width / 2, b.y + b.height / 2 + dy];
  for (let i = 1; i <= 15; i++) {
    await p.mouse.move(x0 + ((x1 - x0) * i) / 15, y0 + ((y1 - y0) * i) / 15);
    await pause(30);
  }
  for (const d of [1, -1, 0]) {
    await pause(200);
    await p.mouse.move(x1, y1 + d);
  }
  await p.mouse.up();
}

const scenarios = [];
/** Declares a scenario; they run in order, each building on the ones before. */
export const scenario = (name, fn) => scenarios.push({ name, fn });

/**
 * Runs the scenarios declared, then checks the console and the failed
 * requests (the 401 of a session check before sign-in is expected), and
 * that axe ran on at least minAxe screens; exits.
 */
export async function run({ minAxe = 1 } = {}) {
  scenario('no console errors and only expected failed requests', async () => {
    const consoleStatus = (e) => e.match(/the server responded with a status of (\d+)/)?.[1];
    const unexpected = unforgiven(consoleErrors, consoleStatus).filter((e) => consoleStatus(e) !== '401');
    assert(!unexpected.length, `console errors: ${unexpected.join(' | ')}; failed requests: ${JSON.stringify(failedRequests)}`);
    const bad = unforgiven(failedRequests.filter((f) => !(f.status === 401 && f.url.endsWith('/api/v1/auth/me'))), (f) => String(f.status));
    assert(!bad.length, `failed requests: ${JSON.stringify(bad)}`);
    assert(axeChecked.size >= minAxe, `axe ran on ${[...axeChecked].join(', ')}`);
  });
  // After a failure the rest are reported as not run, rather than failing
  // for the same reason.
  let failed = 0;
  for (const [i, s] of scenarios.entries()) {
    const started = Date.now();
    if (failed) {
      console.log(JSON.stringify({ name: s.name, ok: false, error: 'not run: an earlier scenario failed' }));
      continue;
    }
    try {
      await s.fn();
      console.log(JSON.stringify({ name: s.name, ok: true }));
    } catch (err) {
      failed++;
      let where = '';
      try {
        where = ` (at ${page.url()})`;
        if (env.screenshots) await page.screenshot({ path: join(env.screenshots, `failed-${basename(process.argv[1], '.mjs')}-${i}.png`), fullPage: true });
      } catch {}
      console.log(JSON.stringify({ name: s.name, ok: false, error: `${err.message}${where}` }));
    }
    console.error(`${s.name}: ${Date.now() - started} ms`);
  }
  await browser.close();
  process.exit(failed ? 1 : 0);
}
