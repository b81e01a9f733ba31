package origin

import (
	"context"
	"strconv"
	"sync"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/lib/pq"

	"github.com/edgecms/edgecms/delivery"
	"github.com/edgecms/edgecms/problem"
)

// feedwait.go answers edges that wait for the next change feed
// (delivery.FeedWaitPath). The origin LISTENs on delivery.FeedChannel, on
// which the publisher announces each feed object it writes, so that an
// edge reads a new feed when it is written rather than at its next poll of
// the store: up to a poll interval sooner, with no store request spent
// on polls that find nothing new.

// feedSignal is the Seq of the latest feed written, as the notifications
// tell it, and a channel closed when it moves.
type feedSignal struct {
	mu      sync.Mutex
	live    bool // LISTENing, and seq read since (re)connecting
	seq     int64
	changed chan struct{}
	closing chan struct{} // closed by Shutdown: waits answer at once
	stop    sync.Once
}

func newFeedSignal() *feedSignal {
	return &feedSignal{changed: make(chan struct{}), closing: make(chan struct{})}
}

// set records seq (and that the signal is live) and wakes the waits when
// it moved.
func (f *feedSignal) set(seq int64) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.live = true
	if seq != f.seq {
		f.seq = seq
		close(f.changed)
		f.changed = make(chan struct{})
	}
}

// down marks the signal as not live (the LISTEN connection is lost: a
// notification may be missed), so that edges poll the store meanwhile.
func (f *feedSignal) down() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.live = false
	close(f.changed)
	f.changed = make(chan struct{})
}

func (f *feedSignal) get() (seq int64, live bool, changed <-chan struct{}) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.seq, f.live, f.changed
}

// latestFeedSQL is the Seq of the latest feed written: positions are given
// and the feed object written in one transaction (publisher/feed.go), so
// the committed positions are those of feeds in the store.
const latestFeedSQL = `SELECT coalesce(max(pos), 0) FROM object_changes`

// followFeed LISTENs on the feed channel until ctx ends.
func (s *Server) followFeed(ctx context.Context, url string) {
	sig := s.feed
	l := pq.NewListener(url, 100*time.Millisecond, 10*time.Second, func(ev pq.ListenerEventType, err error) {
		if ev == pq.ListenerEventDisconnected || ev == pq.ListenerEventConnectionAttemptFailed {
			sig.down()
			if err != nil && ctx.Err() == nil {
				s.log.Warn("feed signal: listen", "err", err)
			}
		}
	})
	defer l.Close()
	if err := l.Listen(delivery.FeedChannel); err != nil {
		s.log.Warn("feed signal: listen; edges poll the store only", "err", err)
		return
	}
	// Read after LISTEN starts, so that no feed written in between is
	// missed; again after each reconnection (a nil notification).
	latest := func() {
		var seq int64
		if err := s.store.DB().GetContext(ctx, &seq, latestFeedSQL); err != nil {
			if ctx.Err() == nil {
				s.log.Warn("feed signal: read latest feed", "err", err)
			}
			sig.down()
			return
		}
		sig.set(seq)
	}
	latest()
	check := time.NewTicker(30 * time.Second)
	defer check.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case n := <-l.Notify:
			if n == nil {
				latest()
				continue
			}
			if seq, err := strconv.ParseInt(n.Extra, 10, 64); err == nil {
				sig.set(seq)
			}
		case <-check.C:
			// A signal that went down without a reconnection since (its
			// read failed) comes back here.
			if _, live, _ := sig.get(); !live {
				latest()
			}
		}
	}
}

// waitFeed answers GET delivery.FeedWaitPath?after=N: the latest feed's Seq
// once it differs from N, or after delivery.FeedWaitHold. 503 when the
// origin does not follow the feed channel.
func (s *Server) waitFeed(c *fiber.Ctx) error {
	c.Set(fiber.HeaderCacheControl, delivery.NoStore)
	after, err := strconv.ParseInt(c.Query("after"), 10, 64)
	if err != nil {
		return &problem.Error{Kind: problem.Invalid, Detail: "after: want the Seq of the feed last read, an integer"}
	}
	hold := time.NewTimer(delivery.FeedWaitHold)
	defer hold.Stop()
	for {
		seq, live, changed := s.feed.get()
		if !live {
			return &problem.Error{Kind: problem.Unavailable, Detail: "the origin does not follow the change feed now: poll the store"}
		}
		if seq != after {
			return c.JSON(delivery.FeedSignal{Seq: seq})
		}
		select {
		case <-changed:
		case <-hold.C:
			return c.JSON(delivery.FeedSignal{Seq: seq})
		case <-s.feed.closing:
			return c.JSON(delivery.FeedSignal{Seq: seq})
		}
	}
}
