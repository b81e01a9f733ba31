//go:build unix

package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/edgecms/edgecms/internal/pgtest"
)

// TestSmoke runs the whole benchmark at a tiny size with short phases, so
// that the harness cannot rot: seed, republish, the one-at-a-time edits
// and new items, a few seconds of sustained publishes, verify when the
// binary has it. It checks that every phase measured something and that
// nothing timed out, not the figures.
func TestSmoke(t *testing.T) {
	server, err := pgtest.ServerURL("postgres")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "edgecms")
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	if err := build(ctx, "../../..", bin); err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	cfg := config{
		Bins:  []binary{{Label: fmt.Sprintf("smoke%d", os.Getpid()), Path: bin}},
		Sizes: []int{40}, Edits: 2, News: 2,
		Sustain: 3 * time.Second, Rate: 4, NewShare: 0.5,
		Edges: 2, Mode: "split", DatabaseURL: server, BasePort: 22200,
		Timeout: 30 * time.Second, SettleTimeout: time.Minute, RepublishTimeout: time.Minute, Quiet: 300 * time.Millisecond, Poll: 5 * time.Millisecond,
		Dir: filepath.Join(dir, "work"), Out: io.MultiWriter(&out, testWriter{t}),
	}
	rs, err := Run(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if len(rs) != 1 {
		t.Fatalf("got %d results, want 1", len(rs))
	}
	r := rs[0]
	for name, s := range map[string]*series{
		"edit: edges": &r.Edit.Edges, "edit: webhook": &r.Edit.Webhook, "edit: files written": &r.Edit.Files,
		"new: served": &r.New.Served, "new: stored": &r.New.Stored, "new: webhook": &r.New.Webhook, "new: fan-out": &r.New.Fanout,
	} {
		if len(s.vals) != 2 || s.timeouts != 0 {
			t.Errorf("%s: %d values, %d timeouts; want 2 and 0", name, len(s.vals), s.timeouts)
		}
	}
	if s := r.Sustained; len(s.Edge.vals) == 0 || s.Edge.timeouts != 0 || s.Errors != 0 || s.Webhook.timeouts != 0 {
		t.Errorf("sustained: %d values, %d timeouts, %d errors (%s), %d webhook timeouts",
			len(s.Edge.vals), s.Edge.timeouts, s.Errors, s.FirstError, s.Webhook.timeouts)
	}
	if r.RepublishObjects < 40 || r.RSS["publisher"] == 0 {
		t.Errorf("republish objects %d, publisher RSS %d KiB", r.RepublishObjects, r.RSS["publisher"])
	}
	if !strings.Contains(out.String(), "== summary") {
		t.Error("no summary printed")
	}
	if strings.HasPrefix(r.Verify, "DIRTY") {
		t.Errorf("verify: %s", r.Verify)
	}
}

// testWriter sends the benchmark's output to the test log.
type testWriter struct{ t *testing.T }

func (w testWriter) Write(b []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(b), "\n"))
	return len(b), nil
}
