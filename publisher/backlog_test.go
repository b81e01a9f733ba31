package publisher

import (
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/edgecms/edgecms/content"
	"github.com/edgecms/edgecms/fetch"
)

// pauseWrites makes p's chunk of objects that has a request of which
// match is true wait, before its transaction, until resume is closed; the
// returned channel is closed when the first such chunk is waiting. Only
// the first one waits.
func pauseWrites(p *Publisher, match func(fetch.Request) bool) (paused, resume chan struct{}) {
	paused, resume = make(chan struct{}), make(chan struct{})
	var once sync.Once
	p.beforeWrite = func(rs []*rendered) {
		for _, r := range rs {
			if match(r.req) {
				once.Do(func() { close(paused); <-resume })
				return
			}
		}
	}
	return paused, resume
}

// awaitPause waits until a chunk paused by pauseWrites, or fails the test
// when the background chunk ended first.
func awaitPause(t *testing.T, paused chan struct{}, chunk chan error) {
	t.Helper()
	select {
	case <-paused:
	case err := <-chunk:
		t.Fatalf("the background chunk ended before it paused: %v", err)
	}
}

// verifyClean checks the store with Publisher.Verify.
func verifyClean(t *testing.T, e *env, p *Publisher) {
	t.Helper()
	v, err := p.Verify(e.ctx, e.guid, nil)
	e.must(err)
	if len(v.Mismatches) != 0 {
		t.Errorf("Verify: %+v", v.Mismatches)
	}
}

// TestBatchNotBlockedByBackgroundChunk checks that a background chunk
// that builds the sitemaps behind a dynamic page (seconds at 100,000
// items) holds no lock a batch of events needs: with a chunk stopped
// before it writes the sitemaps, a new post's batch writes the post, its
// list pages and hands its events off.
func TestBatchNotBlockedByBackgroundChunk(t *testing.T) {
	t.Parallel()
	s := newScaleSite(t, 40)
	e, p := s.e, s.p
	flat := sitemapRequest(e.guid, "en-us", "website", false)
	s.newPost("first-new")
	e.must(p.drainEvents(e.ctx)) // queues the sitemaps
	paused, resume := pauseWrites(p, func(r fetch.Request) bool { return r.Key() == flat.Key() })
	chunk := make(chan error, 1)
	go func() { _, _, err := p.runBacklog(e.ctx, true); chunk <- err }()
	awaitPause(t, paused, chunk)

	id := s.newPost("second-new")
	batch := make(chan error, 1)
	go func() { batch <- p.drainEvents(e.ctx) }()
	select {
	case err := <-batch:
		e.must(err)
	case <-time.After(2 * time.Minute): // a guard against a deadlock, not a speed target
		close(resume)
		t.Fatal("the batch did not finish while a background chunk was in progress")
	}
	if n := e.unconfirmed(); n != 0 {
		t.Errorf("%d events unconfirmed after the batch", n)
	}
	if !e.has(itemRequest(e.guid, "en-us", id)) {
		t.Errorf("the batch did not write the new post")
	}
	// 42 posts: list page 0 and the new post's, 40.
	for _, skip := range []int{0, 40} {
		o, err := e.store.Get(e.ctx, listRequest(e.guid, "en-us", "posts", skip).Key())
		e.must(err)
		if !strings.Contains(string(o.Body), `"totalCount":42`) {
			t.Errorf("list page %d does not count the new post: %s", skip, clip(o.Body))
		}
	}
	close(resume)
	e.must(<-chunk)
	e.must(p.Drain(e.ctx))
	e.check(t)
	verifyClean(t, e, p)
}

// TestBackgroundChunkRequeuesWhatABatchMissed checks the optimistic check
// of a background chunk, which renders without the instance lock: a chunk
// that creates a new post's page by path (from the sitemap comparison; the
// batch left it to the lane, since its slug is another post's and so its
// path is contested) while a batch plans an edit of the dynamic page's zone cannot know
// whether that batch found the page by path (it had no row yet), so it
// queues it again, and the store ends equal to fresh renders.
func TestBackgroundChunkRequeuesWhatABatchMissed(t *testing.T) {
	t.Parallel()
	s := newScaleSite(t, 40)
	e, p := s.e, s.p
	_, err := e.cs.CreateModel(e.ctx, e.inst, content.Model{Name: "Note", Kind: "component",
		Fields: content.Fields{{Name: "Text", Type: content.TypeText}}})
	e.must(err)
	var blog int64
	e.must(e.db.GetContext(e.ctx, &blog, `SELECT page_id FROM page_copies WHERE name = 'blog' AND locale = 'en-us'`))
	note := func(text string) {
		_, _, err := e.cs.AddComponent(e.ctx, e.inst, "en-us", blog, "main", "Note",
			map[string]json.RawMessage{"Text": raw(text)})
		e.must(err)
		_, err = e.cs.PageAction(e.ctx, e.inst, "en-us", blog, content.ActionPublish)
		e.must(err)
	}
	note("before")
	e.must(p.Drain(e.ctx))

	s.newPost("post-3")
	e.must(p.drainEvents(e.ctx)) // queues the sitemaps and the contested page by path
	isNew := func(r fetch.Request) bool {
		return r.Kind == fetch.PageByPath && strings.HasSuffix(r.Path, "/post-3-2")
	}
	paused, resume := pauseWrites(p, isNew)
	chunk := make(chan error, 1)
	go func() { _, _, err := p.runBacklog(e.ctx, true); chunk <- err }()
	awaitPause(t, paused, chunk) // the page by path is rendered, not written

	// Every page by path of the blog shows its zone: the batch renders
	// those it finds, and finds no row of the new post's yet.
	note("after")
	e.must(p.drainEvents(e.ctx))
	close(resume)
	e.must(<-chunk)
	if got := p.Stats().Requeued; got != 1 {
		t.Errorf("the chunk queued %d objects again, want the new post's page by path", got)
	}
	e.must(p.Drain(e.ctx))
	e.check(t)
	verifyClean(t, e, p)
}

// TestTreeEveryFollowsBuildTime checks that sitemap work is spaced by
// Config.SitemapEvery, or by the time the last such chunk took when that
// is longer, so that the background lane spends at most half its time on
// it.
func TestTreeEveryFollowsBuildTime(t *testing.T) {
	t.Parallel()
	p := &Publisher{cfg: Config{SitemapEvery: time.Second}}
	for _, tc := range []struct{ build, want time.Duration }{
		{0, time.Second},
		{300 * time.Millisecond, time.Second},
		{4 * time.Second, 4 * time.Second},
	} {
		p.lastTreeBuild.Store(int64(tc.build))
		if got := p.treeEvery(); got != tc.want {
			t.Errorf("treeEvery after a build of %v = %v, want %v", tc.build, got, tc.want)
		}
	}
}
