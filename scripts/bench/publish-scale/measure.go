//go:build unix

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"time"
)

// fetchGet is a Fetch API GET of path (after /{guid}/fetch/{locale}) at an
// edge.
func (r *run) fetchGet(ctx context.Context, edge, path string) (int, []byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, edge+"/"+guid+"/fetch/"+locale+path, nil)
	if err != nil {
		return 0, nil, err
	}
	req.Header.Set("APIKey", r.fetchKey)
	res, err := r.http.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	return res.StatusCode, b, err
}

func (r *run) listPath(skip int) string {
	return fmt.Sprintf("/list/%s?take=10&skip=%d", container, skip)
}
func itemPath(id int64) string { return fmt.Sprintf("/item/%d", id) }
func (r *run) pagePath(slug string) string {
	return fmt.Sprintf("/page/%s?path=%s&contentLinkDepth=2&expandAllContentLinks=true", channel, url.QueryEscape(r.pathPrefix+"/"+slug))
}

// waitEdge polls an edge until a 200 answer satisfies ok and returns the
// time from since.
func (r *run) waitEdge(ctx context.Context, edge, path string, since time.Time, poll time.Duration, ok func([]byte) bool) (time.Duration, bool) {
	for {
		status, b, err := r.fetchGet(ctx, edge, path)
		if err == nil && status == http.StatusOK && ok(b) {
			return time.Since(since), true
		}
		if !pause(ctx, since, poll) {
			return 0, false
		}
	}
}

// pause waits before the next poll: poll, or a twentieth of the time
// waited so far if that is longer, so that slow publishes (and many at
// once) do not flood the edges, at an error of at most 5 %.
func pause(ctx context.Context, since time.Time, poll time.Duration) bool {
	t := time.NewTimer(max(poll, time.Since(since)/20))
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

// waitEdges waits on every edge and returns the slowest.
func (r *run) waitEdges(ctx context.Context, path string, since time.Time, poll time.Duration, ok func([]byte) bool) (time.Duration, bool) {
	var mu sync.Mutex
	var worst time.Duration
	all := true
	var wg sync.WaitGroup
	for _, e := range r.edges {
		wg.Add(1)
		go func() {
			defer wg.Done()
			d, got := r.waitEdge(ctx, e, path, since, poll, ok)
			mu.Lock()
			worst, all = max(worst, d), all && got
			mu.Unlock()
		}()
	}
	wg.Wait()
	return worst, all
}

// waitFile polls a store file until its bytes satisfy ok.
func waitFile(ctx context.Context, path string, since time.Time, poll time.Duration, ok func([]byte) bool) (time.Duration, bool) {
	for {
		if b, err := os.ReadFile(path); err == nil && ok(b) {
			return time.Since(since), true
		}
		if !pause(ctx, since, poll) {
			return 0, false
		}
	}
}

func contains(s string) func([]byte) bool {
	return func(b []byte) bool { return bytes.Contains(b, []byte(s)) }
}

// countAtLeast is true for a list answer whose totalCount is at least n.
func countAtLeast(n int64) func([]byte) bool {
	return func(b []byte) bool {
		var l struct {
			TotalCount int64 `json:"totalCount"`
		}
		return json.Unmarshal(b, &l) == nil && l.TotalCount >= n
	}
}

// counters is where the publisher's bookkeeping stood: the last render
// number taken and the last object change recorded. ok is false when the
// binary's schema has neither.
type counters struct {
	renders, changes int64
	backlog          int64 // rows of publish_backlog, where the binary has one; else -1
	pending          bool  // events past the publisher's cursor
	ok               bool
}

func (r *run) counters(ctx context.Context) counters {
	var c counters
	err1 := r.db.GetContext(ctx, &c.renders, `SELECT last_value FROM publisher_renders`)
	err2 := r.db.GetContext(ctx, &c.changes, `SELECT coalesce(max(seq), 0) FROM object_changes`)
	c.ok = err1 == nil && err2 == nil
	// A batch renders under a number taken at its start, and unchanged
	// objects add no change: a long batch looks quiet by the two numbers
	// alone, but not by its cursor.
	r.db.GetContext(ctx, &c.pending, `SELECT EXISTS (SELECT 1 FROM events e, event_cursors c
		WHERE c.consumer = 'publisher' AND (e.tx, e.id) > (c.tx, c.id))`)
	if r.hasBacklog {
		r.db.GetContext(ctx, &c.backlog, `SELECT count(*) FROM publish_backlog`)
	} else {
		c.backlog = -1
	}
	return c
}

// renderedSince counts the objects rendered since before, or -1.
func (r *run) renderedSince(ctx context.Context, before counters) int64 {
	n := int64(-1)
	if before.ok {
		r.db.GetContext(ctx, &n, `SELECT count(*) FROM objects WHERE rendered_version > $1`, before.renders)
	}
	return n
}

// settle waits until the publisher is quiet for cfg.Quiet: no event past
// its cursor, no render number taken, no object change recorded (or,
// without those tables, no feed written). It returns how long it waited.
func (r *run) settle(ctx context.Context) (time.Duration, error) {
	start := time.Now()
	deadline := start.Add(r.cfg.SettleTimeout)
	last, lastFiles := r.counters(ctx), r.storeMtime()
	quietSince := time.Now()
	for time.Now().Before(deadline) {
		if err := ctx.Err(); err != nil {
			return 0, err
		}
		time.Sleep(100 * time.Millisecond)
		c := counters{}
		files := time.Time{}
		if last.ok {
			c = r.counters(ctx)
		} else {
			files = r.storeMtime()
		}
		if c != last || !files.Equal(lastFiles) || c.backlog > 0 || c.pending {
			last, lastFiles, quietSince = c, files, time.Now()
			continue
		}
		if time.Since(quietSince) >= r.cfg.Quiet {
			return time.Since(start) - r.cfg.Quiet, nil
		}
	}
	return 0, fmt.Errorf("the publisher did not go quiet within %v", r.cfg.SettleTimeout)
}

// storeMtime is the latest mtime of the feed object, which every write
// of the publisher is listed in.
func (r *run) storeMtime() time.Time {
	fi, err := os.Stat(filepath.Join(r.store, "_feed", "changes.json"))
	if err != nil {
		return time.Time{}
	}
	return fi.ModTime()
}

// costs are what one publish cost the publisher, once it is quiet.
type costs struct {
	rendered, written, files, logged int64
	haveRendered, haveLogged         bool
}

var renderedRE = regexp.MustCompile(`publisher: published.* rendered=(\d+)`)

func (r *run) costs(ctx context.Context, before counters, logOffset int64, since time.Time) costs {
	var c costs
	if before.ok {
		if r.db.GetContext(ctx, &c.rendered, `SELECT count(*) FROM objects WHERE rendered_version > $1`, before.renders) == nil {
			c.haveRendered = true
		}
		r.db.GetContext(ctx, &c.written, `SELECT count(*) FROM object_changes WHERE seq > $1 AND key NOT LIKE '\_%'`, before.changes)
	}
	filepath.WalkDir(filepath.Join(r.store, guid), func(_ string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			if fi, err := d.Info(); err == nil && !fi.ModTime().Before(since) {
				c.files++
			}
		}
		return nil
	})
	if f, err := os.Open(r.publisher.log); err == nil {
		f.Seek(logOffset, io.SeekStart)
		b, _ := io.ReadAll(f)
		f.Close()
		for _, m := range renderedRE.FindAllSubmatch(b, -1) {
			var n int64
			fmt.Sscan(string(m[1]), &n)
			c.logged += n
			c.haveLogged = true
		}
	}
	return c
}

func logSize(path string) int64 {
	fi, err := os.Stat(path)
	if err != nil {
		return 0
	}
	return fi.Size()
}

// measureOneByOne runs the edits and the new items one at a time, each
// after the publisher went quiet.
func (r *run) measureOneByOne(ctx context.Context) error {
	perm := rand.Perm(len(r.ids))
	for i := range r.cfg.Edits {
		id := r.ids[perm[i%len(perm)]]
		if err := r.oneEdit(ctx, i, id); err != nil {
			return fmt.Errorf("edit %d: %w", i, err)
		}
	}
	r.printf("edits of existing items, one at a time: %d\n", r.cfg.Edits)
	for i := range r.cfg.News {
		if err := r.oneNew(ctx, i); err != nil {
			return fmt.Errorf("new item %d: %w", i, err)
		}
	}
	r.printf("new items, one at a time: %d\n", r.cfg.News)
	return nil
}

func (r *run) manageURL(format string, a ...any) string {
	return r.origin + "/api/v1/instance/" + guid + "/" + locale + fmt.Sprintf(format, a...)
}

func (r *run) oneEdit(ctx context.Context, i int, id int64) error {
	marker := fmt.Sprintf("Edited %d at %d", i, time.Now().UnixNano())
	b, _ := json.Marshal(map[string]any{"fields": map[string]string{"title": marker}})
	if _, err := r.call(ctx, http.MethodPut, r.manageURL("/items/%d", id), string(b)); err != nil {
		return err
	}
	before, logOff := r.counters(ctx), logSize(r.publisher.log)
	start := time.Now()
	if _, err := r.call(ctx, http.MethodPost, r.manageURL("/items/%d/publish", id), ""); err != nil {
		return err
	}
	r.res.Edit.Call.addDur(time.Since(start), true)
	wctx, cancel := context.WithTimeout(ctx, r.cfg.Timeout)
	defer cancel()
	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		r.res.Edit.Edges.addDur(r.waitEdges(wctx, itemPath(id), start, r.cfg.Poll, contains(marker)))
	}()
	go func() {
		defer wg.Done()
		r.res.Edit.Webhook.addDur(r.rcv.wait(wctx, id, start, r.cfg.Poll))
	}()
	wg.Wait()
	if _, err := r.settle(ctx); err != nil {
		return err
	}
	r.res.Edit.Quiet.addDur(time.Since(start)-r.cfg.Quiet, true)
	c := r.costs(ctx, before, logOff, start)
	r.res.Edit.addCosts(c)
	r.printf("  edit %d: edges %s, webhook %s, rendered %d, files %d\n", i, last(&r.res.Edit.Edges), last(&r.res.Edit.Webhook), c.rendered, c.files)
	return nil
}

func (r *run) oneNew(ctx context.Context, i int) error {
	slug := fmt.Sprintf("new-%d-%d", i, time.Now().UnixNano())
	marker := "New " + slug
	id, err := r.createItem(ctx, marker, slug)
	if err != nil {
		return err
	}
	want := r.published.Load() + 1
	before, logOff := r.counters(ctx), logSize(r.publisher.log)
	start := time.Now()
	if _, err := r.call(ctx, http.MethodPost, r.manageURL("/items/%d/publish", id), ""); err != nil {
		return err
	}
	r.published.Add(1)
	n := &r.res.New
	n.Call.addDur(time.Since(start), true)
	wctx, cancel := context.WithTimeout(ctx, r.cfg.Timeout)
	defer cancel()
	var wg sync.WaitGroup
	var mu sync.Mutex
	served, allServed := time.Duration(0), true
	stored, allStored := time.Duration(0), true
	const (
		edge = iota
		store
		other
	)
	run := func(f func() (time.Duration, bool), s *series, kind int) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			d, ok := f()
			mu.Lock()
			defer mu.Unlock()
			s.addDur(d, ok)
			switch kind {
			case edge:
				served, allServed = max(served, d), allServed && ok
			case store:
				stored, allStored = max(stored, d), allStored && ok
			}
		}()
	}
	run(func() (time.Duration, bool) {
		return r.waitEdges(wctx, itemPath(id), start, r.cfg.Poll, contains(marker))
	}, &n.ItemEdges, edge)
	run(func() (time.Duration, bool) {
		return r.waitEdges(wctx, r.listPath(0), start, r.cfg.Poll, countAtLeast(want))
	}, &n.ListEdges, edge)
	run(func() (time.Duration, bool) {
		return r.waitEdges(wctx, r.pagePath(slug), start, r.cfg.Poll, contains(slug))
	}, &n.PageEdges, edge)
	run(func() (time.Duration, bool) {
		return waitFile(wctx, r.objectPath(fmt.Sprintf("item/%d/d1.json", id)), start, r.cfg.Poll, contains(marker))
	}, &n.ItemStore, store)
	run(func() (time.Duration, bool) {
		return waitFile(wctx, r.objectPath(fmt.Sprintf("list/%s/d1,take10,skip0.json", container)), start, r.cfg.Poll, countAtLeast(want))
	}, &n.ListStore, store)
	run(func() (time.Duration, bool) {
		d, ok := r.rcv.wait(wctx, id, start, r.cfg.Poll)
		if k := r.renderedSince(ctx, before); ok && k >= 0 {
			n.RenderedByWebhook.add(float64(k))
		}
		return d, ok
	}, &n.Webhook, other)
	run(func() (time.Duration, bool) { return r.waitFanout(wctx, slug, want, start) }, &n.Fanout, other)
	wg.Wait()
	n.Served.addDur(served, allServed)
	n.Stored.addDur(stored, allStored)
	if _, err := r.settle(ctx); err != nil {
		return err
	}
	n.Quiet.addDur(time.Since(start)-r.cfg.Quiet, true)
	c := r.costs(ctx, before, logOff, start)
	n.addCosts(c)
	r.printf("  new %d: served %s, stored %s, webhook %s, fan-out %s, rendered %d, files %d\n", i, last(&n.Served), last(&n.Stored),
		last(&n.Webhook), last(&n.Fanout), c.rendered, c.files)
	return nil
}

// waitFanout waits until the rest of a new item's fan-out is in the store:
// both sitemaps list its path, and every plain list page of the container
// (take 10) shows the new totalCount.
func (r *run) waitFanout(ctx context.Context, slug string, want int64, since time.Time) (time.Duration, bool) {
	poll := max(r.cfg.Poll, 50*time.Millisecond)
	listDir := r.objectPath("list/" + container)
	done := map[string]bool{}
	for {
		ok := true
		for _, kind := range []string{"flat", "nested"} {
			key := "sitemap/" + kind
			if done[key] {
				continue
			}
			if b, err := os.ReadFile(r.objectPath(fmt.Sprintf("sitemap/%s/%s.json", kind, channel))); err == nil && bytes.Contains(b, []byte(slug)) {
				done[key] = true
			} else {
				ok = false
			}
		}
		if ok {
			// Files written before since show the old count; read
			// only those written since, once.
			ents, _ := os.ReadDir(listDir)
			for _, e := range ents {
				name := e.Name()
				if done[name] || !strings.HasPrefix(name, "d1,take10,skip") || strings.Contains(name, "sort=") || strings.Contains(name, "filter=") {
					continue
				}
				fi, err := e.Info()
				if err != nil || fi.ModTime().Before(since) {
					ok = false
					continue
				}
				if b, err := os.ReadFile(filepath.Join(listDir, name)); err == nil && countAtLeast(want)(b) {
					done[name] = true
				} else {
					ok = false
				}
			}
		}
		if ok {
			return time.Since(since), true
		}
		if !pause(ctx, since, poll) {
			return 0, false
		}
	}
}

// verify runs `edgecms verify --guid G` if the binary has the command.
func (r *run) verify(ctx context.Context) {
	help, _ := r.output(ctx, "verify", "--help")
	if !strings.Contains(help, "guid") || strings.Contains(help, "commands:") {
		r.res.Verify = "not in this binary"
		return
	}
	// Every role is stopped: verify compares the store at rest.
	start := time.Now()
	out, err := r.output(ctx, "verify", "--guid", guid)
	status := "clean (exit 0)"
	if err != nil {
		status = "DIRTY or failed (" + err.Error() + ")"
	}
	r.res.Verify = fmt.Sprintf("%s in %v: %s", status, time.Since(start).Round(time.Millisecond), lastLines(strings.TrimSpace(out), 6))
}

// last formats the latest value of a series, for progress lines.
func last(s *series) string {
	if s.timeouts > 0 && (len(s.vals) == 0 || s.lastTimedOut) {
		return "timeout"
	}
	if len(s.vals) == 0 {
		return "-"
	}
	return fmt.Sprintf("%.0f ms", s.vals[len(s.vals)-1])
}
