// Drives the real @agility/content-sync client (which bundles its own 1.x
// fetch SDK) against an edgecms server for the Go compatibility tests.
// Reads {baseUrl, guid, apiKey, isPreview, languages, channels} as JSON on
// stdin and runs one sync (runSync) with the client's default filesystem
// store, which writes under .agility-files in the working directory: the
// test runs it in a temporary directory. Prints, after a line
// "@@RESULT@@", one JSON object {ok, error?, received}: received lists
// what the sync endpoints handed the store, [{languageCode, kind: "item" |
// "page", id, state}], in order.
//
// The client syncs a language at most once a second (its saved state's
// lastSyncDate); the runner clears that date first, so that the runs of a
// test are never skipped.
const sync = require('@agility/content-sync');

async function main() {
  let input = '';
  for await (const chunk of process.stdin) input += chunk;
  const spec = JSON.parse(input);
  const client = sync.getSyncClient({
    guid: spec.guid,
    apiKey: spec.apiKey,
    isPreview: spec.isPreview,
    baseUrl: spec.baseUrl,
    languages: spec.languages,
    channels: spec.channels,
    logLevel: 'none',
  });
  const received = [];
  const store = client.store;
  const saveContentItem = store.saveContentItem;
  store.saveContentItem = async (args) => {
    const it = args.contentItem || {};
    received.push({ languageCode: args.languageCode, kind: 'item', id: it.contentID, state: it.properties && it.properties.state });
    return saveContentItem(args);
  };
  const savePageItem = store.savePageItem;
  store.savePageItem = async (args) => {
    const p = args.pageItem || {};
    received.push({ languageCode: args.languageCode, kind: 'page', id: p.pageID, state: p.properties && p.properties.state });
    return savePageItem(args);
  };
  for (const languageCode of spec.languages) {
    const state = await store.getSyncState(languageCode);
    if (state) {
      delete state.lastSyncDate;
      await store.saveSyncState({ syncState: state, languageCode });
    }
  }
  let out;
  try {
    await client.runSync();
    out = { ok: true, received };
  } catch (e) {
    out = { ok: false, error: String(e && e.message ? e.message : e), received };
  }
  process.stdout.write('\n@@RESULT@@\n' + JSON.stringify(out));
}

main().catch((e) => { console.error(e); process.exit(1); });
