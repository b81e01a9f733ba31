package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"

	"github.com/edgecms/edgecms/internal/cmdtest"
	"github.com/edgecms/edgecms/internal/pgtest"
)

// scrape reads the Prometheus exposition at url.
func scrape(t *testing.T, url string) map[string]*dto.MetricFamily {
	t.Helper()
	res, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var p expfmt.TextParser
	fams, err := p.TextToMetricFamilies(res.Body)
	if err != nil {
		t.Fatalf("parse %s: %v", url, err)
	}
	return fams
}

// value is the value of the series of family name whose labels include
// labels ("name", "value" pairs), and whether there is one; a histogram's
// value is its count.
func value(fams map[string]*dto.MetricFamily, name string, labels ...string) (float64, bool) {
	f := fams[name]
	if f == nil {
		return 0, false
	}
	total, found := 0.0, false
next:
	for _, m := range f.Metric {
		for i := 0; i+1 < len(labels); i += 2 {
			ok := false
			for _, l := range m.Label {
				if l.GetName() == labels[i] && l.GetValue() == labels[i+1] {
					ok = true
				}
			}
			if !ok {
				continue next
			}
		}
		found = true
		switch {
		case m.Counter != nil:
			total += m.Counter.GetValue()
		case m.Gauge != nil:
			total += m.Gauge.GetValue()
		case m.Histogram != nil:
			total += float64(m.Histogram.GetSampleCount())
		case m.Untyped != nil:
			total += m.Untyped.GetValue()
		}
	}
	return total, found
}

// do sends a request with headers ("name", "value" pairs).
func do(t *testing.T, method, url string, body io.Reader, headers ...string) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, url, body)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res, b
}

// logLines are the JSON log lines of out whose msg is msg.
func logLines(out, msg string) []map[string]any {
	var lines []map[string]any
	sc := bufio.NewScanner(strings.NewReader(out))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var l map[string]any
		if json.Unmarshal(sc.Bytes(), &l) == nil && l["msg"] == msg {
			lines = append(lines, l)
		}
	}
	return lines
}

// TestServeOperations runs edgecms serve on the demo, with an edge with
// management off in front of its store, and checks what an operator relies
// on: metrics present from the start and moving with traffic, JSON access
// lines with the request id, a failed webhook attempt at warn, CORS, and
// the management routes off on an edge while assets stay served.
func TestServeOperations(t *testing.T) {
	t.Parallel()
	_, dsn := pgtest.New(t)
	objects := filepath.Join(t.TempDir(), "objects")
	const (
		addr, adminAddr     = "127.0.0.1:25221", "127.0.0.1:25121"
		edgeAddr, edgeAdmin = "127.0.0.1:25222", "127.0.0.1:25122"
		site                = "https://site.example"
	)
	base, metricsURL := "http://"+addr, "http://"+adminAddr+"/metrics"
	demo := cmdtest.Run(t, []string{"DATABASE_URL=" + dsn, "EDGECMS_STORE=" + objects}, "demo", "--guid", "ops")
	if demo.Code != 0 {
		t.Fatalf("demo: %s", demo.Stderr)
	}
	var creds struct{ ManagementToken, FetchKey string }
	if err := json.Unmarshal([]byte(demo.Stdout), &creds); err != nil {
		t.Fatalf("demo output %q: %v", demo.Stdout, err)
	}

	// The webhook receiver fails every delivery.
	var hooks atomic.Int32
	rc := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hooks.Add(1)
		w.WriteHeader(http.StatusInternalServerError)
	}))
	defer rc.Close()

	serve := cmdtest.Start(t, []string{"DATABASE_URL=" + dsn, "EDGECMS_STORE=" + objects, "EDGECMS_ADDR=" + addr,
		"EDGECMS_ADMIN_ADDR=" + adminAddr, "EDGECMS_LOG_FORMAT=json", "EDGECMS_WEBHOOK_ALLOW_NETS=127.0.0.0/8",
		"EDGECMS_CORS_ORIGINS=" + site, "EDGECMS_SECRET_KEY=" + strings.Repeat("cd", 32)}, "serve")
	serve.WaitFor(t, 90*time.Second, "serve ready", func() bool { return cmdtest.Status("http://"+adminAddr+"/readyz") == 200 })

	// From the start, before any work of theirs: lag, queue, pool, cache.
	fams := scrape(t, metricsURL)
	for _, name := range []string{"edgecms_publisher_lag_events", "edgecms_publisher_lag_seconds", "edgecms_publisher_backlog_requests", "edgecms_webhook_queue_depth",
		"edgecms_webhook_queue_oldest_age_seconds", "edgecms_edge_cache_bytes", "edgecms_edge_cache_entries",
		"edgecms_publisher_objects_written_total", "edgecms_edge_cache_hits_total", "edgecms_edge_cache_misses_total",
		"edgecms_store_errors_total", "go_sql_in_use_connections", "go_sql_open_connections",
		"edgecms_webhook_endpoints_paused", "edgecms_webhook_breaker_transitions_total", "edgecms_origin_renders_waiting"} {
		if _, ok := value(fams, name); !ok {
			t.Errorf("/metrics at start has no %s", name)
		}
	}
	for _, r := range []string{"success", "failure"} {
		if _, ok := value(fams, "edgecms_webhook_deliveries_total", "result", r); !ok {
			t.Errorf("/metrics at start has no edgecms_webhook_deliveries_total{result=%q}", r)
		}
	}
	// Events are handed off before their sitemaps are written: the
	// background lane has them.
	serve.WaitFor(t, 60*time.Second, "publisher caught up", func() bool {
		fams := scrape(t, metricsURL)
		lag, ok := value(fams, "edgecms_publisher_lag_events")
		queued, ok2 := value(fams, "edgecms_publisher_backlog_requests")
		return ok && ok2 && lag == 0 && queued == 0
	})
	if v, _ := value(scrape(t, metricsURL), "edgecms_publisher_objects_written_total"); v == 0 {
		t.Error("edgecms_publisher_objects_written_total = 0 after the demo was published")
	}

	// Traffic: a miss then hits, a bad token, an unknown route.
	sitemap := base + "/ops/fetch/en-us/sitemap/flat/website"
	for range 3 {
		if res, body := do(t, "GET", sitemap, nil, "APIKey", creds.FetchKey); res.StatusCode != 200 {
			t.Fatalf("GET sitemap = %d %s", res.StatusCode, body)
		}
	}
	api := base + "/api/v1/instance/ops"
	res, _ := do(t, "GET", api+"/models", nil, "Authorization", "Bearer mt_nope", "X-Request-ID", "ops-test-401")
	if res.StatusCode != 401 || res.Header.Get("X-Request-ID") != "ops-test-401" {
		t.Errorf("GET models with a bad token = %d, X-Request-ID %q, want 401 echoing ops-test-401", res.StatusCode, res.Header.Get("X-Request-ID"))
	}
	res, _ = do(t, "GET", api+"/models", nil, "Authorization", "Bearer "+creds.ManagementToken)
	generated := res.Header.Get("X-Request-ID")
	if res.StatusCode != 200 || len(generated) < 8 {
		t.Errorf("GET models = %d, X-Request-ID %q, want 200 with a generated id", res.StatusCode, generated)
	}
	res, _ = do(t, "GET", base+"/api/nowhere", nil, "X-Request-ID", "bad id \"forged\"")
	if got := res.Header.Get("X-Request-ID"); got == "" || strings.ContainsAny(got, " \"") {
		t.Errorf("X-Request-ID of a request with a malformed one = %q, want a fresh id", got)
	}

	// A webhook on saves, without retries, to the failing receiver; then a save.
	hook := `{"name":"failing","url":"` + rc.URL + `/hook","enabled":true,"contentSaveEvents":true,"retriesEnabled":false}`
	if res, body := do(t, "POST", api+"/webhook", strings.NewReader(hook), "Authorization", "Bearer "+creds.ManagementToken, "Content-Type", "application/json"); res.StatusCode != 201 {
		t.Fatalf("create webhook = %d %s", res.StatusCode, body)
	}
	if res, body := do(t, "PUT", api+"/en-us/items/1", strings.NewReader(`{"fields":{}}`), "Authorization", "Bearer "+creds.ManagementToken, "Content-Type", "application/json"); res.StatusCode != 200 {
		t.Fatalf("save item 1 = %d %s", res.StatusCode, body)
	}
	serve.WaitFor(t, 30*time.Second, "failed delivery counted", func() bool {
		v, _ := value(scrape(t, metricsURL), "edgecms_webhook_deliveries_total", "result", "failure")
		return v >= 1
	})

	fams = scrape(t, metricsURL)
	for _, c := range []struct {
		name   string
		labels []string
	}{
		{"edgecms_http_requests_total", []string{"role", "origin", "code", "401"}},
		{"edgecms_http_requests_total", []string{"role", "origin", "code", "200"}},
		{"edgecms_http_requests_total", []string{"role", "edge", "route", "fetch", "code", "200"}},
		{"edgecms_http_request_duration_seconds", []string{"role", "origin"}},
		{"edgecms_http_request_duration_seconds", []string{"role", "edge"}},
		{"edgecms_edge_cache_hits_total", nil},
		{"edgecms_edge_cache_misses_total", nil},
		{"edgecms_edge_cache_entries", nil},
		{"edgecms_edge_cache_bytes", nil},
		{"edgecms_webhook_failures_total", []string{"class", "5xx"}},
	} {
		if v, _ := value(fams, c.name, c.labels...); v <= 0 {
			t.Errorf("after traffic %s%v = %v, want > 0", c.name, c.labels, v)
		}
	}
	if hooks.Load() == 0 {
		t.Error("the receiver got no delivery")
	}

	// Logs: one JSON access line per origin request, with the request id;
	// the failed attempt at warn with the webhook's id; none from the edge.
	out := serve.Output()
	var found401, foundGenerated bool
	for _, l := range logLines(out, "request") {
		if l["role"] == "edge" {
			t.Errorf("serve logged an edge access line by default: %v", l)
		}
		if l["role"] != "origin" {
			continue
		}
		for _, k := range []string{"method", "route", "status", "duration", "request_id"} {
			if _, ok := l[k]; !ok {
				t.Errorf("access line %v has no %s", l, k)
			}
		}
		if l["request_id"] == "ops-test-401" && l["status"] == 401.0 {
			found401 = true
		}
		if l["request_id"] == generated {
			foundGenerated = true
		}
	}
	if !found401 || !foundGenerated {
		t.Errorf("access lines with ids ops-test-401 (401): %v, %s: %v; want both", found401, generated, foundGenerated)
	}
	fails := logLines(out, "webhook delivery failed")
	if len(fails) == 0 || fails[0]["level"] != "WARN" || fails[0]["webhook"] == nil || fails[0]["status"] != 500.0 {
		t.Errorf("failed delivery log lines %v, want one at WARN with the webhook and status 500", fails)
	}
	if strings.Contains(out, rc.URL) {
		t.Error("the log holds the webhook's URL")
	}

	// CORS: preflights answered by the edge (the origin logs none), and
	// the allowance on answers, for the allowed origin only.
	res, _ = do(t, "OPTIONS", sitemap, nil, "Origin", site, "Access-Control-Request-Method", "GET", "Access-Control-Request-Headers", "apikey")
	if res.StatusCode != 204 && res.StatusCode != 200 || res.Header.Get("Access-Control-Allow-Origin") != site ||
		!strings.Contains(res.Header.Get("Access-Control-Allow-Methods"), "GET") || !strings.Contains(res.Header.Get("Access-Control-Allow-Headers"), "APIKey") {
		t.Errorf("preflight from %s = %d %v, want 204 allowing it, GET and APIKey", site, res.StatusCode, res.Header)
	}
	res, _ = do(t, "OPTIONS", sitemap, nil, "Origin", "https://evil.example", "Access-Control-Request-Method", "GET")
	for h := range res.Header {
		if strings.HasPrefix(h, "Access-Control-Allow-") {
			t.Errorf("preflight from a disallowed origin got %s: %s", h, res.Header.Get(h))
		}
	}
	for _, l := range logLines(serve.Output(), "request") {
		if l["method"] == "OPTIONS" {
			t.Errorf("a preflight reached the origin: %v", l)
		}
	}
	res, _ = do(t, "GET", sitemap, nil, "APIKey", creds.FetchKey, "Origin", site)
	if res.Header.Get("Access-Control-Allow-Origin") != site || !strings.Contains(res.Header.Get("Vary"), "Origin") {
		t.Errorf("GET from %s: Access-Control-Allow-Origin %q, Vary %q", site, res.Header.Get("Access-Control-Allow-Origin"), res.Header.Get("Vary"))
	}
	res, _ = do(t, "GET", sitemap, nil, "APIKey", creds.FetchKey, "Origin", "https://evil.example")
	if res.StatusCode != 200 || res.Header.Get("Access-Control-Allow-Origin") != "" {
		t.Errorf("GET from a disallowed origin = %d, Access-Control-Allow-Origin %q, want 200 and none", res.StatusCode, res.Header.Get("Access-Control-Allow-Origin"))
	}

	// An uploaded asset, then an edge with management off on the same
	// store, in front of serve.
	var form bytes.Buffer
	mw := multipart.NewWriter(&form)
	const svg = `<svg xmlns="http://www.w3.org/2000/svg" width="4" height="4"><rect width="4" height="4"/></svg>`
	fw, _ := mw.CreateFormFile("file", "dot.svg")
	fw.Write([]byte(svg))
	mw.Close()
	res, body := do(t, "POST", api+"/assets", &form, "Authorization", "Bearer "+creds.ManagementToken, "Content-Type", mw.FormDataContentType())
	if res.StatusCode != 200 && res.StatusCode != 201 {
		t.Fatalf("upload = %d %s", res.StatusCode, body)
	}
	assetPath := regexp.MustCompile(`/ops/assets/[0-9a-f]+\.svg`).FindString(string(body))
	if assetPath == "" {
		t.Fatalf("upload answer %s has no asset URL", body)
	}
	edge := cmdtest.Start(t, []string{"EDGECMS_STORE=" + objects, "EDGECMS_ADDR=" + edgeAddr, "EDGECMS_ADMIN_ADDR=" + edgeAdmin,
		"EDGECMS_ORIGIN_URL=" + base, "EDGECMS_EDGE_MANAGEMENT=off", "EDGECMS_LOG_FORMAT=json"}, "edge")
	edge.WaitFor(t, 60*time.Second, "edge ready", func() bool { return cmdtest.Status("http://"+edgeAdmin+"/readyz") == 200 })
	eb := "http://" + edgeAddr
	for _, c := range []struct{ method, path string }{
		{"GET", "/api/openapi.json"}, {"GET", "/api/v1/instance/ops/models"}, {"POST", "/api/v1/instance/ops/webhook"},
		{"GET", "/studio/"}, {"GET", "/studio"},
	} {
		if res, body := do(t, c.method, eb+c.path, nil, "Authorization", "Bearer "+creds.ManagementToken); res.StatusCode != 404 {
			t.Errorf("edge with management off: %s %s = %d %.100s, want 404", c.method, c.path, res.StatusCode, body)
		}
	}
	if res, body := do(t, "GET", eb+assetPath, nil); res.StatusCode != 200 || string(body) != svg {
		t.Errorf("edge with management off: GET %s = %d %q, want the asset", assetPath, res.StatusCode, body)
	}
	if res, _ := do(t, "GET", eb+"/ops/fetch/en-us/sitemap/flat/website", nil, "APIKey", creds.FetchKey); res.StatusCode != 200 {
		t.Errorf("edge with management off: GET sitemap = %d, want 200", res.StatusCode)
	}
	if lines := logLines(edge.Output(), "request"); len(lines) > 0 {
		t.Errorf("an edge logged %d access lines by default", len(lines))
	}
}
