// What the origin's management API offers, read once from the OpenAPI
// document it serves: the Studio offers a route, a parameter or a value of
// one only when the origin has it (versions, discard, batch, page
// position, model edits, search, sort keys), so that it never sends
// requests bound to fail.
let doc = null;

function load() {
  doc ??= fetch('/api/openapi.json', { credentials: 'same-origin' })
    .then((r) => (r.ok ? r.json() : { paths: {} }))
    .catch(() => ({ paths: {} }));
  return doc;
}

function operation(d, method, path) {
  return d.paths?.['/api/v1/instance/{guid}' + path]?.[method.toLowerCase()];
}

/** The query parameter of an operation by name, its $ref resolved. */
async function query(method, path, name) {
  const d = await load();
  const params = [...(operation(d, method, path)?.parameters ?? []), ...(d.paths?.['/api/v1/instance/{guid}' + path]?.parameters ?? [])];
  for (const p of params) {
    const ref = p.$ref ? d.components?.parameters?.[p.$ref.split('/').pop()] : p;
    if (ref?.in === 'query' && ref?.name === name) return ref;
  }
  return null;
}

/** Whether the API has method on the management path (after /api/v1/instance/{guid}). */
export async function has(method, path) {
  return !!operation(await load(), method, path);
}

/** Whether an operation takes a query parameter of that name. */
export async function takes(method, path, name) {
  return !!(await query(method, path, name));
}

/** The values a query parameter of an operation takes (its enum), or []. */
export async function choices(method, path, name) {
  return (await query(method, path, name))?.schema?.enum ?? [];
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
