// The content screens on the second edition of the management API, in a
// real browser: an item's life (create, save, publish, a draft not live),
// its History (versions with actor and date, a field-by-field comparison,
// Restore and Discard draft, each checked through the Fetch API after
// publishing), a stale edit caught by If-Match in a second tab, and the
// items table searched, filtered, sorted and paged by the server, with
// batch actions sent as one all-or-nothing call.
import { env, context, page, watch, forgive, studio, fld, assert, until, fetchAPI, manage, axe, shot, signIn, scenario, run } from './lib/harness.mjs';

const ids = {};
const title = () => page.getByRole('textbox', { name: 'Title', exact: true });
const history = () => page.getByRole('region', { name: 'History' });

/** The management API requests the page sends while fn runs. */
async function requestsDuring(fn, p = page) {
  const seen = [];
  const on = (r) => r.url().includes('/api/v1/instance/') && seen.push({ method: r.method(), url: r.url() });
  p.on('request', on);
  try {
    await fn();
  } finally {
    p.off('request', on);
  }
  return seen;
}

async function openItem(id, p = page) {
  await p.goto(studio(`content/notes/${id}`));
  await until('the item loaded', async () => (await p.getByRole('textbox', { name: 'Title', exact: true }).inputValue()) !== '' && p.getByRole('button', { name: 'Save', exact: true }).isEnabled());
}

async function openList(query = '') {
  await page.goto(studio(`content/notes${query}`));
  await page.getByRole('heading', { name: 'notes', level: 1 }).waitFor();
}

/** The titles in the items table, in order. */
async function titles() {
  await until('the table loaded', async () => (await page.getByRole('table').getAttribute('aria-busy')) === 'false');
  return page.getByRole('table').getByRole('row').locator('td:nth-child(3)').allTextContents();
}

scenario('sign in; a model and a container of 32 notes', async () => {
  await page.goto('/studio/');
  await page.getByRole('button', { name: 'Sign in', exact: true }).waitFor();
  await signIn(env.users.full);
  await page.getByRole('heading', { name: 'Content', level: 1 }).waitFor();
  await manage('/models', 'POST', { name: 'Note', kind: 'content', fields: [{ name: 'Title', type: 'text', required: true }, { name: 'Body', type: 'text' }] });
  await manage('/containers', 'POST', { referenceName: 'notes', model: 'Note' });
  const made = [];
  for (let i = 1; i <= 30; i++) made.push(`Note ${String(i).padStart(2, '0')}`);
  made.push('Café crème recipe', 'École summer notes');
  for (const t of made) await manage('/en-us/items', 'POST', { referenceName: 'notes', fields: { Title: t, Body: `The body of ${t}` } });
  const all = await manage('/en-us/items?container=notes&take=1');
  assert(all.totalCount === 32, `notes made: ${all.totalCount}`);
});

scenario('create, save and publish an item', async () => {
  await openList();
  await page.getByRole('link', { name: 'New', exact: true }).click();
  await page.getByRole('heading', { name: 'New item in notes' }).waitFor();
  await title().fill('Versioned note');
  await page.getByLabel('Body', { exact: true }).fill('The first text');
  await page.getByRole('button', { name: 'Save', exact: true }).click();
  await page.waitForURL(/\/content\/notes\/\d+$/);
  ids.item = Number(page.url().split('/').pop());
  await page.getByText(/^version \d+/).waitFor();
  await page.getByRole('button', { name: 'Publish', exact: true }).click();
  await page.getByText('the item is now published').waitFor();
  await until('the item in the Fetch API', async () => fld((await fetchAPI(`en-us/item/${ids.item}`)).body?.fields, 'title') === 'Versioned note');
});

scenario('edit it, see the draft not live, and publish', async () => {
  await title().fill('Versioned note, second');
  await page.getByRole('button', { name: 'Save', exact: true }).click();
  await page.getByText('Saved.').waitFor();
  const live = await fetchAPI(`en-us/item/${ids.item}`);
  assert(fld(live.body.fields, 'title') === 'Versioned note', `the draft is live: ${JSON.stringify(live.body.fields)}`);
  await until('the draft in preview', async () => fld((await fetchAPI(`en-us/item/${ids.item}`, env.previewKey)).body?.fields, 'title') === 'Versioned note, second');
  await page.getByRole('button', { name: 'Publish', exact: true }).click();
  await page.getByText('the item is now published').waitFor();
  await until('the edit in the Fetch API', async () => fld((await fetchAPI(`en-us/item/${ids.item}`)).body?.fields, 'title') === 'Versioned note, second');
});

scenario('history: every version with its actor and date, and a field-by-field comparison', async () => {
  await page.getByRole('button', { name: 'History', exact: true }).click();
  const h = history();
  const versions = (await manage(`/en-us/items/${ids.item}/versions`)).items;
  assert(versions.length >= 2, `versions: ${JSON.stringify(versions)}`);
  [ids.newest, ids.first] = [versions[0].versionID, versions.at(-1).versionID];
  const rows = h.getByRole('table').first().getByRole('row');
  await until('a row per version', async () => (await rows.count()) === versions.length + 1);
  const firstRow = rows.filter({ has: page.getByRole('cell', { name: String(ids.first), exact: true }) });
  // Actors are named once the users and tokens are read (ids until then).
  await until('the first version names its actor', async () => (await firstRow.textContent()).includes('you ('));
  const text = await firstRow.textContent();
  assert(text.includes('you (full@example.com)') && text.includes('created') && /\d{4}-\d\d-\d\d \d\d:\d\d/.test(text), `the first version's row: ${text}`);
  await h.getByRole('button', { name: `Changes in ${ids.newest}`, exact: true }).click();
  const diff = h.getByRole('table', { name: /Field by field/ });
  const changed = diff.getByRole('row', { name: /Title \(changed\)/ });
  await changed.waitFor();
  const cells = await changed.getByRole('cell').allTextContents();
  assert(cells[0] === 'Versioned note' && cells[1] === 'Versioned note, second', `the Title compared: ${cells}`);
  assert((await diff.getByRole('row', { name: /Body/ }).count()) === 0, 'an unchanged field is listed with "changed fields only"');
  // Any two versions, with every field.
  await h.getByLabel('From version').selectOption(String(ids.first));
  await h.getByLabel('To version').selectOption(String(ids.newest));
  await h.getByLabel('Changed fields only').uncheck();
  await h.getByRole('button', { name: 'Compare', exact: true }).click();
  await diff.getByRole('row', { name: /^Body/ }).waitFor();
  await axe('item history');
  await shot('item-history');
});

scenario('restore an old version, then publish it', async () => {
  const h = history();
  await h.getByRole('button', { name: `Restore ${ids.first}`, exact: true }).click();
  const ask = page.getByRole('alertdialog', { name: `Restore version ${ids.first}?` });
  await ask.waitFor();
  await axe('restore confirmation');
  await ask.getByRole('button', { name: 'Restore', exact: true }).click();
  await page.getByText(`Version ${ids.first} restored as a new version`).waitFor();
  await until('the restored title in the form', async () => (await title().inputValue()) === 'Versioned note');
  const versions = (await manage(`/en-us/items/${ids.item}/versions`)).items;
  assert(versions[0].action === 'restore' && versions[0].versionID > ids.newest && versions.length >= 3, `a restore is a new version: ${JSON.stringify(versions.slice(0, 2))}`);
  await history().getByRole('cell', { name: 'restored' }).waitFor();
  // Restored, not yet live.
  assert(fld((await fetchAPI(`en-us/item/${ids.item}`)).body.fields, 'title') === 'Versioned note, second', 'the restore is live before publishing');
  await page.getByRole('button', { name: 'Publish', exact: true }).click();
  await page.getByText('the item is now published').waitFor();
  await until('the restored version in the Fetch API', async () => {
    const f = (await fetchAPI(`en-us/item/${ids.item}`)).body?.fields;
    return fld(f, 'title') === 'Versioned note' && fld(f, 'body') === 'The first text';
  });
});

scenario('discard a draft', async () => {
  await title().fill('A draft to throw away');
  await page.getByRole('button', { name: 'Save', exact: true }).click();
  await page.getByText('Saved.').waitFor();
  const discard = history().getByRole('button', { name: 'Discard draft', exact: true });
  await until('Discard draft enabled', () => discard.isEnabled());
  await discard.click();
  const ask = page.getByRole('alertdialog', { name: 'Discard the draft?' });
  await ask.getByRole('button', { name: 'Discard draft', exact: true }).click();
  await page.getByText('Draft discarded').waitFor();
  await until('the published title back in the form', async () => (await title().inputValue()) === 'Versioned note');
  const copy = await manage(`/en-us/items/${ids.item}`);
  assert(copy.fields.Title === 'Versioned note' && copy.state === 2, `the copy after discarding: ${copy.state} ${JSON.stringify(copy.fields)}`);
  assert(fld((await fetchAPI(`en-us/item/${ids.item}`)).body.fields, 'title') === 'Versioned note', 'the site changed');
  await until('Discard draft disabled', () => discard.isDisabled());
  await page.getByRole('button', { name: 'History', exact: true }).click();
});

scenario('a stale edit in a second tab is refused, explained, and saved after reloading', async () => {
  const other = watch(await context.newPage());
  try {
    await openItem(ids.item, other);
    await openItem(ids.item, page);
    await page.getByLabel('Body', { exact: true }).fill('Saved first, in the first tab');
    await page.getByRole('button', { name: 'Save', exact: true }).click();
    await page.getByText('Saved.').waitFor();
    // The second tab still edits the version it loaded.
    await other.bringToFront();
    await other.getByRole('textbox', { name: 'Title', exact: true }).fill('Typed in the second tab');
    await other.getByRole('button', { name: 'Save', exact: true }).click();
    forgive(412);
    const alert = other.getByRole('alert').filter({ hasText: 'Someone else saved this item' });
    await alert.waitFor();
    assert((await other.getByRole('textbox', { name: 'Title', exact: true }).inputValue()) === 'Typed in the second tab', 'the text typed is kept in the form');
    const mine = await alert.getByRole('row', { name: /^Title/ }).getByRole('cell').allTextContents();
    assert(mine[0] === 'Typed in the second tab' && mine[1] === 'Versioned note', `the refused change beside theirs: ${mine}`);
    let copy = await manage(`/en-us/items/${ids.item}`);
    assert(copy.fields.Title === 'Versioned note' && copy.fields.Body === 'Saved first, in the first tab', `the first save was overwritten: ${JSON.stringify(copy.fields)}`);
    await axe('stale edit', other);
    await shot('stale-edit', other);
    await alert.getByRole('button', { name: 'Reload, keep my changes', exact: true }).click();
    await other.getByText('loaded with your changes on top').waitFor();
    assert((await other.getByLabel('Body', { exact: true }).inputValue()) === 'Saved first, in the first tab', 'the reload shows the other save');
    assert((await other.getByRole('textbox', { name: 'Title', exact: true }).inputValue()) === 'Typed in the second tab', 'the reload keeps the text typed');
    await other.getByRole('button', { name: 'Save', exact: true }).click();
    await other.getByText('Saved.').waitFor();
    copy = await manage(`/en-us/items/${ids.item}`);
    assert(copy.fields.Title === 'Typed in the second tab' && copy.fields.Body === 'Saved first, in the first tab', `both saves kept: ${JSON.stringify(copy.fields)}`);
    // Now the first tab is behind: it takes their version, and still shows what it typed.
    await page.bringToFront();
    await page.getByLabel('Body', { exact: true }).fill('Typed in the first tab, too late');
    await page.getByRole('button', { name: 'Save', exact: true }).click();
    forgive(412);
    const late = page.getByRole('alert').filter({ hasText: 'Someone else saved this item' });
    await late.getByRole('button', { name: 'Reload their version', exact: true }).click();
    await until('their title loaded', async () => (await title().inputValue()) === 'Typed in the second tab');
    assert((await page.getByLabel('Body', { exact: true }).inputValue()) === 'Saved first, in the first tab', 'their body loaded');
    const kept = page.getByRole('region', { name: 'Your text, not saved' });
    await kept.getByText('Typed in the first tab, too late').waitFor();
    await kept.getByRole('button', { name: 'Dismiss', exact: true }).click();
    await kept.waitFor({ state: 'detached' });
  } finally {
    await other.close();
    await page.bringToFront();
  }
});

scenario('the items table: search, state filter, sort and paging by the server', async () => {
  await openList();
  const caption = page.getByRole('table').locator('caption');
  await until('33 notes', async () => (await caption.textContent()).includes('33 items'));
  // Paging: 25 a page, the total from the server.
  const pager = page.getByRole('navigation', { name: 'Pages of items' });
  await pager.getByLabel('Per page').selectOption('25');
  await until('25 rows', async () => (await titles()).length === 25);
  await pager.getByText('1–25 of 33').waitFor();
  await pager.getByRole('button', { name: 'Next page', exact: true }).click();
  await pager.getByText('26–33 of 33').waitFor();
  assert((await titles()).length === 8, 'the second page has the last 8');
  assert(await pager.getByRole('button', { name: 'Next page', exact: true }).isDisabled(), 'no page after the last');
  // Search: accent-insensitive, by word prefix, on the whole container.
  const sent = await requestsDuring(async () => {
    await page.getByLabel('Search', { exact: true }).fill('cafe cre');
    await until('the one match', async () => JSON.stringify(await titles()) === JSON.stringify(['Café crème recipe']));
  });
  assert(sent.some((r) => /[?&]q=cafe(\+|%20)cre(&|$)/.test(r.url) && !/skip=25/.test(r.url)), `the search is the server's, from the first page: ${JSON.stringify(sent)}`);
  await caption.getByText('1 item in en-us matching “cafe cre”').waitFor();
  await page.getByLabel('Sort by').getByRole('option', { name: 'Relevance' }).waitFor({ state: 'attached' });
  await axe('items: search');
  // Words only: punctuation is refused next to the field.
  await page.getByLabel('Search', { exact: true }).fill('!!!');
  forgive(400);
  await page.locator('#items-q-error').waitFor();
  assert((await page.getByLabel('Search', { exact: true }).getAttribute('aria-invalid')) === 'true', 'the refused search is marked invalid');
  await page.getByLabel('Search', { exact: true }).fill('note');
  await until('the notes matching', async () => (await titles()).length === 25);
  await caption.getByText('31 items in en-us matching “note”').waitFor();
  // State: none is published yet.
  await page.getByLabel('State').selectOption({ label: 'Published' });
  await page.getByRole('cell', { name: 'No items.' }).waitFor();
  await page.getByLabel('State').selectOption({ label: 'Staging' });
  await caption.getByText('31 items in en-us matching “note”, staging').waitFor();
  await page.getByLabel('State').selectOption({ label: 'All states' });
  await page.getByLabel('Search', { exact: true }).fill('');
  // Sort by ID, descending: the newest first; a click on the column again reverses it.
  const sorted = await requestsDuring(async () => {
    await page.getByRole('columnheader', { name: 'ID' }).getByRole('button').click();
    await page.getByRole('columnheader', { name: 'ID' }).getByRole('button').click();
    await until('the newest first', async () => (await titles())[0] === 'Typed in the second tab');
  });
  assert(sorted.some((r) => r.url.includes('sort=contentID') && r.url.includes('direction=desc')), `sorted by the server: ${JSON.stringify(sorted)}`);
  assert((await page.getByRole('columnheader', { name: 'ID' }).getAttribute('aria-sort')) === 'descending', 'the column says how it is sorted');
  for (const key of ['Container order', 'ID', 'Modified', 'State']) await page.getByLabel('Sort by').selectOption({ label: key });
  await page.getByLabel('Sort by').selectOption({ label: 'Modified' });
  await until('the last modified first', async () => (await titles())[0] === 'Typed in the second tab');
  await axe('items');
});

scenario('batch publish of several items in one call', async () => {
  await openList('?state=1&sort=contentID');
  await page.getByRole('table').locator('caption').getByText('33 items in en-us, staging').waitFor();
  const chosen = (await titles()).slice(0, 3);
  for (const t of chosen) await page.getByLabel(`Select ${t}`, { exact: true }).check();
  const batch = page.getByRole('region', { name: 'Batch actions' });
  await batch.getByText('3 selected').waitFor();
  await shot('items-batch');
  const sent = await requestsDuring(async () => {
    await batch.getByRole('button', { name: 'Publish', exact: true }).click();
    await batch.getByText('Publish: 3 done.').waitFor();
  });
  const posts = sent.filter((r) => r.method !== 'GET');
  assert(posts.length === 1 && posts[0].url.endsWith('/en-us/batch'), `one batch call: ${JSON.stringify(posts)}`);
  const list = await until('the three in the Fetch API', async () => {
    const r = await fetchAPI('en-us/list/notes?take=50');
    const live = r.body?.items?.map((i) => fld(i.fields, 'title')) ?? [];
    return chosen.every((t) => live.includes(t)) && live;
  });
  assert(list.length === 4, `live notes: ${list}`);
});

scenario('a refused batch changes nothing and names the item that refused', async () => {
  // A published note and a staging one: the staging one has nothing to unpublish.
  await openList('?sort=contentID');
  await until('the notes', async () => (await titles()).length === 33);
  await page.getByLabel('Select Note 01', { exact: true }).check();
  await page.getByLabel('Select Note 05', { exact: true }).check();
  const batch = page.getByRole('region', { name: 'Batch actions' });
  await batch.getByRole('button', { name: 'Unpublish', exact: true }).click();
  forgive(409);
  const alert = batch.getByRole('alert');
  await alert.waitFor();
  const text = await alert.textContent();
  const n5 = (await manage('/en-us/items?container=notes&take=50')).items.find((i) => i.fields.Title === 'Note 05');
  assert(text.includes('nothing changed') && text.includes(`Note 05 (#${n5.contentID}) cannot take it`) && text.includes('no published version'), `the refusal: ${text}`);
  await page.getByRole('row', { name: /Note 05/ }).getByText('refused the batch').waitFor();
  await axe('items: a refused batch');
  const live = await fetchAPI('en-us/list/notes?take=50');
  assert(live.body.items.some((i) => fld(i.fields, 'title') === 'Note 01'), 'the published note was unpublished by a refused batch');
});

scenario('batch request approval, approve, and delete after a confirmation', async () => {
  await openList('?sort=contentID');
  await until('the notes', async () => (await titles()).length === 33);
  const chosen = ['Note 04', 'Note 06'];
  for (const t of chosen) await page.getByLabel(`Select ${t}`, { exact: true }).check();
  const batch = page.getByRole('region', { name: 'Batch actions' });
  const state = async (t) => (await manage('/en-us/items?container=notes&take=50')).items.find((i) => i.fields.Title === t)?.state;
  await batch.getByRole('button', { name: 'Request approval', exact: true }).click();
  await batch.getByText('Request approval: 2 done.').waitFor();
  assert((await state('Note 04')) === 5 && (await state('Note 06')) === 5, 'both await approval');
  await batch.getByRole('button', { name: 'Approve', exact: true }).click();
  await batch.getByText('Approve: 2 done.').waitFor();
  assert((await state('Note 04')) === 4 && (await state('Note 06')) === 4, 'both approved');
  await batch.getByRole('button', { name: 'Delete', exact: true }).click();
  const ask = page.getByRole('alertdialog', { name: 'Delete 2 selected?' });
  await ask.waitFor();
  await axe('items: delete confirmation');
  await ask.getByRole('button', { name: 'Delete', exact: true }).click();
  await batch.getByText('Delete: 2 done.').waitFor();
  for (const t of chosen) assert([undefined, 3].includes(await state(t)), `${t} deleted: ${await state(t)}`);
});

await run({ minAxe: 6 });
