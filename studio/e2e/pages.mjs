// The Studio's page and model scenarios: the page tree (drag and drop,
// Move up / Move down, Move to…), names and their redirections, page
// settings and types, page History, model edits with force, and what a
// role too low may do. Each checks what it published through the Fetch API
// (page, sitemap, urlredirection, item).
import { env, page, context, api, studio, assert, until, fetchAPI, manage, axe, axeCount, shot, signIn, signOut, nav, drag, forgive, fld, scenario, run } from './lib/harness.mjs';

const ids = {};

/** The top-level nodes of the nested sitemap (or the children of path). */
async function sitemapNodes(path = '') {
  const r = await fetchAPI('en-us/sitemap/nested/website');
  if (r.status !== 200) return null;
  let nodes = r.body;
  for (const part of path.split('/').filter(Boolean)) {
    nodes = nodes.find((n) => n.name === part)?.children ?? [];
  }
  return nodes.map((n) => n.title);
}

const same = (a, b) => JSON.stringify(a) === JSON.stringify(b);

/** Waits until the sitemap lists titles, in this order, under path. */
async function sitemapIs(titles, path = '') {
  await until(`the sitemap ${path || '/'} to be ${titles.join(', ')}`, async () => same(await sitemapNodes(path), titles) || (await sitemapNodes(path)));
}

/** The headings of a zone of a page, as the Fetch API shows it. */
async function liveHeadings(zone = 'MainContentZone') {
  const r = await fetchAPI(`en-us/page/${ids.sale}`);
  return r.status === 200 ? (r.body.zones?.[zone] ?? []).map((z) => fld(z.item.fields, 'heading')) : null;
}

const tree = () => page.getByRole('navigation', { name: 'Page tree' });
const node = (title) => tree().locator('li').filter({ has: page.getByRole('link', { name: title, exact: true }) }).last();

async function openPages() {
  await nav('Pages');
  await page.getByRole('heading', { name: 'Pages', level: 1 }).waitFor();
  await tree().getByRole('link').first().waitFor();
}

scenario('sign in and make the models', async () => {
  await page.goto('/studio/');
  await signIn(env.users.full);
  await page.getByRole('heading', { name: 'Content', level: 1 }).waitFor();
  await manage('/models', 'POST', { name: 'Banner', kind: 'component', fields: [{ name: 'Heading', type: 'text' }] });
  await manage('/page-models', 'POST', { name: 'Landing', zones: ['MainContentZone', 'Sidebar'] });
  await manage('/models', 'POST', {
    name: 'Post',
    kind: 'content',
    fields: [
      { name: 'Title', type: 'text' },
      { name: 'Summary', type: 'text' },
      { name: 'Legacy', type: 'text' },
    ],
  });
  await manage('/containers', 'POST', { referenceName: 'posts', model: 'Post' });
  ids.posts = [];
  for (const [title, summary] of [
    ['First post', 'One'],
    ['Second post', 'Two'],
  ]) {
    const it = await manage('/en-us/items', 'POST', { referenceName: 'posts', fields: { Title: title, Summary: summary, Legacy: `old ${summary}` } });
    await manage(`/en-us/items/${it.contentID}/publish`, 'POST');
    ids.posts.push(it.contentID);
  }
});

scenario('build a page with two components, reorder them by dragging, publish', async () => {
  await nav('Pages');
  const form = page.getByRole('form', { name: 'New page' });
  await form.getByLabel('Title').fill('Spring sale');
  await form.getByLabel('Page model').selectOption('Landing');
  await form.getByRole('button', { name: 'Create page', exact: true }).click();
  await page.waitForURL(/\/pages\/\d+$/);
  ids.sale = Number(page.url().split('/').pop());
  const zone = page.getByRole('region', { name: 'Zone MainContentZone' });
  for (const heading of ['First banner', 'Second banner']) {
    await zone.getByRole('button', { name: 'Add component', exact: true }).click();
    const dialog = page.getByRole('dialog', { name: /Add a component/ });
    await dialog.getByRole('button', { name: 'Banner', exact: true }).click();
    await dialog.getByLabel('Heading').fill(heading);
    await dialog.getByRole('button', { name: 'Add Banner', exact: true }).click();
    await dialog.waitFor({ state: 'hidden' });
  }
  const items = zone.locator('li.component');
  await until('two components', async () => (await items.count()) === 2);
  const before = (await manage(`/en-us/pages/${ids.sale}`)).zones.MainContentZone.map((z) => z.contentID);
  await axe('page editor');
  // Drag the second above the first, by its handle.
  await drag(items.nth(1).locator('.handle'), items.nth(0).locator('.handle'), { dy: -8 });
  await until('the order after the drag', async () => same((await manage(`/en-us/pages/${ids.sale}`)).zones.MainContentZone.map((z) => z.contentID), [before[1], before[0]]));
  await until('the zone redrawn in its new order', async () => (await items.nth(0).textContent()).includes(`#${before[1]}`));
  await page.getByRole('button', { name: 'Publish', exact: true }).click();
  await page.getByText('the page is now published').waitFor();
  await until('the order in the Fetch API', async () => same(await liveHeadings(), ['Second banner', 'First banner']));
  // And back with the keyboard: Move down on the first.
  await page.getByRole('button', { name: `Move down: Banner #${before[1]}` }).click();
  await until('the order after Move down', async () => same((await manage(`/en-us/pages/${ids.sale}`)).zones.MainContentZone.map((z) => z.contentID), before));
  await page.getByRole('button', { name: `Move up: Banner #${before[1]}` }).click();
  await until('the order after Move up', async () => same((await manage(`/en-us/pages/${ids.sale}`)).zones.MainContentZone.map((z) => z.contentID), [before[1], before[0]]));
});

scenario('reorder sibling pages: Move up, and by dragging (the sitemap follows)', async () => {
  for (const title of ['About', 'Contact']) {
    const p = await manage('/en-us/pages', 'POST', { title, pageModel: 'Landing' });
    await manage(`/en-us/pages/${p.pageID}/publish`, 'POST');
    ids[title.toLowerCase()] = p.pageID;
  }
  await manage(`/en-us/pages/${ids.about}/zones/Sidebar`, 'POST', { module: 'Banner', fields: { Heading: 'Side note' } });
  await manage(`/en-us/pages/${ids.about}/publish`, 'POST');
  await sitemapIs(['Spring sale', 'About', 'Contact']);
  await openPages();
  await axe('pages');
  await tree().getByRole('button', { name: 'Move up: Contact' }).click();
  await page.getByText('Moved Contact to /contact: at the top level, 2 of 3.').waitFor();
  await sitemapIs(['Spring sale', 'Contact', 'About']);
  // Drag About above Spring sale.
  await drag(node('About').locator('.handle').first(), node('Spring sale').locator('.handle').first(), { dy: -6 });
  await page.getByText('Moved About to /about: at the top level, 1 of 3.').waitFor();
  await sitemapIs(['About', 'Spring sale', 'Contact']);
});

scenario('move a page under another by dragging (the sitemap follows)', async () => {
  // Contact onto the empty list of About's children, just under About.
  await drag(node('Contact').locator('.handle').first(), node('About').locator(':scope > ul'));
  await page.getByText('Moved Contact to /about/contact: under About, 1 of 1.').waitFor();
  const moved = await manage(`/en-us/pages/${ids.contact}`);
  assert(moved.parentPageID === ids.about && moved.path === '/about/contact', `the moved page: ${moved.parentPageID} ${moved.path}`);
  await sitemapIs(['About', 'Spring sale']);
  await sitemapIs(['Contact'], '/about');
  assert((await node('About').getByRole('link', { name: 'Contact', exact: true }).count()) === 1, 'the tree shows Contact under About');
  await shot('page-tree');
});

scenario('move a page with the keyboard: Move to…', async () => {
  await tree().getByRole('button', { name: 'Move to…: Contact' }).click();
  const dialog = page.getByRole('dialog', { name: 'Move Contact' });
  await dialog.getByLabel('New parent').selectOption({ label: 'None (top level)' });
  await dialog.getByLabel('Place').selectOption({ label: 'Before Spring sale (/spring-sale)' });
  // Its own page and those under it are not offered as a parent.
  assert((await dialog.getByLabel('New parent').locator('option', { hasText: '/about/contact' }).count()) === 0, 'Move to offers the page itself as its parent');
  await axe('pages: move to');
  await dialog.getByRole('button', { name: 'Move', exact: true }).click();
  await page.getByText('Moved Contact to /contact: at the top level, 2 of 3.').waitFor();
  await sitemapIs(['About', 'Contact', 'Spring sale']);
  // Moving a page under its own child is refused, and said so.
  await tree().getByRole('button', { name: 'Move to…: About' }).click();
  const options = await page.getByRole('dialog', { name: 'Move About' }).getByLabel('New parent').locator('option').allTextContents();
  assert(!options.some((o) => o.startsWith('/about')), `Move to offers About or its children: ${options}`);
  await page.getByRole('dialog', { name: 'Move About' }).getByRole('button', { name: 'Cancel', exact: true }).click();
});

scenario('rename a page: its old path redirects to the new one', async () => {
  await tree().getByRole('link', { name: 'Spring sale', exact: true }).click();
  await page.getByRole('heading', { name: 'Spring sale', level: 1 }).waitFor();
  const settings = page.getByRole('form', { name: 'Page settings' });
  await settings.getByLabel('Name in the URL').fill('sale');
  await settings.getByText('Saving moves the page to /sale; its old path /spring-sale then redirects there (301).').waitFor();
  await settings.getByRole('button', { name: 'Save settings', exact: true }).click();
  await page.getByText('Saved. The page is now at /sale. Redirection: /spring-sale → /sale (301).').waitFor();
  await until('the page at its new path', async () => (await fetchAPI('en-us/page/website?path=/sale')).status === 200);
  const r = await until('the redirection in the Fetch API', async () => {
    const r = await fetchAPI('urlredirection');
    return r.body?.items?.some((x) => x.originUrl === '/spring-sale' && x.destinationUrl === '/sale' && x.statusCode === 301) && r;
  });
  assert(r, 'urlredirection');
  // A name in use among the siblings is refused next to the field.
  await settings.getByLabel('Name in the URL').fill('about');
  await settings.getByRole('button', { name: 'Save settings', exact: true }).click();
  forgive(409);
  await settings.locator('.field-error').filter({ hasText: 'a sibling page is already named "about"' }).waitFor();
  assert((await settings.getByLabel('Name in the URL').getAttribute('aria-invalid')) === 'true', 'the refused name is marked invalid');
  await settings.getByLabel('Name in the URL').fill('sale');
});

scenario('page settings: every setting, kept across a session that ended', async () => {
  const settings = page.getByRole('form', { name: 'Page settings' });
  await settings.getByLabel('Menu text').fill('Sale!');
  await settings.getByLabel('In menus').uncheck();
  await settings.getByLabel('Meta description').fill('Everything on sale this spring');
  await settings.getByLabel('Meta keywords').fill('sale, spring');
  await settings.getByLabel('Top of the page').fill('<script>/* top */</script>');
  await settings.getByLabel('Secure page').check();
  await settings.getByLabel("Leave out of the site's output cache").check();
  // The server ends the session; the edit survives signing in again.
  const me = await (await page.request.get('/api/v1/auth/me')).json();
  const cookie = (await context.cookies()).find((c) => c.name === 'edgecms_session');
  const out = await fetch(`${env.base}/api/v1/auth/logout`, { method: 'POST', headers: { Cookie: `edgecms_session=${cookie.value}`, 'X-CSRF-Token': me.csrfToken } });
  assert(out.status === 204, `server-side logout: ${out.status}`);
  await settings.getByRole('button', { name: 'Save settings', exact: true }).click();
  const dialog = page.getByRole('dialog', { name: 'Your session has ended' });
  await dialog.waitFor();
  forgive(401);
  await dialog.getByLabel('Password').fill(env.password);
  await dialog.getByRole('button', { name: 'Sign in', exact: true }).click();
  await page.getByText('Saved.', { exact: true }).waitFor();
  const p = await manage(`/en-us/pages/${ids.sale}`);
  assert(
    p.menuText === 'Sale!' && p.visible.menu === false && p.seo.metaDescription === 'Everything on sale this spring' && p.seo.metaKeywords === 'sale, spring' && p.scripts.top.includes('top') && p.securePage === true && p.excludeFromOutputCache === true,
    `the settings as saved: ${JSON.stringify(p)}`,
  );
  await axe('page settings');
});

scenario('page type: folder, page, dynamic and back', async () => {
  const p = await manage('/en-us/pages', 'POST', { title: 'Archive', pageModel: 'Landing' });
  await page.goto(studio(`pages/${p.pageID}`));
  await page.getByRole('heading', { name: 'Archive', level: 1 }).waitFor();
  const settings = page.getByRole('form', { name: 'Page settings' });
  const type = async (t) => {
    await settings.getByLabel('Page type').selectOption(t);
    if (t === 'dynamic') {
      await settings.getByLabel('Container of the items').selectOption('posts');
      await settings.getByLabel('Path field').selectOption('Title');
      await settings.getByLabel('Sitemap title field').selectOption('Summary');
    }
    await settings.getByRole('button', { name: 'Save settings', exact: true }).click();
    await page.getByText('Saved.', { exact: true }).waitFor();
    return (await manage(`/en-us/pages/${p.pageID}`)).pageType;
  };
  assert((await type('folder')) === 'folder', 'a folder');
  assert((await type('page')) === 'static', 'a page again');
  assert((await type('dynamic')) === 'dynamic', 'a dynamic page');
  const saved = await manage(`/en-us/pages/${p.pageID}`);
  assert(same(saved.dynamic, { referenceName: 'posts', pathField: 'Title', titleField: 'Summary' }), `the dynamic page: ${JSON.stringify(saved.dynamic)}`);
  await axe('page settings: dynamic');
  await page.getByRole('button', { name: 'Publish', exact: true }).click();
  await page.getByText('the page is now published').waitFor();
  // Each post is a node of the sitemap, titled by its Summary.
  await sitemapIs(['One', 'Two'], '/archive');
  // Back to a plain page: done, or (a server that keeps dynamic pages
  // dynamic) refused in words, the page unchanged.
  await settings.getByLabel('Page type').selectOption('page');
  await settings.getByRole('button', { name: 'Save settings', exact: true }).click();
  const outcome = await until('the answer to making it plain', async () => {
    if ((await page.getByText('Saved.', { exact: true }).count()) > 0) return 'plain';
    if ((await page.getByRole('alert').filter({ hasText: 'Saved, but the page is still a dynamic page' }).count()) > 0) return 'kept';
    return '';
  });
  const after = (await manage(`/en-us/pages/${p.pageID}`)).pageType;
  assert(after === (outcome === 'plain' ? 'static' : 'dynamic'), `the page type after making it plain: ${after} (${outcome})`);
  // A server whose page save takes pageType makes it plain.
  const doc = await (await fetch(`${env.base}/api/openapi.json`)).json();
  const takesType = !!doc.components?.schemas?.PageSave?.properties?.pageType;
  assert(!takesType || outcome === 'plain', 'the server takes pageType, yet the page stayed dynamic');
  console.log(`a dynamic page made plain again: ${outcome === 'plain' ? 'done (pageType)' : 'kept dynamic by this server, and said so'}`);
  if (outcome === 'plain') await sitemapIs([], '/archive');
});

scenario('page History: compare, restore a version, publish', async () => {
  await page.goto(studio(`pages/${ids.sale}`));
  await page.getByRole('heading', { name: 'Spring sale', level: 1 }).waitFor();
  await page.getByRole('button', { name: 'History', exact: true }).click();
  const history = page.getByRole('region', { name: 'History' });
  await history.getByRole('columnheader', { name: 'Version' }).waitFor();
  // The version with both banners in the order they were added.
  const current = await manage(`/en-us/pages/${ids.sale}`);
  const [second, first] = current.zones.MainContentZone.map((z) => z.contentID);
  const list = await manage(`/en-us/pages/${ids.sale}/versions?take=100`);
  let old = null;
  for (const v of list.items) {
    const at = await manage(`/en-us/pages/${ids.sale}/versions/${v.versionID}`);
    if (same(at.zones.MainContentZone, [first, second])) {
      old = v.versionID;
      break;
    }
  }
  assert(old, `no version with the first order: ${JSON.stringify(list.items)}`);
  assert((await history.getByRole('row').count()) === list.items.length + 1, 'one row per version');
  await history.getByRole('button', { name: `Compare ${old}`, exact: true }).click();
  const diff = history.getByRole('table', { name: `Version ${old} and the working copy` });
  await diff.getByRole('row').filter({ hasText: 'MainContentZone: components in order (changed)' }).waitFor();
  await diff.getByRole('row').filter({ hasText: 'menuText (changed)' }).waitFor();
  // Unchanged settings show on demand.
  assert((await diff.getByRole('cell', { name: 'title', exact: true }).count()) === 0, 'changes only, at first');
  await history.getByLabel('Changes only').uncheck();
  await diff.getByRole('cell', { name: 'title', exact: true }).waitFor();
  await history.getByLabel('Changes only').check();
  await axe('page history');
  await diff.scrollIntoViewIfNeeded();
  await shot('page-history');
  await history.getByRole('button', { name: `Restore ${old}`, exact: true }).click();
  const ask = page.getByRole('alertdialog', { name: `Restore version ${old}?` });
  await ask.getByRole('button', { name: 'Restore', exact: true }).click();
  await history.getByText(`Version ${old} restored as a new working version.`).waitFor();
  await until('the restored order', async () => same((await manage(`/en-us/pages/${ids.sale}`)).zones.MainContentZone.map((z) => z.contentID), [first, second]));
  const zone = page.getByRole('region', { name: 'Zone MainContentZone' });
  await until('the zone redrawn', async () => (await zone.locator('li.component').nth(0).textContent()).includes(`#${first}`));
  await page.getByRole('button', { name: 'Publish', exact: true }).click();
  await page.getByText('the page is now published').waitFor();
  await until('the restored order in the Fetch API', async () => same(await liveHeadings(), ['First banner', 'Second banner']));
});

scenario('edit a content model: rename, add, and remove a field with force', async () => {
  await nav('Models');
  await page.getByRole('button', { name: 'Edit model Post', exact: true }).click();
  const form = page.getByRole('form', { name: 'Model Post' });
  await form.getByLabel('Name of field 2').fill('Excerpt');
  await form.getByText('renamed from Summary: its values are kept').waitFor();
  await form.getByRole('button', { name: 'Remove field 3', exact: true }).click();
  await form.getByRole('button', { name: 'Add field', exact: true }).click();
  await form.getByLabel('Name of field 3').fill('Tags');
  await form.getByRole('button', { name: 'Move up: field 3', exact: true }).click();
  assert((await form.getByLabel('Name of field 2').inputValue()) === 'Tags', 'Move up put Tags second');
  await form.getByRole('button', { name: 'Save model', exact: true }).click();
  forgive(409);
  const held = form.getByRole('alert').filter({ hasText: 'this change removes values' });
  await held.getByText('Legacy: 2 items hold a value').waitFor();
  assert((await held.textContent()).includes('?force=true'), 'the force confirmation explains force');
  assert(same((await manage('/models/Post')).fields.map((f) => f.name), ['Title', 'Summary', 'Legacy']), 'the refused change left the model as it was');
  await axe('models: force');
  await held.scrollIntoViewIfNeeded();
  await shot('models-force');
  await held.getByRole('button', { name: 'Remove the fields and their values', exact: true }).click();
  await page.getByText('Model Post saved.').waitFor();
  const m = await manage('/models/Post');
  assert(same(m.fields.map((f) => f.name), ['Title', 'Tags', 'Excerpt']), `the model as saved, in its order: ${JSON.stringify(m.fields)}`);
  await until('the renamed field in the Fetch API', async () => {
    const r = await fetchAPI(`en-us/item/${ids.posts[0]}`);
    return r.status === 200 && fld(r.body.fields, 'excerpt') === 'One' && fld(r.body.fields, 'legacy') === undefined;
  });
});

scenario('edit a page model: rename a zone, remove one with force', async () => {
  await page.getByRole('button', { name: 'Edit page model Landing', exact: true }).click();
  const form = page.getByRole('form', { name: 'Page model Landing' });
  await form.getByLabel('Zone 1', { exact: true }).fill('Main');
  await form.getByRole('button', { name: 'Remove zone 2', exact: true }).click();
  await form.getByRole('button', { name: 'Save page model', exact: true }).click();
  forgive(409);
  const held = form.getByRole('alert').filter({ hasText: 'this change removes components' });
  await held.getByText('Sidebar: components on 1 page').waitFor();
  await held.getByRole('button', { name: 'Remove the zones and their components', exact: true }).click();
  await page.getByText('Page model Landing saved.').waitFor();
  assert(same((await manage('/page-models/Landing')).zones, ['Main']), 'the page model as saved');
  await until('the renamed zone in the Fetch API', async () => same(await liveHeadings('Main'), ['First banner', 'Second banner']));
});

scenario('settings: the default locale, and deleting a channel', async () => {
  await nav('Settings');
  await page.getByRole('tab', { name: 'Locales' }).click();
  await page.getByRole('button', { name: 'Make default: fr-ca', exact: true }).click();
  await page.getByText('fr-ca is the default locale now.').waitFor();
  assert((await manage('/locales')).find((l) => l.code === 'fr-ca').isDefault, 'fr-ca is the default');
  await page.getByRole('button', { name: 'Make default: en-us', exact: true }).click();
  await page.getByText('en-us is the default locale now.').waitFor();
  await page.getByRole('tab', { name: 'Channels' }).click();
  await page.getByLabel('Name').fill('kiosk');
  await page.getByRole('button', { name: 'Add channel', exact: true }).click();
  await page.getByRole('button', { name: 'Delete channel kiosk', exact: true }).click();
  await axe('settings: delete a channel');
  await page.getByRole('alertdialog', { name: 'Delete the channel kiosk?' }).getByRole('button', { name: 'Delete', exact: true }).click();
  await until('the channel gone', async () => !(await manage('/channels')).some((c) => c.name === 'kiosk'));
  // website is the main sitemap: it stays.
  assert(await page.getByRole('button', { name: 'Delete channel website', exact: true }).isDisabled(), 'Delete channel website is disabled');
});

scenario('a role too low sees the actions disabled and the API refuses them', async () => {
  await signOut();
  await signIn(env.users.edit);
  await page.getByRole('heading', { name: 'Content', level: 1 }).waitFor();
  await page.goto(studio(`pages/${ids.sale}`));
  await until('Save enabled for the edit role', () => page.getByRole('button', { name: 'Save', exact: true }).isEnabled());
  for (const name of ['Publish', 'Unpublish', 'Delete', 'Approve']) {
    assert(await page.getByRole('button', { name, exact: true }).isDisabled(), `${name} is disabled for the edit role`);
  }
  const me = await (await page.request.get('/api/v1/auth/me')).json();
  const publish = await page.request.post(`${api}/en-us/pages/${ids.sale}/publish`, { headers: { 'X-CSRF-Token': me.csrfToken } });
  assert(publish.status() === 403, `the API answers ${publish.status()} to a page publish by the edit role`);
  await nav('Models');
  await page.getByRole('button', { name: 'Edit model Post', exact: true }).click();
  const form = page.getByRole('form', { name: 'Model Post' });
  assert(await form.getByRole('button', { name: 'Save model', exact: true }).isDisabled(), 'Save model is disabled for the edit role');
  for (const name of ['New content model', 'New page model', 'Delete model Post']) {
    assert(await page.getByRole('button', { name, exact: true }).isDisabled(), `${name} is disabled for the edit role`);
  }
  const put = await page.request.put(`${api}/models/Post`, { headers: { 'X-CSRF-Token': me.csrfToken }, data: { fields: [{ name: 'Title', type: 'text' }] } });
  assert(put.status() === 403, `the API answers ${put.status()} to a model edit by the edit role`);
  await axe('models: edit role');
});

await run({ minAxe: 8 });
