package compat

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/edgecms/edgecms/content"
	"github.com/edgecms/edgecms/demo"
	"github.com/edgecms/edgecms/fetch"
	"github.com/edgecms/edgecms/internal/pgtest"
	"github.com/edgecms/edgecms/internal/testcert"
	"github.com/edgecms/edgecms/media"
	"github.com/edgecms/edgecms/origin"
	"github.com/edgecms/edgecms/render"
)

// service is a demo instance served by a real origin over TLS.
type service struct {
	store      *content.Store
	inst       content.Instance
	base       string // https://127.0.0.1:port
	caFile     string
	client     *http.Client
	fetchKey   string
	previewKey string
	token      string
}

// start fills a fresh database with the demo site and serves it over TLS
// with a self-signed certificate.
func start(t *testing.T) *service { return startWith(t, origin.Config{}) }

// startWith is start with an origin configuration (Render is set here).
func startWith(t *testing.T, cfg origin.Config) *service {
	t.Helper()
	s := fill(t)
	s.serve(t, cfg)
	return s
}

// fill makes a fresh database with the demo site in instance "compat"
// (locales en-us and fr-ca), a fetch key, a preview key and a management
// token of the full role; serve then serves it.
func fill(t *testing.T) *service {
	t.Helper()
	ctx := context.Background()
	db, _ := pgtest.New(t)
	store := content.NewStore(db)
	inst, err := store.CreateInstance(ctx, "compat", []content.Locale{{Code: "en-us", Name: "English"}, {Code: "fr-ca", Name: "Français"}})
	if err != nil {
		t.Fatal(err)
	}
	if err := demo.Fill(ctx, store, inst); err != nil {
		t.Fatal(err)
	}
	s := &service{store: store, inst: inst}
	name := "k"
	_, s.fetchKey, err = store.CreateAPIKey(ctx, inst, content.APIKeyInput{Name: &name, Type: "fetch"})
	if err != nil {
		t.Fatal(err)
	}
	_, s.previewKey, err = store.CreateAPIKey(ctx, inst, content.APIKeyInput{Name: &name, Type: "preview"})
	if err != nil {
		t.Fatal(err)
	}
	_, s.token, err = store.CreateToken(ctx, inst, "t", content.RoleFull)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// serve serves s over TLS with a self-signed certificate, by an origin of
// configuration cfg (Render is set here), until the test ends.
func (s *service) serve(t *testing.T, cfg origin.Config) {
	t.Helper()
	certPEM, keyPEM := testcert.New(t)
	s.caFile = filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(s.caFile, certPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	cert, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := tls.Listen("tcp", "127.0.0.1:0", &tls.Config{Certificates: []tls.Certificate{cert}})
	if err != nil {
		t.Fatal(err)
	}
	store := s.store
	// Asset URLs are made below the address the tests reach (the renderer
	// takes it when it is made).
	store.PublicURL = media.PublicURL("https://" + ln.Addr().String())
	r := render.New(store)
	renderFn := func(ctx context.Context, req fetch.Request) ([]byte, []string, error) {
		site, err := render.LoadSite(ctx, store, req.Guid)
		if err != nil {
			return nil, nil, err
		}
		res, err := r.Render(ctx, site, req)
		return res.Body, res.Tags, err
	}
	cfg.Render = renderFn
	srv := origin.New(cfg, store, slog.New(slog.NewTextHandler(io.Discard, nil)))

	go srv.App().Listener(ln)
	runCtx, stop := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { srv.Run(runCtx); close(done) }()
	t.Cleanup(func() { srv.Shutdown(context.Background()); stop(); <-done })
	s.base = "https://" + ln.Addr().String()
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(certPEM)
	s.client = &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
}

// do sends a GET with the given headers and returns the response with its body read.
func (s *service) do(t *testing.T, path string, headers map[string]string) (*http.Response, []byte) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, s.base+path, nil)
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := s.client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, body
}

// get fetches a Fetch API path directly and decodes the JSON answer.
func (s *service) get(t *testing.T, key, path string) (int, any) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, s.base+path, nil)
	req.Header.Set("APIKey", key)
	resp, err := s.client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var v any
	if err := json.NewDecoder(resp.Body).Decode(&v); err != nil {
		t.Fatalf("GET %s: decode: %v", path, err)
	}
	return resp.StatusCode, v
}

// sdkCall is one call of the SDK runner.
type sdkCall struct {
	Flavour string         `json:"flavour"`
	Method  string         `json:"method"`
	Params  map[string]any `json:"params"`
}

type sdkResult struct {
	OK     bool   `json:"ok"`
	Result any    `json:"result"`
	Error  string `json:"error"`
}

// compatDir is scripts/compat, where scripts/test.sh installs the npm clients.
func compatDir(t *testing.T) string {
	_, file, _, _ := runtime.Caller(0)
	dir := filepath.Join(filepath.Dir(file), "..", "scripts", "compat")
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "@agility", "content-fetch")); err != nil {
		t.Fatalf("the npm clients are not installed: run scripts/test.sh (or npm ci in scripts/compat): %v", err)
	}
	return dir
}

// runSDK runs the calls through the real @agility/content-fetch SDK.
func (s *service) runSDK(t *testing.T, baseURL string, calls []sdkCall) []sdkResult {
	t.Helper()
	return runNode[sdkResult](t, s, "fetch-sdk.js", map[string]any{
		"baseUrl": baseURL, "guid": s.inst.Guid, "fetchKey": s.fetchKey, "previewKey": s.previewKey, "calls": calls,
	}, len(calls))
}

// runNode runs script, a runner of calls in scripts/compat, with input as
// JSON on stdin and the service's certificate trusted, and decodes the JSON
// array it prints: one result per call.
func runNode[R any](t *testing.T, s *service, script string, input any, calls int) []R {
	t.Helper()
	dir := compatDir(t)
	in, _ := json.Marshal(input)
	cmd := exec.Command("node", filepath.Join(dir, script))
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "NODE_EXTRA_CA_CERTS="+s.caFile)
	cmd.Stdin = bytes.NewReader(in)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("node %s: %v\n%s", script, err, stderr.String())
	}
	var res []R
	if err := json.Unmarshal(out, &res); err != nil {
		t.Fatalf("decode %s output: %v\n%s", script, err, out)
	}
	if len(res) != calls {
		t.Fatalf("%s answered %d calls, want %d", script, len(res), calls)
	}
	return res
}
