import { NextResponse } from "next/server"

// Before the pages: preview links in Agility's form, the ?ContentID=
// redirect, and locales (the default locale's pages have no prefix).
const locales = (process.env.AGILITY_LOCALES || "en-us").split(",").map((l) => l.trim().toLowerCase())

export function proxy(request) {
	const url = request.nextUrl
	const q = url.searchParams

	// A preview link of the Agility form, /{path}?agilitypreviewkey=…
	// (an edgecms preview URL template may keep it): to /api/preview.
	if (q.has("agilitypreviewkey")) {
		const to = new URL("/api/preview", request.url)
		to.searchParams.set("agilitypreviewkey", q.get("agilitypreviewkey"))
		to.searchParams.set("slug", url.pathname)
		return NextResponse.rewrite(to)
	}

	// /anything?ContentID=42: the page of that item.
	const contentID = q.get("ContentID") || q.get("contentID")
	if (contentID && parseInt(contentID, 10) > 0) {
		const to = new URL("/api/dynamic-redirect", request.url)
		to.searchParams.set("ContentID", contentID)
		to.searchParams.set("lang", q.get("lang") || localeOf(url.pathname) || locales[0])
		return NextResponse.rewrite(to)
	}

	if (!localeOf(url.pathname)) {
		const to = url.clone()
		to.pathname = `/${locales[0]}${url.pathname === "/" ? "" : url.pathname}`
		return NextResponse.rewrite(to)
	}
}

function localeOf(path) {
	const first = path.split("/")[1]?.toLowerCase()
	return locales.includes(first) ? first : null
}

export const config = {
	matcher: ["/((?!api|_next/static|_next/image|favicon.ico).*)"],
}
