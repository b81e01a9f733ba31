// Package delivery is the contract between the three roles that deliver
// published content: the publisher writes objects into the object store,
// the edge reads them without a database, and the origin answers what the
// store does not hold yet with the same bytes and headers. Whatever one role
// writes and another reads is defined here, once:
//
//   - Object keys. A Fetch API answer lives at the canonical key of its
//     request, fetch.Request.Key: {guid}/{apitype}/{locale}/item/..., list,
//     page, pagepath, sitemap, sync, gallery and urlredirection keys (see
//     package fetch); an uploaded asset at {guid}/assets/{sha256}.{ext}
//     (package media). Keys beginning with "_" are the delivery's own
//     objects: the change feed (FeedKey) and the key manifests
//     (ManifestKey). Guids are lower case.
//   - The change feed, _feed/changes.json: a Feed of the latest changed
//     keys with sequence numbers, oldest first. The publisher rewrites it
//     after every batch; edges poll it and drop (or, for a manifest,
//     reload) what it lists after the last sequence number they read.
//   - Key manifests, _keys/{guid}.json: a Manifest of an instance's API keys
//     as hashes, type, expiry and enabled, written by the publisher whenever
//     a key changes, so that an edge checks keys as the origin does
//     (CheckKey) without the database.
//   - Headers. Fetch answers are application/json (ContentType) with
//     FetchCacheControl: a CDN may keep them briefly and serve them stale
//     while it revalidates or while the origin is down. Preview answers, the
//     feed and the manifests are NoStore.
//
// Wire formats are JSON with the field names below; they must stay
// byte-compatible, since edges and publishers of different versions share a
// store.
package delivery

// ContentType is the Content-Type of every object the publisher writes.
const ContentType = "application/json; charset=utf-8"

// Cache-Control values of what the roles serve and store.
const (
	// FetchCacheControl is the policy of a fetch answer, stored with the
	// published object and sent by the origin: a CDN keeps it 30 s and may
	// serve it stale while revalidating (60 s) or while the origin fails
	// (a day).
	FetchCacheControl = "public, max-age=0, s-maxage=30, stale-while-revalidate=60, stale-if-error=86400"
	// NoStore is the policy of what must never be cached on the way:
	// preview answers, the change feed and the key manifests.
	NoStore = "no-store"
)
