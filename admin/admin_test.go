package admin

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/edgecms/edgecms/problem"
)

func TestHandler(t *testing.T) {
	t.Parallel()
	var down atomic.Bool
	checks := []Check{
		{Name: "postgres", Func: func(ctx context.Context) error {
			if down.Load() {
				return errors.New("connection refused")
			}
			return nil
		}},
		{Name: "store", Func: func(context.Context) error { return nil }},
	}
	reg, err := NewRegistry()
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(Handler(checks, reg))
	defer srv.Close()
	get := func(path string) (int, http.Header, string) {
		res, err := http.Get(srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return res.StatusCode, res.Header, string(b)
	}
	if code, _, _ := get("/readyz"); code != 200 {
		t.Errorf("/readyz with every check passing = %d, want 200", code)
	}
	down.Store(true)
	code, h, body := get("/readyz")
	var doc struct {
		Status int
		Title  string
		Detail string
	}
	if code != 503 || h.Get("Content-Type") != problem.ContentType || h.Get("Cache-Control") != "no-store" ||
		json.Unmarshal([]byte(body), &doc) != nil || doc.Status != 503 || doc.Title == "" || !strings.Contains(doc.Detail, "postgres: connection refused") ||
		strings.Contains(doc.Detail, "store") {
		t.Errorf("/readyz with postgres down = %d %v %s, want a 503 problem naming postgres only", code, h, body)
	}
	if code, _, _ := get("/livez"); code != 200 {
		t.Errorf("/livez with postgres down = %d, want 200", code)
	}
	if code, _, body := get("/metrics"); code != 200 || !strings.Contains(body, "edgecms_webhook_deliveries_total") || !strings.Contains(body, "go_goroutines") {
		t.Errorf("/metrics = %d, without the shared or runtime series", code)
	}
}

func TestServeAndProbe(t *testing.T) {
	t.Parallel()
	var down atomic.Bool
	h := Handler([]Check{{Name: "dep", Func: func(context.Context) error {
		if down.Load() {
			return errors.New("gone")
		}
		return nil
	}}}, nil)
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	stop, err := Serve("127.0.0.1:25160", h, log)
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	ctx := context.Background()
	if err := Probe(ctx, "127.0.0.1:25160", true); err != nil {
		t.Errorf("Probe ready = %v", err)
	}
	down.Store(true)
	if err := Probe(ctx, "127.0.0.1:25160", true); err == nil || !strings.Contains(err.Error(), "dep: gone") {
		t.Errorf("Probe ready with dep down = %v, want the detail", err)
	}
	if err := Probe(ctx, "0.0.0.0:25160", false); err != nil {
		t.Errorf("Probe live on an every-interface address = %v", err)
	}
	if _, err := Serve("127.0.0.1:25160", h, log); err == nil {
		t.Error("Serve on a taken address succeeded")
	}
	stop()
	if err := Probe(ctx, "127.0.0.1:25160", false); err == nil {
		t.Error("Probe of a stopped server succeeded")
	}
	if err := Probe(ctx, Off, false); err == nil {
		t.Error("Probe of off succeeded")
	}
}
