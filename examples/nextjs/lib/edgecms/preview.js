import "server-only"

// The exchange of an edgecms preview link (the Studio's Preview button).
//
// The link carries a short-lived token signed by edgecms. The site never
// trusts it by itself: it sends it, with its preview key, to edgecms,
// which answers what the editor asked to preview (instance, locale, page,
// path) or refuses a token that was changed or has expired. This takes the
// place of @agility/nextjs's validatePreview, which compares
// `agilitypreviewkey` with a hash of AGILITY_SECURITY_KEY.

/** The edgecms origin (scheme, host and port) of AGILITY_BASE_URL. */
export function edgecmsOrigin() {
	return new URL(process.env.AGILITY_BASE_URL).origin
}

/**
 * Checks a preview token with edgecms: {guid, locale, channel, pageID,
 * contentID, path, expiresAt}, or null with the reason.
 */
export async function verifyPreviewToken(token) {
	if (!token) return { target: null, reason: "Missing preview token." }
	const res = await fetch(`${edgecmsOrigin()}/api/v1/preview/verify`, {
		method: "POST",
		headers: { "Content-Type": "application/json", APIKey: process.env.AGILITY_API_PREVIEW_KEY },
		body: JSON.stringify({ token }),
		cache: "no-store",
	})
	if (!res.ok) {
		const problem = await res.json().catch(() => ({}))
		return { target: null, reason: problem.detail || `edgecms answered ${res.status}` }
	}
	const target = await res.json()
	if (target.guid !== process.env.AGILITY_GUID) {
		return { target: null, reason: `The link previews instance ${target.guid}, not this site's.` }
	}
	return { target, reason: null }
}
