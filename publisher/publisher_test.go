package publisher

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/edgecms/edgecms/content"
	"github.com/edgecms/edgecms/delivery"
	"github.com/edgecms/edgecms/fetch"
	"github.com/edgecms/edgecms/origin"
	"github.com/edgecms/edgecms/render"
	"github.com/edgecms/edgecms/store"
)

func TestPublishesSite(t *testing.T) {
	t.Parallel()
	e := newEnv(t, folderStore)
	e.buildSite()
	p := e.publisher(Config{})
	e.must(p.Drain(e.ctx))
	e.check(t)
}

func TestPublishesSiteMinIO(t *testing.T) {
	t.Parallel()
	e := newEnv(t, minioStore)
	e.buildSite()
	p := e.publisher(Config{})
	e.must(p.Drain(e.ctx))
	e.check(t)
}

// unconfirmed counts the events without a confirmation.
func (e *env) unconfirmed() int {
	var n int
	e.must(e.db.GetContext(e.ctx, &n, `SELECT count(*) FROM events e
		WHERE NOT EXISTS (SELECT 1 FROM event_confirmations c WHERE c.event_id = e.id)`))
	return n
}

func (e *env) cursor() int64 {
	var id int64
	e.must(e.db.GetContext(e.ctx, &id, `SELECT coalesce((SELECT id FROM event_cursors WHERE consumer = $1), 0)`, Consumer))
	return id
}

// TestConfirmations checks that every event is confirmed once its batch is
// written, and that the purger is called with the changed tags after the
// feed lists the changed objects: a CDN that refetched them earlier could
// get the old bytes from an edge that has not read the feed yet.
func TestConfirmations(t *testing.T) {
	t.Parallel()
	e := newEnv(t, folderStore)
	s := e.buildSite()
	var calls atomic.Int32
	var purged []string
	var mu sync.Mutex
	var feedBefore atomic.Int64 // the feed's seq before the edit
	author := s.authors[1]
	cdn := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		var body struct{ Tags []string }
		if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
			t.Errorf("purge body: %v", err)
		}
		if got := r.Header.Get("Authorization"); got != "Bearer t0ken" {
			t.Errorf("purge Authorization = %q", got)
		}
		mu.Lock()
		purged = append(purged, body.Tags...)
		mu.Unlock()
		// Edges can see the new state: the feed lists it.
		key := itemRequest("acme", "en-us", author).Key()
		if f := e.readFeed(t); listedAfter(f, key, feedBefore.Load()) == 0 {
			t.Errorf("purge called before the feed listed %s (feed %+v)", key, f)
		}
		w.WriteHeader(http.StatusOK)
	}))
	defer cdn.Close()
	pg, err := NewPurger("POST", cdn.URL+"/purge", "Authorization: Bearer t0ken", `{"tags":{{tags_json}}}`, 0)
	e.must(err)
	p := e.publisher(Config{Purger: pg})
	e.must(p.Drain(e.ctx))
	if n := e.unconfirmed(); n != 0 {
		t.Fatalf("%d events unconfirmed after Drain", n)
	}
	if calls.Load() != 0 {
		t.Errorf("purger called %d times for the first publish (nothing was cached)", calls.Load())
	}

	// Edit one author: the purge names exactly it and its container.
	feedBefore.Store(e.readFeed(t).Seq)
	_, err = e.cs.SaveItem(e.ctx, e.inst, "en-us", author, map[string]json.RawMessage{"Name": raw("Renamed")})
	e.must(err)
	_, err = e.cs.ItemAction(e.ctx, e.inst, "en-us", author, content.ActionPublish)
	e.must(err)
	e.must(p.Drain(e.ctx))
	if n := e.unconfirmed(); n != 0 {
		t.Fatalf("%d events unconfirmed after Drain", n)
	}
	slices.Sort(purged)
	want := []string{"acme.en-us.c:authors", fmt.Sprintf("acme.en-us.i:%d", author)}
	if !slices.Equal(purged, want) {
		t.Errorf("purged %v, want %v", purged, want)
	}
	var confirmedAfterWrite bool
	e.must(e.db.GetContext(e.ctx, &confirmedAfterWrite, `SELECT bool_and(c.confirmed_at >= o.updated_at)
		FROM event_confirmations c, objects o WHERE o.key = $1 AND c.event_id = (SELECT max(id) FROM events)`,
		itemRequest("acme", "en-us", author).Key()))
	if !confirmedAfterWrite {
		t.Errorf("the event was confirmed before its object was written")
	}
	e.check(t)
}

// TestCrashMidBatchResumes cancels a publisher after the first chunk of a
// batch is written, then lets another publisher take over.
func TestCrashMidBatchResumes(t *testing.T) {
	t.Parallel()
	e := newEnv(t, folderStore)
	s := e.buildSite()
	ctx, cancel := context.WithCancel(e.ctx)
	p1 := e.publisher(Config{})
	chunks := 0
	p1.afterChunk = func() {
		chunks++
		cancel()
	}
	err := p1.Drain(ctx)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Drain of the crashing publisher = %v, want context.Canceled", err)
	}
	if chunks == 0 {
		t.Fatal("no chunk was written before the crash")
	}
	if got := e.cursor(); got != 0 {
		t.Errorf("cursor at event %d after a crash mid-batch, want it before the batch", got)
	}
	if n, total := e.unconfirmed(), e.eventCount(); n != total {
		t.Errorf("%d of %d events confirmed after a crash mid-batch", total-n, total)
	}

	p2 := e.publisher(Config{})
	e.must(p2.Drain(e.ctx))
	e.check(t)
	if n := e.unconfirmed(); n != 0 {
		t.Errorf("%d events unconfirmed after the second publisher", n)
	}

	// Again in a later batch: an edit that changes many objects.
	e.must(e.cs.ReorderContainer(e.ctx, e.inst, "posts", []int64{s.posts[5], s.posts[2]}))
	before := e.cursor()
	ctx, cancel = context.WithCancel(e.ctx)
	p3 := e.publisher(Config{})
	p3.afterChunk = cancel
	if err := p3.Drain(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("Drain = %v, want context.Canceled", err)
	}
	if got := e.cursor(); got != before {
		t.Errorf("cursor moved from %d to %d in a crashed batch", before, got)
	}
	e.must(p2.Drain(e.ctx))
	e.check(t)
}

func (e *env) eventCount() int {
	var n int
	e.must(e.db.GetContext(e.ctx, &n, `SELECT count(*) FROM events`))
	return n
}

// TestConcurrentPublishers runs two publishers (with notifications) while
// an editor edits, write-backs arrive and a republish runs, then checks the
// store against fresh renders, on MinIO.
func TestConcurrentPublishers(t *testing.T) {
	t.Parallel()
	e := newEnv(t, minioStore)
	s := e.buildSite()
	p1 := e.publisher(Config{DatabaseURL: e.dsn, Poll: 50 * time.Millisecond})
	p2 := e.publisher(Config{DatabaseURL: e.dsn, Poll: 50 * time.Millisecond})
	ctx, stop := context.WithCancel(e.ctx)
	var wg sync.WaitGroup
	for _, p := range []*Publisher{p1, p2} {
		wg.Add(1)
		go func() { defer wg.Done(); p.Run(ctx) }()
	}
	// A third writer: republishing the whole instance over and over.
	wg.Add(1)
	republishes := republishLoop(ctx, t, &wg, p2, e.guid)
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	r := &randomEditor{e: e, p: p1, s: s, rng: rand.New(rand.NewPCG(seed, 1))}
	edits := 80
	if testing.Short() {
		edits = 20
	}
	for range edits {
		r.edit()
	}
	// Quiesce: let both publishers finish, stop the republisher, catch up.
	stop()
	wg.Wait()
	e.must(p1.Drain(e.ctx))
	e.check(t)
	if n := e.unconfirmed(); n != 0 {
		t.Errorf("%d events unconfirmed", n)
	}
	t.Logf("%d edits, %d republishes; counts %v", edits, *republishes, r.counts)
}

// TestOlderRenderNeverOverwrites writes an object with a render number and
// then with a smaller one: the second write is dropped.
func TestOlderRenderNeverOverwrites(t *testing.T) {
	t.Parallel()
	e := newEnv(t, folderStore)
	p := e.publisher(Config{})
	req := itemRequest(e.guid, "en-us", 1)
	obj := func(body string) *rendered {
		return &rendered{req: req, key: req.Key(), body: []byte(body), etag: store.ETag([]byte(body)), tags: []string{"acme.en-us.i:1"}}
	}
	tests := []struct {
		version  int64
		r        *rendered
		want     string // body in the store afterwards, "" for none
		superset int
	}{
		{version: 10, r: obj(`{"v":10}`), want: `{"v":10}`},
		{version: 5, r: obj(`{"v":5}`), want: `{"v":10}`, superset: 1},
		{version: 10, r: obj(`{"v":"10 again"}`), want: `{"v":10}`, superset: 1},
		{version: 12, r: &rendered{req: req, key: req.Key(), gone: true}, want: ""},
		{version: 11, r: obj(`{"v":11}`), want: "", superset: 1}, // a tombstone holds too
		{version: 13, r: obj(`{"v":13}`), want: `{"v":13}`},
	}
	for _, tc := range tests {
		out, err := p.writeChunk(e.ctx, e.guid, []*rendered{tc.r}, writeOpts{version: tc.version})
		e.must(err)
		if out.superseded != tc.superset {
			t.Errorf("write at %d: superseded %d, want %d", tc.version, out.superseded, tc.superset)
		}
		o, err := e.store.Get(e.ctx, req.Key())
		got := string(o.Body)
		if err != nil {
			got = ""
		}
		if got != tc.want {
			t.Errorf("after the write at %d the store holds %q, want %q", tc.version, got, tc.want)
		}
	}
}

// readFeed reads the feed object.
func (e *env) readFeed(t *testing.T) delivery.Feed {
	t.Helper()
	o, err := e.store.Get(e.ctx, delivery.FeedKey)
	e.must(err)
	var f delivery.Feed
	e.must(json.Unmarshal(o.Body, &f))
	return f
}

// TestFeed checks that the feed lists changed keys in order, that a change
// appears after the seq an edge read before it, and that the feed keeps only
// the latest changes.
func TestFeed(t *testing.T) {
	t.Parallel()
	e := newEnv(t, folderStore)
	p := e.publisher(Config{FeedSize: 50})
	e.must(p.Drain(e.ctx))
	// A new instance has only its website channel's (empty) sitemaps,
	// two per locale.
	f := e.readFeed(t)
	if len(f.Changes) != 4 || f.Oldest != f.Changes[0].Seq || f.Seq != f.Changes[3].Seq ||
		!slices.ContainsFunc(f.Changes, func(c delivery.Change) bool { return c.Key == e.guid+"/fetch/fr-ca/sitemap/nested/website.json" }) {
		t.Errorf("feed of a new instance = %+v, want its 4 sitemaps", f)
	}
	s := e.buildSite()
	e.must(p.Drain(e.ctx))
	f = e.readFeed(t)
	if len(f.Changes) != 50 {
		t.Fatalf("feed lists %d changes, want FeedSize 50", len(f.Changes))
	}
	checkOrder := func(f delivery.Feed) {
		t.Helper()
		for i, c := range f.Changes {
			if i > 0 && c.Seq <= f.Changes[i-1].Seq {
				t.Errorf("feed out of order at %d: %d after %d", i, c.Seq, f.Changes[i-1].Seq)
			}
		}
		if n := len(f.Changes); n > 0 && (f.Seq != f.Changes[n-1].Seq || f.Oldest != f.Changes[0].Seq) {
			t.Errorf("feed seq %d oldest %d, changes from %d to %d", f.Seq, f.Oldest, f.Changes[0].Seq, f.Changes[n-1].Seq)
		}
	}
	checkOrder(f)
	if f.Oldest <= 1 {
		t.Errorf("feed oldest = %d; the first changes should have dropped out", f.Oldest)
	}
	seen := f.Seq

	// One edit: the item's objects appear after the seq read before.
	tag := s.tags[2]
	_, err := e.cs.SaveItem(e.ctx, e.inst, "fr-CA", tag, map[string]json.RawMessage{"Title": raw("Étiquette")})
	e.must(err)
	_, err = e.cs.ItemAction(e.ctx, e.inst, "fr-CA", tag, content.ActionPublish)
	e.must(err)
	e.must(p.Drain(e.ctx))
	f = e.readFeed(t)
	checkOrder(f)
	var after []string
	for _, c := range f.Changes {
		if c.Seq > seen {
			after = append(after, c.Key)
		}
	}
	own := itemRequest(e.guid, "fr-CA", tag).Key()
	list := listRequest(e.guid, "fr-CA", "tags", 0).Key()
	if !slices.Contains(after, own) || !slices.Contains(after, list) {
		t.Errorf("changes after seq %d = %v, want them to include %s and %s", seen, after, own, list)
	}
	for _, k := range after {
		if !strings.HasPrefix(k, "acme/fetch/fr-ca/") {
			t.Errorf("change %s listed for an edit of a fr-CA copy", k)
		}
	}
	// Nothing changes: no new entries.
	e.must(p.Drain(e.ctx))
	if g := e.readFeed(t); g.Seq != f.Seq {
		t.Errorf("feed seq moved from %d to %d without a change", f.Seq, g.Seq)
	}
}

// TestKeyManifest runs a publisher and changes API keys: each change
// reaches the manifest, which the feed lists.
func TestKeyManifest(t *testing.T) {
	t.Parallel()
	e := newEnv(t, folderStore)
	p := e.publisher(Config{DatabaseURL: e.dsn, KeyPoll: time.Hour}) // notifications only
	ctx, stop := context.WithCancel(e.ctx)
	done := make(chan struct{})
	go func() { p.Run(ctx); close(done) }()
	defer func() { stop(); <-done }()

	manifest := func() delivery.Manifest {
		o, err := e.store.Get(e.ctx, delivery.ManifestKey(e.guid))
		if err != nil {
			return delivery.Manifest{}
		}
		var m delivery.Manifest
		e.must(json.Unmarshal(o.Body, &m))
		return m
	}
	// waitFor polls until the manifest satisfies ok, and reports how long
	// it took (a benchmark measures it; this test only logs it).
	waitFor := func(what string, ok func(delivery.Manifest) bool) {
		t.Helper()
		start := time.Now()
		for !ok(manifest()) {
			if time.Since(start) > 20*time.Second {
				t.Fatalf("%s: manifest is %+v", what, manifest())
			}
			time.Sleep(5 * time.Millisecond)
		}
		t.Logf("%s: in the manifest after %v", what, time.Since(start).Round(time.Millisecond))
	}
	name := "site"
	k, secret, err := e.cs.CreateAPIKey(e.ctx, e.inst, content.APIKeyInput{Name: &name, Type: "fetch"})
	e.must(err)
	hash := hex.EncodeToString(content.HashSecret(secret))
	waitFor("new key", func(m delivery.Manifest) bool {
		return m.Guid == e.guid && len(m.Keys) == 1 && m.Keys[0].Hash == hash && m.Keys[0].Type == "fetch" && m.Keys[0].Enabled
	})
	if strings.Contains(fmt.Sprint(manifest()), secret) {
		t.Fatal("the manifest holds the secret")
	}
	off := false
	_, err = e.cs.UpdateAPIKey(e.ctx, e.inst, k.ID, content.APIKeyInput{Enabled: &off})
	e.must(err)
	waitFor("disabled", func(m delivery.Manifest) bool { return len(m.Keys) == 1 && !m.Keys[0].Enabled })
	at := time.Now().Add(time.Hour).UTC().Truncate(time.Microsecond)
	_, err = e.cs.UpdateAPIKey(e.ctx, e.inst, k.ID, content.APIKeyInput{ExpiresAt: &at})
	e.must(err)
	waitFor("expiry", func(m delivery.Manifest) bool {
		return len(m.Keys) == 1 && m.Keys[0].ExpiresAt != nil && m.Keys[0].ExpiresAt.Equal(at)
	})
	_, _, err = e.cs.CreateAPIKey(e.ctx, e.inst, content.APIKeyInput{Name: &name, Type: "preview"})
	e.must(err)
	waitFor("preview key", func(m delivery.Manifest) bool { return len(m.Keys) == 2 && m.Keys[1].Type == "preview" })
	e.must(e.cs.DeleteAPIKey(e.ctx, e.inst, k.ID))
	waitFor("deleted", func(m delivery.Manifest) bool { return len(m.Keys) == 1 && m.Keys[0].Type == "preview" })

	// The feed lists the manifest after each change.
	start := time.Now()
	for {
		f := e.readFeed(t)
		if n := len(f.Changes); n > 0 && f.Changes[n-1].Key == delivery.ManifestKey(e.guid) {
			break
		}
		if time.Since(start) > 20*time.Second {
			t.Fatalf("feed %+v does not list the manifest", f)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestKeyManifestPolled checks the fallback without notifications: the
// key digests are compared every KeyPoll.
func TestKeyManifestPolled(t *testing.T) {
	t.Parallel()
	e := newEnv(t, folderStore)
	p := e.publisher(Config{KeyPoll: 20 * time.Millisecond})
	ctx, stop := context.WithCancel(e.ctx)
	done := make(chan struct{})
	go func() { p.Run(ctx); close(done) }()
	defer func() { stop(); <-done }()
	name := "k"
	_, secret, err := e.cs.CreateAPIKey(e.ctx, e.inst, content.APIKeyInput{Name: &name, Type: "fetch"})
	e.must(err)
	hash := hex.EncodeToString(content.HashSecret(secret))
	start := time.Now()
	for {
		o, err := e.store.Get(e.ctx, delivery.ManifestKey(e.guid))
		if err == nil && strings.Contains(string(o.Body), hash) {
			break
		}
		if time.Since(start) > 20*time.Second {
			t.Fatal("the manifest never listed the new key")
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestOriginWriteBack asks the origin for a variant the publisher does not
// maintain: read once, it is not written back; read twice, it is. A change
// to what it shows drops it from the store (edges then miss it and the
// origin renders it again), and the next reads write the new one back.
func TestOriginWriteBack(t *testing.T) {
	t.Parallel()
	e := newEnv(t, folderStore)
	s := e.buildSite()
	p := e.publisher(Config{})
	e.must(p.Drain(e.ctx))
	name := "k"
	_, key, err := e.cs.CreateAPIKey(e.ctx, e.inst, content.APIKeyInput{Name: &name, Type: "fetch"})
	e.must(err)
	rr := render.New(e.cs)
	defer rr.Close()
	srv := origin.New(origin.Config{
		Render: func(ctx context.Context, req fetch.Request) ([]byte, []string, error) {
			site, err := render.LoadSite(ctx, e.cs, req.Guid)
			if err != nil {
				return nil, nil, err
			}
			res, err := rr.Render(ctx, site, req)
			return res.Body, res.Tags, err
		},
		RenderCacheBytes: -1, // a change must reach the origin's answers at once
		ChangePoll:       time.Millisecond,
		WriteBack:        p.WriteBack,
	}, e.cs, testLog(t))
	ctx, stop := context.WithCancel(e.ctx)
	var wg sync.WaitGroup
	defer func() { stop(); wg.Wait() }()
	wg.Add(1)
	go func() { defer wg.Done(); srv.Run(ctx) }()
	path := "/acme/fetch/en-us/list/posts?take=3&sort=fields.title&direction=desc&contentLinkDepth=2"
	read := func() []byte {
		req := httptest.NewRequest("GET", path, nil)
		req.Header.Set("APIKey", key)
		resp, err := srv.App().Test(req, -1)
		e.must(err)
		body, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != 200 {
			t.Fatalf("GET %s = %d %s", path, resp.StatusCode, body)
		}
		return body
	}
	want, err := fetch.Parse(fetch.Input{Path: "/acme/fetch/en-us/list/posts", RawQuery: "take=3&sort=fields.title&direction=desc&contentLinkDepth=2"})
	e.must(err)
	// writtenBack reads until the store holds what the origin answers (a
	// read whose render saw the instance change is not handed over: the
	// next one is).
	writtenBack := func(contains string) {
		t.Helper()
		for start := time.Now(); ; time.Sleep(5 * time.Millisecond) {
			body := read()
			if !strings.Contains(string(body), contains) {
				t.Fatalf("origin answers %s, want it to show %q", clip(body), contains)
			}
			// The object is Put before its row commits: wait for both.
			if o, err := e.store.Get(e.ctx, want.Key()); err == nil &&
				e.count(`SELECT count(*) FROM objects WHERE key = $1 AND etag IS NOT NULL`, want.Key()) == 1 {
				if string(o.Body) != string(body) {
					t.Fatalf("written back %s, origin answered %s", clip(o.Body), clip(body))
				}
				return
			}
			if time.Since(start) > 20*time.Second {
				t.Fatalf("%s never written back", want.Key())
			}
		}
	}
	read()
	if q := p.writeBacks.take(); len(q) != 0 {
		t.Fatalf("one read queued %d write-backs, want none", len(q))
	}
	wg.Add(1)
	go func() { defer wg.Done(); p.RunWriteBacks(ctx) }()
	writtenBack("Post")

	// A change to one of its posts drops it: it is not rendered again.
	_, err = e.cs.SaveItem(e.ctx, e.inst, "en-us", s.posts[3], map[string]json.RawMessage{"Title": raw("Zzz first in desc")})
	e.must(err)
	_, err = e.cs.ItemAction(e.ctx, e.inst, "en-us", s.posts[3], content.ActionPublish)
	e.must(err)
	e.must(p.Drain(e.ctx))
	if e.has(want) {
		t.Errorf("written-back variant still stored after a change to what it shows")
	}
	e.check(t)
	// Read again, the origin answers the new one and, once it has seen
	// the change, hands it over at once (its reads are counted across
	// changes).
	writtenBack("Zzz first in desc")
	e.check(t)
}

// TestStrayDeleteRacesWriter has a writer Put and record an object that a
// republish took for a stray, after the republish checked the objects table
// and before it deleted the object: the republish renders it again, and the
// store still holds what the table says it holds.
func TestStrayDeleteRacesWriter(t *testing.T) {
	t.Parallel()
	e := newEnv(t, folderStore)
	e.buildSite()
	p := e.publisher(Config{})
	e.must(p.Drain(e.ctx))
	req := listRequest(e.guid, "en-us", "posts", 10)
	// The list page as a delete leaves it: in the store (listed before the
	// delete), no live row.
	_, err := e.db.ExecContext(e.ctx, `DELETE FROM objects WHERE key = $1`, req.Key())
	e.must(err)
	site, err := render.LoadSite(e.ctx, e.cs, e.guid)
	e.must(err)
	var listed string
	e.must(e.db.GetContext(e.ctx, &listed, newXIDSQL))
	raced := false
	p.beforeStrayDelete = func() {
		// A new item fills the page again, and another writer records it.
		w := e.publisher(Config{})
		v, err := w.lockedVersion(e.ctx, e.guid)
		e.must(err)
		out, err := w.publish(e.ctx, site, []fetch.Request{req}, writeOpts{version: v}, nil)
		e.must(err)
		raced = out.written == 1
	}
	n, err := p.deleteUnknown(e.ctx, site, map[string]bool{}, map[string]*store.Info{req.Key(): {Key: req.Key()}}, listed)
	e.must(err)
	if !raced || n != 1 {
		t.Fatalf("the writer wrote: %v; deleted %d, want the race and 1", raced, n)
	}
	e.check(t)
}

// TestRepublish removes objects behind the publisher's back, adds a stray
// one and corrupts one: Republish puts everything right and reports
// progress up to the total.
func TestRepublish(t *testing.T) {
	t.Parallel()
	e := newEnv(t, folderStore)
	e.buildSite()
	p := e.publisher(Config{})
	e.must(p.Drain(e.ctx))
	victim := listRequest(e.guid, "en-us", "posts", 10).Key()
	e.must(e.store.Delete(e.ctx, victim))
	_, err := e.store.Put(e.ctx, store.Object{Key: e.guid + "/fetch/en-us/item/999/d1.json", Body: []byte(`{}`)})
	e.must(err)
	_, err = e.store.Put(e.ctx, store.Object{Key: listRequest(e.guid, "fr-CA", "tags", 0).Key(), Body: []byte(`{"stale":true}`)})
	e.must(err)
	var last, total int
	calls := 0
	e.must(p.Republish(e.ctx, e.guid, func(done, n int) {
		calls++
		if done < last {
			t.Errorf("progress went back from %d to %d", last, done)
		}
		last, total = done, n
	}))
	if calls < 2 || last != total || total < 100 {
		t.Errorf("progress: %d calls, last %d of %d", calls, last, total)
	}
	e.check(t)
}
