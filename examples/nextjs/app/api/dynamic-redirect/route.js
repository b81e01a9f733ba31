import { draftMode } from "next/headers"
import { NextResponse } from "next/server"
import { getDynamicPageURL } from "@agility/nextjs/node"
import { defaultLocale, locales, sitePath } from "lib/cms/locales"
import { redirectTo } from "lib/edgecms/redirect"

/**
 * /?ContentID=<id> (proxy.js sends such requests here) goes to the page
 * that shows that item: its path in the locale's sitemap (?lang=).
 */
export async function GET(request) {
	const q = request.nextUrl.searchParams
	const contentID = parseInt(q.get("ContentID") || "", 10)
	const lang = (q.get("lang") || defaultLocale).toLowerCase()
	const locale = locales.includes(lang) ? lang : defaultLocale
	const { isEnabled: preview } = await draftMode()
	if (contentID > 0) {
		const path = await getDynamicPageURL({ contentID, preview, locale, slug: "" })
		if (path) return redirectTo(sitePath(locale, path))
	}
	return NextResponse.json({ message: `No page shows item ${q.get("ContentID")}` }, { status: 404 })
}
