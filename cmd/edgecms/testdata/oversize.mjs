// Sends oversize bodies with Node's fetch (undici) and prints the outcome
// of each try as JSON: the status, or the error code (ECONNRESET, EPIPE...)
// when no answer was read.
//
// node oversize.mjs URL BYTES KIND TRIES TOKEN
//   KIND: json (a Buffer body, Content-Length), chunked (a stream, no
//   Content-Length), multipart (an upload of a file of BYTES bytes).
const [url, bytes, kind, tries, token] = process.argv.slice(2);
const size = Number(bytes);
const out = [];
for (let i = 0; i < Number(tries); i++) {
  const headers = { Authorization: `Bearer ${token}` };
  let body;
  const init = { method: 'POST', headers };
  if (kind === 'multipart') {
    const b = 'edgecmsOversizeBoundary';
    headers['Content-Type'] = `multipart/form-data; boundary=${b}`;
    body = Buffer.concat([
      Buffer.from(`--${b}\r\nContent-Disposition: form-data; name="file"; filename="big.png"\r\nContent-Type: image/png\r\n\r\n`),
      Buffer.alloc(size, 7),
      Buffer.from(`\r\n--${b}--\r\n`),
    ]);
  } else if (kind === 'chunked') {
    headers['Content-Type'] = 'application/json';
    let sent = 0;
    const chunk = Buffer.alloc(64 * 1024, 32);
    body = new ReadableStream({
      pull(c) {
        if (sent >= size) return c.close();
        sent += chunk.length;
        c.enqueue(chunk);
      },
    });
    init.duplex = 'half';
  } else {
    headers['Content-Type'] = 'application/json';
    body = Buffer.alloc(size, 32);
  }
  init.body = body;
  try {
    const res = await fetch(url, init);
    await res.arrayBuffer();
    out.push(res.status);
  } catch (e) {
    out.push(String(e.cause?.code ?? e.cause?.message ?? e.message));
  }
}
console.log(JSON.stringify(out));
