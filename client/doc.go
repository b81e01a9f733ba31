// Package client is a Go client for the edgecms Fetch API, the read-only
// JSON interface that delivers content items, lists, pages, sitemaps, sync
// batches, galleries and URL redirections (see the service spec and
// reference/client-compat.md for the wire shapes).
//
// It speaks the same protocol as the official Agility SDKs, but it is
// honest about failure: where those SDKs resolve an HTTP error to an empty
// value, every method here returns a non-nil error instead, and a result is
// never a zero value standing in for a failure.
//
//   - A non-2xx answer becomes an *Error carrying the status code and the
//     RFC 9457 problem document the server sent (type, title, detail); use
//     errors.As or the helpers IsNotFound, IsUnauthorized, IsForbidden,
//     IsBadRequest, IsRateLimited and IsTemporary.
//   - A 2xx answer whose body does not have the expected shape (empty, null,
//     malformed JSON, a list without items or totalCount) is an error that
//     matches ErrBadResponse with errors.Is.
//   - Field accessors on Fields report an absent field as ErrNoField and
//     linked content that was not expanded as ErrNotExpanded.
//   - A value that does not fit the Go field it is decoded into is a
//     *DecodeError naming the item's field, the value and the Go field.
//
// Items decode into the caller's structs with Item.Decode, or in one call
// with GetItem, GetList and GetAllItems. Struct fields are matched to item
// fields by an `edgecms:"name"` tag or by their Go name (ignoring case),
// with contentID, properties, properties.<name> and seo reaching the item's
// own members. The v1 string forms of numbers, booleans and dates ("42",
// "4.5", "true") are converted; linked items and lists decode into nested
// structs and slices, expanded or as references, or into their ids; images
// and galleries into Image and Gallery.
//
// Transient failures are retried with jittered exponential backoff through
// github.com/hashicorp/go-retryablehttp: connection errors, 408, 429 and 5xx
// (except 501). A Retry-After header is honoured, up to Options.RetryWaitMax
// (10 seconds by default), so a busy server slows the client down without
// stalling it for minutes. Other 4xx answers are returned at once. The retry
// decision and the wait are policies held as function values (CheckRetry,
// Backoff) that callers may replace.
//
// A Client reads either the live (fetch) or the preview flavour of an
// instance; WithPreview derives a client of the other flavour that shares
// the connection pool. Requests carry the API key of their flavour in the
// APIKey header, Accept: application/json and a User-Agent of the form
// edgecms-go/<Version>.
//
// Addresses have the form {base}/{guid}/{apitype}/{locale}/...; every path
// segment is escaped, and query strings are encoded in a stable order so
// that equal requests hit the same CDN cache entry.
package client
