package client

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// script answers with the given statuses in turn (the last one repeats);
// a 200 carries body. Every answer sets the headers in hdr.
func script(body []byte, hdr map[string]string, statuses ...int) http.HandlerFunc {
	var n atomic.Int32
	return func(w http.ResponseWriter, r *http.Request) {
		i := int(n.Add(1)) - 1
		status := statuses[min(i, len(statuses)-1)]
		for k, v := range hdr {
			w.Header().Set(k, v)
		}
		if status == http.StatusOK {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(status)
			w.Write(body)
			return
		}
		w.Header().Set("Content-Type", "application/problem+json")
		w.WriteHeader(status)
		w.Write([]byte(`{"type":"/problems/x","title":"` + http.StatusText(status) + `","status":0,"detail":"scripted"}`))
	}
}

func TestRetries(t *testing.T) {
	tests := []struct {
		name      string
		opts      Options
		hdr       map[string]string
		statuses  []int
		wantCalls int
		wantErr   int // status of the final *Error, or 0 for success
		wantWaits []time.Duration
	}{
		{name: "503 twice then 200", statuses: []int{503, 503, 200}, wantCalls: 3},
		{name: "408 then 200", statuses: []int{408, 200}, wantCalls: 2},
		{name: "502 504 500 then 200", statuses: []int{502, 504, 500, 200}, wantCalls: 4},
		{name: "500 forever", statuses: []int{500}, wantCalls: 4, wantErr: 500},
		{name: "500 with 1 retry", opts: Options{MaxRetries: 1}, statuses: []int{500}, wantCalls: 2, wantErr: 500},
		{name: "retries off", opts: Options{MaxRetries: -1}, statuses: []int{503, 200}, wantCalls: 1, wantErr: 503},
		{name: "429 with Retry-After", hdr: map[string]string{"Retry-After": "3"},
			statuses: []int{429, 200}, wantCalls: 2, wantWaits: []time.Duration{3 * time.Second}},
		{name: "Retry-After capped by the default", hdr: map[string]string{"Retry-After": "3600"},
			statuses: []int{429, 429, 200}, wantCalls: 3,
			wantWaits: []time.Duration{DefaultRetryWaitMax, DefaultRetryWaitMax}},
		{name: "Retry-After capped by RetryWaitMax", opts: Options{RetryWaitMax: 2 * time.Second},
			hdr: map[string]string{"Retry-After": "30"}, statuses: []int{503, 200}, wantCalls: 2,
			wantWaits: []time.Duration{2 * time.Second}},
		{name: "400 is final", statuses: []int{400, 200}, wantCalls: 1, wantErr: 400},
		{name: "401 is final", statuses: []int{401, 200}, wantCalls: 1, wantErr: 401},
		{name: "403 is final", statuses: []int{403, 200}, wantCalls: 1, wantErr: 403},
		{name: "404 is final", statuses: []int{404, 200}, wantCalls: 1, wantErr: 404},
		{name: "501 is final", statuses: []int{501, 200}, wantCalls: 1, wantErr: 501},
		{name: "a custom policy", opts: Options{
			CheckRetry: func(ctx context.Context, resp *http.Response, err error) (bool, error) {
				return resp != nil && resp.StatusCode == http.StatusConflict, nil
			},
			Backoff: func(min, max time.Duration, attempt int, resp *http.Response) time.Duration {
				return time.Duration(attempt+1) * time.Hour
			},
		}, statuses: []int{409, 409, 200}, wantCalls: 3,
			wantWaits: []time.Duration{DefaultRetryWaitMax, DefaultRetryWaitMax}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, rec, waits := serve(t, tt.opts, script(fixture(t, "item.json"), tt.hdr, tt.statuses...))
			it, err := c.Item(context.Background(), "en-us", 42, ItemOptions{})
			if got := len(rec.requests()); got != tt.wantCalls {
				t.Errorf("requests = %d, want %d", got, tt.wantCalls)
			}
			if tt.wantErr == 0 {
				if err != nil || it == nil || it.ContentID != 42 {
					t.Fatalf("Item = %v, %v; want item 42", it, err)
				}
			} else {
				var e *Error
				if !errors.As(err, &e) {
					t.Fatalf("Item error = %v, want an *Error", err)
				}
				if e.StatusCode != tt.wantErr || e.Attempts != tt.wantCalls {
					t.Errorf("Error status %d after %d attempts, want %d after %d", e.StatusCode, e.Attempts, tt.wantErr, tt.wantCalls)
				}
				if it != nil {
					t.Errorf("Item returned %v with an error", it)
				}
			}
			if len(*waits) != tt.wantCalls-1 {
				t.Errorf("waited %d times, want %d", len(*waits), tt.wantCalls-1)
			}
			if tt.wantWaits != nil && !equalDurations(*waits, tt.wantWaits) {
				t.Errorf("waits = %v, want %v", *waits, tt.wantWaits)
			}
			for _, w := range *waits {
				if w < 0 || w > c.waitMax {
					t.Errorf("wait %v outside [0, %v]", w, c.waitMax)
				}
			}
		})
	}
}

func equalDurations(a, b []time.Duration) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestRateLimitedError(t *testing.T) {
	c, _, _ := serve(t, Options{MaxRetries: 1}, script(nil, map[string]string{"Retry-After": "120"}, 429))
	_, err := c.List(context.Background(), "en-us", "posts", ListOptions{})
	if !IsRateLimited(err) || !IsTemporary(err) {
		t.Fatalf("List = %v, want a rate-limit error", err)
	}
	var e *Error
	errors.As(err, &e)
	if e.RetryAfter != 120*time.Second {
		t.Errorf("RetryAfter = %v, want the 2m0s the server asked for", e.RetryAfter)
	}
}

func TestConnectionErrorsRetried(t *testing.T) {
	// A port where nothing listens: every attempt is refused.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()

	c, err := New("http://"+addr, "g1", Options{MaxRetries: 2})
	if err != nil {
		t.Fatal(err)
	}
	var waits int
	c.wait = func(time.Duration) time.Duration { waits++; return 0 }
	_, err = c.Item(context.Background(), "en-us", 1, ItemOptions{})
	if err == nil {
		t.Fatal("Item against a closed port succeeded")
	}
	if StatusCode(err) != 0 {
		t.Errorf("a connection error reads as status %d", StatusCode(err))
	}
	var opErr *net.OpError
	if !errors.As(err, &opErr) {
		t.Errorf("error %v does not wrap the *net.OpError", err)
	}
	if waits != 2 {
		t.Errorf("waited %d times, want 2 (one per retry)", waits)
	}
}

func TestRecoversFromDroppedConnection(t *testing.T) {
	var n atomic.Int32
	body := fixture(t, "item.json")
	c, _, _ := serve(t, Options{}, func(w http.ResponseWriter, r *http.Request) {
		if n.Add(1) == 1 {
			// Hang up without an answer.
			conn, _, err := w.(http.Hijacker).Hijack()
			if err == nil {
				conn.Close()
			}
			return
		}
		w.Write(body)
	})
	if _, err := c.Item(context.Background(), "en-us", 42, ItemOptions{}); err != nil {
		t.Errorf("Item after a dropped connection = %v, want success on retry", err)
	}
}

func TestDefaultBackoff(t *testing.T) {
	defer func(j func() float64, now func() time.Time) { jitter, timeNow = j, now }(jitter, timeNow)
	now := time.Date(2024, 3, 5, 12, 0, 0, 0, time.UTC)
	timeNow = func() time.Time { return now }

	min, max := 250*time.Millisecond, 10*time.Second
	withHeader := func(status int, v string) *http.Response {
		h := http.Header{}
		if v != "" {
			h.Set("Retry-After", v)
		}
		return &http.Response{StatusCode: status, Header: h}
	}
	tests := []struct {
		name    string
		jitter  float64
		attempt int
		resp    *http.Response
		want    time.Duration
	}{
		{"first retry, least jitter", 0, 0, nil, 125 * time.Millisecond},
		{"first retry, most jitter", 1, 0, nil, 250 * time.Millisecond},
		{"third retry, half jitter", 0.5, 2, withHeader(503, ""), 750 * time.Millisecond},
		{"doubling stops at max", 1, 10, nil, max},
		{"huge attempt does not overflow", 1, 200, nil, max},
		{"Retry-After seconds", 0.5, 0, withHeader(429, "4"), 4 * time.Second},
		{"Retry-After zero", 0.5, 0, withHeader(429, "0"), 0},
		{"Retry-After over max", 0.5, 0, withHeader(429, "86400"), max},
		{"Retry-After date", 0.5, 0, withHeader(503, now.Add(7*time.Second).Format(http.TimeFormat)), 7 * time.Second},
		{"Retry-After date in the past", 0.5, 0, withHeader(503, now.Add(-time.Hour).Format(http.TimeFormat)), 0},
		{"Retry-After garbage is ignored", 0, 0, withHeader(503, "soon"), 125 * time.Millisecond},
		{"Retry-After negative is ignored", 0, 0, withHeader(503, "-5"), 125 * time.Millisecond},
	}
	for _, tt := range tests {
		jitter = func() float64 { return tt.jitter }
		if got := DefaultBackoff(min, max, tt.attempt, tt.resp); got != tt.want {
			t.Errorf("%s: DefaultBackoff(%v, %v, %d) = %v, want %v", tt.name, min, max, tt.attempt, got, tt.want)
		}
	}
}

func TestDefaultCheckRetry(t *testing.T) {
	ctx := context.Background()
	for code, want := range map[int]bool{
		200: false, 301: false, 400: false, 401: false, 403: false, 404: false, 409: false,
		408: true, 429: true, 500: true, 501: false, 502: true, 503: true, 504: true, 599: true,
	} {
		got, err := DefaultCheckRetry(ctx, &http.Response{StatusCode: code}, nil)
		if got != want || err != nil {
			t.Errorf("DefaultCheckRetry(status %d) = %v, %v; want %v, nil", code, got, err, want)
		}
	}
	canceled, cancel := context.WithCancel(ctx)
	cancel()
	if got, err := DefaultCheckRetry(canceled, &http.Response{StatusCode: 503}, nil); got || err == nil {
		t.Errorf("DefaultCheckRetry(canceled) = %v, %v; want false and the context's error", got, err)
	}
}

func TestServerErrorNeverEmptyValue(t *testing.T) {
	// Every method returns a nil result with its error.
	srv := httptest.NewServer(script(nil, nil, 404))
	defer srv.Close()
	c, err := New(srv.URL, "g1", Options{})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	checks := map[string]func() (bool, error){
		"Item": func() (bool, error) { v, err := c.Item(ctx, "en-us", 1, ItemOptions{}); return v == nil, err },
		"List": func() (bool, error) { v, err := c.List(ctx, "en-us", "x", ListOptions{}); return v == nil, err },
		"All":  func() (bool, error) { v, err := c.AllItems(ctx, "en-us", "x", ListOptions{}); return v == nil, err },
		"Page": func() (bool, error) { v, err := c.Page(ctx, "en-us", 1, PageOptions{}); return v == nil, err },
		"ByPath": func() (bool, error) {
			v, err := c.PageByPath(ctx, "en-us", "w", "/", PageOptions{})
			return v == nil, err
		},
		"Flat":   func() (bool, error) { v, err := c.SitemapFlat(ctx, "en-us", "w"); return v == nil, err },
		"Nested": func() (bool, error) { v, err := c.SitemapNested(ctx, "en-us", "w"); return v == nil, err },
		"SyncI":  func() (bool, error) { v, err := c.SyncItems(ctx, "en-us", 0, 0); return v == nil, err },
		"SyncP":  func() (bool, error) { v, err := c.SyncPages(ctx, "en-us", 0, 0); return v == nil, err },
		"Gal":    func() (bool, error) { v, err := c.Gallery(ctx, 1); return v == nil, err },
		"Redir":  func() (bool, error) { v, err := c.URLRedirections(ctx, ""); return v == nil, err },
	}
	for name, check := range checks {
		isNil, err := check()
		if !isNil || !IsNotFound(err) {
			t.Errorf("%s on a 404: nil result %v, error %v; want nil and a not-found error", name, isNil, err)
		}
	}
}

func TestLoggerSeesRetries(t *testing.T) {
	var buf strings.Builder
	logger := slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug}))
	c, _, _ := serve(t, Options{Logger: logger, FetchKey: "secret.key"}, script(fixture(t, "item.json"), nil, 503, 200))
	if _, err := c.Item(context.Background(), "en-us", 42, ItemOptions{}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), "retrying request") {
		t.Errorf("log lacks the retry:\n%s", buf.String())
	}
	if strings.Contains(buf.String(), "secret.key") {
		t.Errorf("log shows the API key:\n%s", buf.String())
	}
}
