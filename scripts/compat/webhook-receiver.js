// A webhook receiver for the Go end-to-end tests of edgecms's webhooks: it
// verifies every delivery with the npm `standardwebhooks` package, as a
// customer's endpoint would.
//
// It listens on 127.0.0.1 (an ephemeral port) and prints one JSON line per
// event on stdout:
//   {"port": n}                                   once listening
//   {"ack": n}                                    after the n-th control line
//   {"id", "timestamp", "signature", "body", "verified": [bool per secret],
//    "errors": [string per secret], "status"}     per request received
// Control lines on stdin, JSON: {"secrets": ["whsec_...", ...]} sets the
// secrets each delivery is checked against (each one alone, so the test sees
// which secrets signed it), and {"status": n} the status to answer verified
// deliveries with (default 204). A delivery that verifies with none of the
// secrets (when there are some) is answered 401.
const http = require('http');
const readline = require('readline');
const { Webhook } = require('standardwebhooks');

let secrets = [];
let okStatus = 204;
let controls = 0;

function emit(obj) {
  process.stdout.write(JSON.stringify(obj) + '\n');
}

readline.createInterface({ input: process.stdin }).on('line', (line) => {
  if (!line.trim()) return;
  const msg = JSON.parse(line);
  if (Array.isArray(msg.secrets)) secrets = msg.secrets;
  if (typeof msg.status === 'number') okStatus = msg.status;
  emit({ ack: ++controls });
});

const server = http.createServer((req, res) => {
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', () => {
    const body = Buffer.concat(chunks).toString('utf8');
    const verified = [];
    const errors = [];
    for (const secret of secrets) {
      try {
        new Webhook(secret).verify(body, req.headers);
        verified.push(true);
        errors.push('');
      } catch (e) {
        verified.push(false);
        errors.push(String(e && e.message ? e.message : e));
      }
    }
    const status = secrets.length === 0 || verified.includes(true) ? okStatus : 401;
    emit({
      method: req.method,
      contentType: req.headers['content-type'] || '',
      id: req.headers['webhook-id'] || '',
      timestamp: req.headers['webhook-timestamp'] || '',
      signature: req.headers['webhook-signature'] || '',
      body,
      verified,
      errors,
      status,
    });
    res.writeHead(status);
    res.end();
  });
});

server.listen(0, '127.0.0.1', () => emit({ port: server.address().port }));
process.stdin.on('end', () => server.close(() => process.exit(0)));
