package delivery

import "time"

// FeedKey is the object key of the change feed.
const FeedKey = "_feed/changes.json"

// Feed is the change feed object: the latest changed keys (written or
// deleted objects, and key manifests), oldest first. Seq numbers only grow,
// and a change is listed only once every change with a smaller seq is
// listed too, so an edge that remembers the Seq it last read can drop from
// its cache exactly the keys listed after it; when that Seq is older than
// Oldest-1, changes were missed and it drops everything.
type Feed struct {
	// Seq is the seq of the latest change (0 before the first).
	Seq int64 `json:"seq"`
	// Oldest is the seq of the first change listed (0 when none is).
	Oldest int64 `json:"oldest"`
	// Changes are the listed changes, by seq ascending.
	Changes []Change `json:"changes"`
}

// Change is one changed key of the Feed.
type Change struct {
	Seq int64  `json:"seq"`
	Key string `json:"key"`
}

// The feed signal: the publisher announces each feed object it writes on
// the Postgres channel FeedChannel (payload: the feed's Seq, sent as its
// write commits, after the object is in the store), and origins that
// LISTEN to it answer FeedWaitPath: GET FeedWaitPath?after=N answers
// FeedSignal once the latest feed's Seq differs from N, or after a hold of
// at most FeedWaitHold with the Seq unchanged. An edge that waits there reads
// the feed as soon as it is written instead of at its next poll; the store
// stays the one source of what changed, so an edge whose origin does not
// answer keeps polling it.
const (
	FeedChannel  = "edgecms_feed"
	FeedWaitPath = "/_edge/feed"
	FeedWaitHold = 20 * time.Second
)

// FeedSignal is the answer of FeedWaitPath.
type FeedSignal struct {
	// Seq is the Seq of the latest feed object written.
	Seq int64 `json:"seq"`
}
