import { draftMode } from "next/headers"
import { NextResponse } from "next/server"
import { getDynamicPageURL } from "@agility/nextjs/node"
import { verifyPreviewToken } from "lib/edgecms/preview"
import { sitePath } from "lib/cms/locales"
import { redirectTo } from "lib/edgecms/redirect"

/**
 * The target of the Studio's preview links:
 *   /api/preview?slug={path}&key={previewLink}
 * (proxy.js also sends here the Agility form, /{path}?agilitypreviewkey=…).
 * The token is checked with edgecms, which says what it opens; the page
 * to show is the token's, never the slug of the query, so that a link
 * cannot send a visitor elsewhere. Draft mode then reads that page (and
 * every page of this browser session) with the preview key.
 */
export async function GET(request) {
	const q = request.nextUrl.searchParams
	const { target, reason } = await verifyPreviewToken(q.get("key") || q.get("agilitypreviewkey"))
	if (!target) {
		return NextResponse.json({ message: reason }, { status: 401 })
	}
	let path = target.path
	if (target.contentID > 0) {
		// An item of a dynamic page: its path in the preview sitemap.
		path = (await getDynamicPageURL({ contentID: target.contentID, preview: true, locale: target.locale })) || path
	}
	;(await draftMode()).enable()
	return redirectTo(sitePath(target.locale, path))
}
