// What a file of Studio scenarios needs, for files other than studio.mjs:
// Debian's Chromium driven by playwright-core against the origin that
// studio/e2e_test.go starts (its address, users and keys in STUDIO_E2E),
// axe-core, the Fetch API, and the run loop that prints one JSON line per
// scenario ({name, ok, error}) and fails on console errors and unexpected
// failed requests.
import { chromium } from 'playwright-core';
import { readFileSync, mkdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';

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
export const page = await context.newPage();

const consoleErrors = [];
const failedRequests = [];
page.on('console', (m) => {
  if (m.type() === 'error') consoleErrors.push(m.text());
  if (process.env.STUDIO_E2E_DEBUG) console.error(`console ${m.type()}: ${m.text()}`);
});
page.on('pageerror', (e) => {
  consoleErrors.push(`uncaught: ${e.message}`);
  if (process.env.STUDIO_E2E_DEBUG) console.error(`uncaught: ${e.stack}`);
});
page.on('response', (r) => {
  if (r.status() >= 400) failedRequests.push({ status: r.status(), method: r.request().method(), url: r.url() });
});

// Failed requests a scenario caused on purpose, by status.
const forgiven = {};
/** Forgets one failed request of status (and Chromium's console line for it). */
export function forgive(status) {
  forgiven[status] = (forgiven[status] ?? 0) + 1;
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

/** A management API call in the browser's session (with its CSRF token). */
export async function manage(path, method = 'GET', data) {
  const headers = {};
  if (method !== 'GET') headers['X-CSRF-Token'] = (await (await page.request.get('/api/v1/auth/me')).json()).csrfToken;
  const res = await page.request.fetch(api + path, { method, data, headers });
  assert(res.ok(), `${method} ${path}: ${res.status()} ${await res.text()}`);
  return res.status() === 204 ? null : res.json();
}

const axeChecked = new Set();
/** Runs axe-core on the current screen: no serious or critical violation, no secret in the page. */
export async function axe(screen) {
  await page.evaluate(axeSource);
  const r = await page.evaluate(() => window.axe.run(document, { resultTypes: ['violations'] }));
  const bad = r.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
  assert(!bad.length, `axe on ${screen}: ${bad.map((v) => `${v.id} (${v.impact}): ${v.nodes.map((n) => n.target.join(' ')).slice(0, 3).join('; ')}`).join(' | ')}`);
  axeChecked.add(screen);
  const html = await page.content();
  for (const s of env.secrets) assert(!html.includes(s), `${screen}: the page holds a secret`);
}
export const axeCount = () => axeChecked.size;

export async function shot(name) {
  if (!env.screenshots) return;
  mkdirSync(env.screenshots, { recursive: true });
  await page.screenshot({ path: join(env.screenshots, `studio-${name}.png`), fullPage: false });
}

export async function signIn(email, password = env.password) {
  await page.getByLabel('Email').fill(email);
  await page.getByLabel('Password').fill(password);
  await page.getByRole('button', { name: 'Sign in', exact: true }).click();
}

export async function signOut() {
  await page.getByRole('button', { name: 'Sign out', exact: true }).click();
  await page.getByRole('button', { name: 'Sign in', exact: true }).waitFor();
}

export async function nav(name) {
  await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name, exact: true }).click();
}

/**
 * Drags the element from onto the element to with the mouse, as a person
 * does: in small steps with pauses (SortableJS ignores a target while it
 * animates), and a last wiggle at the drop point; dy shifts the drop point
 * from the target's centre.
 */
export async function drag(from, to, { dy = 0 } = {}) {
  const pause = (ms) => new Promise((r) => setTimeout(r, ms));
  const a = await from.boundingBox();
  const [x0, y0] = [a.x + a.width / 2, a.y + a.height / 2];
  await page.mouse.move(x0, y0);
  await page.mouse.down();
  await page.mouse.move(x0 + 4, y0 + 4, { steps: 2 });
  const b = await to.boundingBox();
  const [x1, y1] = [b.x + b.width / 2, b.y + b.height / 2 + dy];
  for (let i = 1; i <= 15; i++) {
    await page.mouse.move(x0 + ((x1 - x0) * i) / 15, y0 + ((y1 - y0) * i) / 15);
    await pause(30);
  }
  for (const d of [1, -1, 0]) {
    await pause(200);
    await page.mouse.move(x1, y1 + d);
  }
  await page.mouse.up();
}

const scenarios = [];
/** Adds a scenario; they run in order, each building on the ones before. */
export const scenario = (name, fn) => scenarios.push({ name, fn });

/** The last scenario of a file: no console error, only the failed requests forgiven. */
export function checkConsole(minAxe) {
  scenario('no console errors and only expected failed requests', async () => {
    const consoleStatus = (e) => e.match(/the server responded with a status of (\d+)/)?.[1];
    const unexpected = unforgiven(consoleErrors, consoleStatus).filter((e) => consoleStatus(e) !== '401');
    assert(!unexpected.length, `console errors: ${unexpected.join(' | ')}; failed requests: ${JSON.stringify(failedRequests)}`);
    const bad = unforgiven(failedRequests.filter((f) => !(f.status === 401 && f.url.endsWith('/api/v1/auth/me'))), (f) => String(f.status));
    assert(!bad.length, `failed requests: ${JSON.stringify(bad)}`);
    assert(axeChecked.size >= minAxe, `axe ran on ${[...axeChecked].join(', ')}`);
  });
}

/** Runs the scenarios: after a failure, the rest are reported as not run. */
export async function run() {
  let failed = 0;
  for (const s of scenarios) {
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
        if (env.screenshots) await page.screenshot({ path: join(env.screenshots, `failed-${s.name.replace(/\W+/g, '-')}.png`), fullPage: true });
      } catch {}
      console.log(JSON.stringify({ name: s.name, ok: false, error: `${err.message}${where}` }));
    }
    console.error(`${s.name}: ${Date.now() - started} ms`);
  }
  await browser.close();
  process.exit(failed ? 1 : 0);
}
