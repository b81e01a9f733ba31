// Drives the real @agility/content-fetch SDK against an edgecms server for
// the Go compatibility tests. Reads {baseUrl, guid, fetchKey, previewKey,
// calls: [{flavour, method, params}]} as JSON on stdin and prints one JSON
// array: for each call {ok: true, result} or {ok: false, error}.
// The SDK resolves HTTP errors to undefined; that is reported as result null.
const agility = require('@agility/content-fetch');

async function main() {
  let input = '';
  for await (const chunk of process.stdin) input += chunk;
  const spec = JSON.parse(input);
  const apis = {
    fetch: agility.getApi({ guid: spec.guid, apiKey: spec.fetchKey, isPreview: false, baseUrl: spec.baseUrl }),
    preview: agility.getApi({ guid: spec.guid, apiKey: spec.previewKey, isPreview: true, baseUrl: spec.baseUrl }),
  };
  const out = [];
  for (const call of spec.calls) {
    try {
      const api = apis[call.flavour];
      const result = await api[call.method](call.params);
      out.push({ ok: true, result: result === undefined ? null : result });
    } catch (e) {
      out.push({ ok: false, error: String(e && e.message ? e.message : e) });
    }
  }
  process.stdout.write(JSON.stringify(out));
}

main().catch((e) => { console.error(e); process.exit(1); });
