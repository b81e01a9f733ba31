import { revalidateTag } from "next/cache"
import { NextResponse } from "next/server"
import { Webhook } from "standardwebhooks"

/**
 * The edgecms webhook: POST with the Agility payload {state, instanceGuid,
 * languageCode, referenceName?, contentID?, pageID?, ...}, signed as
 * Standard Webhooks with EDGECMS_WEBHOOK_SECRET. edgecms sends Published
 * (and Deleted, for an unpublish) only once the new version is served, so
 * the fetches refreshed here read it.
 */
export async function POST(request) {
	const body = await request.text()
	let event
	try {
		event = new Webhook(process.env.EDGECMS_WEBHOOK_SECRET).verify(body, {
			"webhook-id": request.headers.get("webhook-id"),
			"webhook-timestamp": request.headers.get("webhook-timestamp"),
			"webhook-signature": request.headers.get("webhook-signature"),
		})
	} catch {
		return NextResponse.json({ message: "bad or missing webhook signature" }, { status: 401 })
	}
	if (event.instanceGuid !== process.env.AGILITY_GUID) {
		return NextResponse.json({ message: `not this site's instance: ${event.instanceGuid}` }, { status: 400 })
	}
	const tags = tagsOf(event)
	// Expire at once: the next request renders with what edgecms serves now.
	for (const tag of tags) revalidateTag(tag, { expire: 0 })
	return NextResponse.json({ revalidated: tags })
}

/** The cache tags (lib/cms/content.js, @agility/nextjs) an event changes. */
function tagsOf({ state, languageCode: lang, referenceName, contentID, pageID }) {
	if (state !== "Published" && state !== "Deleted") return []
	const sitemaps = [`agility-sitemap-flat-${lang}`, `agility-sitemap-nested-${lang}`]
	if (pageID > 0) return [`agility-page-${pageID}-${lang}`, ...sitemaps]
	if (!referenceName) return []
	const tags = [`agility-content-${referenceName.toLowerCase()}-${lang}`]
	if (contentID > 0) tags.push(`agility-content-${contentID}-${lang}`)
	// An item may be a dynamic page's: its title and path are in the sitemaps.
	return [...tags, ...sitemaps]
}
