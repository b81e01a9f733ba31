import { draftMode } from "next/headers"
import { redirectTo } from "lib/edgecms/redirect"

/** Leaves draft mode and goes back to the page (a path of this site). */
export async function GET(request) {
	;(await draftMode()).disable()
	const slug = request.nextUrl.searchParams.get("slug") || "/"
	const path = slug.startsWith("/") && !slug.startsWith("//") ? slug : "/"
	return redirectTo(path)
}
