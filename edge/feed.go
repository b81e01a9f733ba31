package edge

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/edgecms/edgecms/delivery"
	"github.com/edgecms/edgecms/problem"
)

// follower follows the change feed for one edge. It is used by one
// goroutine (Run's).
type follower struct {
	s     *Server
	etag  string // of the feed last read; "" before the first read
	seq   int64  // latest change applied
	ready bool   // a feed has been read since start
}

// poll reads the feed when its ETag changed, or at once when signalled
// (the origin said a new one is written: a Stat would only cost a store
// round trip), and applies the changes listed since the last one seen.
func (f *follower) poll(ctx context.Context, signalled bool) error {
	st := f.s.cfg.Store
	if !signalled {
		info, err := st.Stat(ctx, delivery.FeedKey)
		if problem.Is(err, problem.NotFound) {
			return nil // no publisher has written one yet
		}
		if err != nil {
			return fmt.Errorf("stat change feed: %w", err)
		}
		if info.ETag == f.etag {
			return nil
		}
	}
	o, err := st.Get(ctx, delivery.FeedKey)
	if problem.Is(err, problem.NotFound) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("read change feed: %w", err)
	}
	if f.ready && o.ETag == f.etag {
		return nil // a poll read it already
	}
	var feed delivery.Feed
	if err := json.Unmarshal(o.Body, &feed); err != nil {
		return fmt.Errorf("decode change feed: %w", err)
	}
	f.apply(ctx, feed)
	f.etag = o.ETag
	return nil
}

// apply drops what feed says changed since the last change applied. On the
// first read, after a gap (changes dropped from the feed before this edge
// saw them) or when the feed went back (a new database), it cannot know what
// changed and drops everything.
func (f *follower) apply(ctx context.Context, feed delivery.Feed) {
	oldest := feed.Oldest
	for _, c := range feed.Changes {
		if oldest == 0 || c.Seq < oldest {
			oldest = c.Seq
		}
	}
	switch {
	case !f.ready || feed.Seq < f.seq || (feed.Seq > f.seq && f.seq < oldest-1):
		if f.ready {
			f.s.log.Info("change feed: changes missed, dropping the whole cache", "seen", f.seq, "oldest", oldest, "latest", feed.Seq)
		}
		f.s.cache.invalidateAll()
		f.s.written.changedAll()
		f.listKeys(ctx)
		for _, guid := range f.s.keys.loaded() {
			f.reloadKeys(ctx, guid)
		}
	default:
		for _, c := range feed.Changes {
			if c.Seq <= f.seq {
				continue
			}
			if guid, ok := delivery.ManifestGuid(c.Key); ok {
				f.reloadKeys(ctx, guid)
				continue
			}
			f.s.cache.invalidate(c.Key)
			f.s.written.changed(c.Key)
		}
	}
	f.seq, f.ready = feed.Seq, true
}

// listKeys reads which instances have a manifest; when the store fails it
// forgets the list, so that requests for guids not held go to the origin.
func (f *follower) listKeys(ctx context.Context) {
	if err := f.s.keys.list(ctx); err != nil {
		f.s.log.Warn("list key manifests", "err", err)
		f.s.keys.unlist()
	}
}

// reloadKeys reloads guid's manifest; when the store fails it forgets the
// keys held, so that requests go to the origin rather than trust them.
func (f *follower) reloadKeys(ctx context.Context, guid string) {
	if _, err := f.s.keys.reload(ctx, guid); err != nil {
		f.s.log.Warn("reload key manifest", "guid", guid, "err", err)
		f.s.keys.forget(guid)
	}
}

// firstReadWait bounds how long Ready waits for Run's first read of the
// change feed: a store that does not answer must not keep the edge from
// serving what it can.
const firstReadWait = 2 * time.Second

// readiness is closed once the edge may serve (see Ready). The zero value
// is ready to use.
type readiness struct {
	made, closed sync.Once
	c            chan struct{}
}

func (r *readiness) wait() <-chan struct{} {
	r.made.Do(func() { r.c = make(chan struct{}) })
	return r.c
}

func (r *readiness) done() {
	r.closed.Do(func() {
		r.wait()
		close(r.c)
	})
}

// Ready returns a channel that Run closes once it has read the change feed
// for the first time, or found none, or failed to read it; or, when the
// store does not answer, after a couple of seconds; and when Run returns.
// Start serving once it is closed: the first read of the feed drops the
// whole cache (an object cached before it may be older than a change the
// feed lists), so objects served before it would be read again from the
// store. An edge that could not read the feed serves anyway, and its first
// successful read drops what it cached meanwhile.
func (s *Server) Ready() <-chan struct{} { return s.ready.wait() }

// CheckReady reports whether the edge can do its job, whatever its
// origin's state: nil once it has read the change feed (or found none) and
// while the store answers; else why not. The admin server's /readyz calls
// it.
func (s *Server) CheckReady(ctx context.Context) error {
	if !s.feedRead.Load() {
		return errors.New("change feed: not read yet")
	}
	if _, err := s.cfg.Store.Stat(ctx, delivery.FeedKey); err != nil && !problem.Is(err, problem.NotFound) {
		return fmt.Errorf("object store: %w", err)
	}
	return nil
}

// Run follows the change feed every FeedPoll, and as soon as the origin
// says a new one is written (watchOrigin), and refreshes the key manifests
// every ManifestRefresh, until ctx is cancelled. It reads the feed at once,
// and Ready tells when it has.
//
// Polling alone, an edge serves a change half a poll, on average, after
// the publisher lists it (one poll at most), and each poll costs a Stat of
// the feed: a HEAD request on S3. At the default 50 ms that is 20 requests
// a second per edge, about 52 million a month (some US$21 at S3 Standard's
// request price; nothing on MinIO or a folder), for at most 50 ms on top
// of the publisher's own time. Halving the interval doubles the bill for
// 25 ms. The origin's signal takes those 50 ms off while the origin and
// its database answer; the polls go on, so that an edge whose origin is
// down still serves every change, a poll later.
func (s *Server) Run(ctx context.Context) {
	wake := make(chan struct{}, 1)
	watching, stopWatching := context.WithCancel(ctx)
	var watcher sync.WaitGroup
	watcher.Add(1)
	go func() { defer watcher.Done(); s.watchOrigin(watching, wake) }()
	defer func() { stopWatching(); watcher.Wait() }()
	f := &follower{s: s}
	bound := time.AfterFunc(firstReadWait, func() {
		select {
		case <-s.ready.wait():
		default:
			s.log.Warn("change feed: not read yet; serving anyway, and the first read will drop what was cached meanwhile", "waited", firstReadWait)
			s.ready.done()
		}
	})
	defer bound.Stop()
	defer s.ready.done()
	poll := time.NewTicker(s.cfg.FeedPoll)
	defer poll.Stop()
	refresh := time.NewTicker(s.cfg.ManifestRefresh)
	defer refresh.Stop()
	failing, signalled := false, false
	for {
		err := f.poll(ctx, signalled)
		signalled = false
		if err == nil {
			s.feedRead.Store(true)
		}
		s.ready.done()
		switch {
		case err != nil && !failing && ctx.Err() == nil:
			s.log.Warn("change feed: cannot read it; cached objects are served until it can be read", "err", err)
			failing = true
		case err == nil && failing:
			s.log.Info("change feed: readable again")
			failing = false
		}
		select {
		case <-ctx.Done():
			return
		case <-poll.C:
		case <-wake:
			signalled = true
		case <-refresh.C:
			if f.ready {
				f.listKeys(ctx)
			}
			for _, guid := range s.keys.loaded() {
				f.reloadKeys(ctx, guid)
			}
		}
	}
}

// Backoff of watchOrigin after a failed wait: the origin is down, or does
// not follow the feed; the polls carry on meanwhile.
const (
	watchRetryMin = 100 * time.Millisecond
	watchRetryMax = 5 * time.Second
)

// watchOrigin waits at the origin for each new change feed
// (delivery.FeedWaitPath) until ctx ends, and sends on wake when one is
// written, so that Run reads it at once.
func (s *Server) watchOrigin(ctx context.Context, wake chan<- struct{}) {
	after := int64(-1) // the first wait answers at once
	retry := watchRetryMin
	for ctx.Err() == nil {
		seq, err := s.waitFeed(ctx, after)
		if err != nil {
			t := time.NewTimer(retry)
			select {
			case <-ctx.Done():
				t.Stop()
				return
			case <-t.C:
			}
			retry = min(2*retry, watchRetryMax)
			continue
		}
		retry = watchRetryMin
		if seq != after {
			after = seq
			select {
			case wake <- struct{}{}:
			default:
			}
		}
	}
}

// watchClient waits at the origin; like the forwarding client, it reaches
// the origin directly, never through an HTTP_PROXY of the environment.
var watchClient = &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 1, IdleConnTimeout: time.Minute}}

// waitFeed asks the origin for the Seq of the next feed after after.
func (s *Server) waitFeed(ctx context.Context, after int64) (int64, error) {
	ctx, cancel := context.WithTimeout(ctx, delivery.FeedWaitHold+5*time.Second)
	defer cancel()
	u := s.cfg.OriginURL + delivery.FeedWaitPath + "?after=" + strconv.FormatInt(after, 10)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return 0, err
	}
	res, err := watchClient.Do(req)
	if err != nil {
		return 0, err
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		return 0, fmt.Errorf("origin answered %s", res.Status)
	}
	var sig delivery.FeedSignal
	if err := json.NewDecoder(io.LimitReader(res.Body, 1<<10)).Decode(&sig); err != nil {
		return 0, err
	}
	return sig.Seq, nil
}
