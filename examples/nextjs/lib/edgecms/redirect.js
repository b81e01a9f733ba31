/**
 * A 307 to a path of this site, as a relative Location: behind a proxy
 * rewrite, the request's URL names the server's own host, not the
 * browser's.
 */
export function redirectTo(path) {
	return new Response(null, { status: 307, headers: { Location: path, "Cache-Control": "no-store" } })
}
