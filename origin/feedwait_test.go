package origin_test

import (
	"testing"
)

// TestFeedWaitRefused checks the answers of the feed wait that send an edge
// back to its polls: a bad after, and an origin that does not follow the
// feed channel (edge/signal_test.go waits on one that does).
func TestFeedWaitRefused(t *testing.T) {
	t.Parallel()
	h := newHarness(t) // no FeedListenURL
	for _, tc := range []struct {
		path   string
		status int
	}{
		{"/_edge/feed?after=x", 400},
		{"/_edge/feed", 400},
		{"/_edge/feed?after=12", 503},
		{"/_edge/feed?after=-1", 503},
	} {
		res := h.raw("GET", tc.path, "", nil)
		if res.status != tc.status {
			t.Errorf("GET %s: %v, want status %d", tc.path, res, tc.status)
		}
		if got := res.header.Get("Cache-Control"); tc.status == 503 && got != "no-store" {
			t.Errorf("GET %s: Cache-Control %q, want no-store", tc.path, got)
		}
	}
}
