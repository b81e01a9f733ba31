// What the origin's management API offers beyond the first edition, read
// once from the OpenAPI document it serves: the Studio uses a route only
// when the origin has it (versions, discard, batch, page position, model
// edits, search), so that it never sends requests bound to fail.
let doc = null;

function load() {
  doc ??= fetch('/api/openapi.json', { credentials: 'same-origin' })
    .then((r) => (r.ok ? r.json() : { paths: {} }))
    .catch(() => ({ paths: {} }));
  return doc;
}

/** Whether the API has method on the management path (after /api/v1/instance/{guid}). */
export async function has(method, path) {
  const d = await load();
  return !!d.paths?.['/api/v1/instance/{guid}' + path]?.[method.toLowerCase()];
}

/** Whether an operation takes a query parameter of that name. */
export async function takes(method, path, name) {
  const d = await load();
  const op = d.paths?.['/api/v1/instance/{guid}' + path]?.[method.toLowerCase()];
  const params = [...(op?.parameters ?? []), ...(d.paths?.['/api/v1/instance/{guid}' + path]?.parameters ?? [])];
  return params.some((p) => {
    const ref = p.$ref ? d.components?.parameters?.[p.$ref.split('/').pop()] : p;
    return ref?.in === 'query' && ref?.name === name;
  });
}
