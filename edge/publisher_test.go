package edge_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/edgecms/edgecms/content"
	"github.com/edgecms/edgecms/delivery"
	"github.com/edgecms/edgecms/edge"
	"github.com/edgecms/edgecms/problem"
	"github.com/edgecms/edgecms/publisher"
	"github.com/edgecms/edgecms/store"
)

// TestPublishedToEdges runs the real chain: Postgres with the demo site, a
// publisher following the event log into a folder store, and three edges
// on that store with no origin behind them. It publishes edits of an item
// and checks that every edge serves each new version, and the list that
// embeds it, then revokes a key and checks that every edge refuses it.
// The times are logged; speed is not asserted.
func TestPublishedToEdges(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	in := newInstance(t, "fresh-site", content.Locale{Code: "en-us", Name: "English"}, content.Locale{Code: "fr-ca", Name: "Français"})
	dsn, cs, inst := in.dsn, in.cs, in.inst
	fk, fetchSecret := in.apiKey(t, "fetch")
	in.fillDemo(t)
	st, err := store.Open(ctx, t.TempDir(), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	pub := publisher.New(publisher.Config{Store: st, DatabaseURL: dsn}, cs, testLog(t))
	if err := pub.Drain(ctx); err != nil {
		t.Fatal(err)
	}
	if err := pub.PublishKeys(ctx, inst.Guid); err != nil {
		t.Fatal(err)
	}
	runCtx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- pub.Run(runCtx) }()
	t.Cleanup(func() {
		stop()
		if err := <-done; err != nil {
			t.Errorf("publisher: %v", err)
		}
		pub.Close()
	})

	var edges []*runningEdge
	for i := 0; i < 3; i++ {
		edges = append(edges, startEdge(t, st, edge.Config{OriginURL: deadURL(t), FeedPoll: edge.DefaultFeedPoll}))
	}
	const itemPath = "/fresh-site/fetch/en-us/item/1"
	const listPath = "/fresh-site/fetch/en-us/list/categories"
	for _, e := range edges {
		for _, p := range []string{itemPath, listPath} {
			if r := get(t, e.url+p, fetchSecret); r.status != 200 {
				t.Fatalf("GET %s = %d %s", p, r.status, r.body)
			}
		}
	}

	// Every edge must serve each new version, and the list embedding the
	// item too; the time until all do is logged (scripts/bench/freshness.sh
	// measures it properly, with separate processes and 100 publishes).
	const publishes = 20
	var lat []time.Duration
	for v := 1; v <= publishes; v++ {
		title := fmt.Sprintf("Single Origin, edition %d", v)
		b, _ := json.Marshal(title)
		if _, err := cs.SaveItem(ctx, inst, "en-us", 1, map[string]json.RawMessage{"Title": b}); err != nil {
			t.Fatal(err)
		}
		if _, err := cs.ItemAction(ctx, inst, "en-us", 1, content.ActionPublish); err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		lat = append(lat, everyEdge(t, edges, start, fmt.Sprintf("edition %d served", v), func(e *runningEdge) bool {
			return strings.Contains(string(get(t, e.url+itemPath, fetchSecret).body), string(b))
		}))
		everyEdge(t, edges, time.Now(), "list updated", func(e *runningEdge) bool {
			return strings.Contains(string(get(t, e.url+listPath, fetchSecret).body), string(b))
		})
		for _, e := range edges {
			if r := get(t, e.url+itemPath, fetchSecret); r.header.Get("X-Cache") != "HIT" {
				t.Errorf("after the change: X-Cache %q, want HIT (served from memory again)", r.header.Get("X-Cache"))
			}
		}
	}
	slices.Sort(lat)
	t.Logf("publish call returned -> all 3 edges serve the new item, %d publishes (polled every %v; feed poll %v): p50 %v, max %v",
		publishes, pollEvery, edge.DefaultFeedPoll, lat[len(lat)/2], lat[len(lat)-1])

	off := false
	if _, err := cs.UpdateAPIKey(ctx, inst, fk.ID, content.APIKeyInput{Enabled: &off}); err != nil {
		t.Fatal(err)
	}
	took := everyEdge(t, edges, time.Now(), "revoked key refused", func(e *runningEdge) bool {
		return get(t, e.url+itemPath, fetchSecret).status == 401
	})
	t.Logf("key disabled -> all 3 edges refuse it after %v", took)
}

// feedSeq returns the latest sequence number of the change feed (0 when
// there is none yet).
func feedSeq(t *testing.T, st store.Store) int64 {
	t.Helper()
	o, err := st.Get(context.Background(), delivery.FeedKey)
	if problem.Is(err, problem.NotFound) {
		return 0
	}
	if err != nil {
		t.Fatal(err)
	}
	var f delivery.Feed
	if err := json.Unmarshal(o.Body, &f); err != nil {
		t.Fatal(err)
	}
	return f.Seq
}

// pollEvery is how often everyEdge asks each edge: often enough to see
// the order of magnitude, rarely enough not to load the machine.
const pollEvery = 5 * time.Millisecond

// everyEdge waits (at most 20 s) until cond holds on every edge and returns
// the time from start until the last one did (late by up to pollEvery).
func everyEdge(t *testing.T, edges []*runningEdge, start time.Time, what string, cond func(*runningEdge) bool) time.Duration {
	t.Helper()
	var wg sync.WaitGroup
	took := make([]time.Duration, len(edges))
	for i, e := range edges {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for !cond(e) {
				if time.Since(start) > 20*time.Second {
					t.Errorf("edge %d: %s: not after 20 s", i, what)
					return
				}
				time.Sleep(pollEvery)
			}
			took[i] = time.Since(start)
		}()
	}
	wg.Wait()
	return slices.Max(took)
}
