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

/**
 * The members the JSON body of an operation takes, by name, with their
 * schemas ({} when the operation is missing): the Studio offers a setting
 * only when the origin's document lists it.
 */
export async function bodyMembers(method, path) {
  const d = await load();
  const resolve = (s) => (s?.$ref ? d.components?.schemas?.[s.$ref.split('/').pop()] : s);
  const op = d.paths?.['/api/v1/instance/{guid}' + path]?.[method.toLowerCase()];
  const schema = resolve(op?.requestBody?.content?.['application/json']?.schema);
  const out = {};
  for (const [k, v] of Object.entries(schema?.properties ?? {})) out[k] = resolve(v) ?? {};
  return out;
}

/** Whether a schema takes null (type, or oneOf/anyOf with a null member). */
export function nullable(schema) {
  const t = schema?.type;
  if (t === 'null' || (Array.isArray(t) && t.includes('null')) || schema?.nullable) return true;
  return [...(schema?.oneOf ?? []), ...(schema?.anyOf ?? [])].some((s) => nullable(s));
}
