// Drives the real @agility/management-sdk against an edgecms server for the
// Go compatibility tests. Reads {baseUrl, token, calls: [{method, args}]} as
// JSON on stdin, where method names an SDK method as "group.name" (for
// example "webhookMethods.saveWebhook") and args are its arguments, and
// prints one JSON array: for each call {ok: true, result} or {ok: false,
// error, status, body}, status and body being those of the HTTP answer
// behind the SDK's exception (null when there was none).
//
// The SDK builds its addresses as `${baseUrl}/api/v1/instance/${guid}/...`,
// so baseUrl is the server's origin, https://host:port.
const { ApiClient, Options } = require('@agility/management-sdk');

async function main() {
  let input = '';
  for await (const chunk of process.stdin) input += chunk;
  const spec = JSON.parse(input);
  const options = new Options();
  options.token = spec.token;
  options.baseUrl = spec.baseUrl;
  const client = new ApiClient(options);
  const out = [];
  for (const call of spec.calls) {
    const [group, name] = call.method.split('.');
    try {
      const result = await client[group][name](...call.args);
      out.push({ ok: true, result: result === undefined ? null : result });
    } catch (e) {
      const resp = e && e.innerError && e.innerError.response;
      out.push({
        ok: false,
        error: String(e && e.message ? e.message : e),
        status: resp ? resp.status : null,
        body: resp ? resp.data : null,
      });
    }
  }
  process.stdout.write(JSON.stringify(out));
}

main().catch((e) => { console.error(e); process.exit(1); });
