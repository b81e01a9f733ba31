package studio_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"html"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/edgecms/edgecms/content"
	"github.com/edgecms/edgecms/fetch"
	"github.com/edgecms/edgecms/internal/pgtest"
	"github.com/edgecms/edgecms/media"
	"github.com/edgecms/edgecms/origin"
	"github.com/edgecms/edgecms/render"
	"github.com/edgecms/edgecms/store"
	"github.com/edgecms/edgecms/users"
	"github.com/edgecms/edgecms/webhooks"
	"github.com/edgecms/edgecms/webhooks/egress"
)

var screenshots = flag.String("screenshots", "", "folder to save screenshots of the Studio's main screens in (PNG)")

// chromium is Debian's browser, which scripts/test.sh installs; the tests
// never download one.
const chromium = "/usr/bin/chromium"

// e2eEnv is what the scenarios (e2e/studio.mjs) get: where the Studio is,
// who signs in, and the secrets no page may show.
type e2eEnv struct {
	Base        string            `json:"base"`
	Guid        string            `json:"guid"`
	FetchKey    string            `json:"fetchKey"`
	PreviewKey  string            `json:"previewKey"`
	Users       map[string]string `json:"users"` // role (or "operator") -> email
	Password    string            `json:"password"`
	Receiver    string            `json:"receiver"`
	Site        string            `json:"site"`
	Secrets     []string          `json:"secrets"`
	Screenshots string            `json:"screenshots"`
}

// result is one scenario's outcome, as the script prints it.
type result struct {
	Name  string `json:"name"`
	OK    bool   `json:"ok"`
	Error string `json:"error"`
}

// TestStudioInBrowser runs the Studio's scenarios in a real Chromium
// against a real origin (with webhook dispatching and asset storage) on a
// fresh database; each scenario checks what it published through the
// Fetch API. Each e2e/*.mjs file is a run of its own, on its own instance.
func TestStudioInBrowser(t *testing.T) {
	if _, err := os.Stat(chromium); err != nil {
		t.Fatalf("%s is missing: scripts/test.sh installs it (apt-get install -y chromium): %v", chromium, err)
	}
	dir, err := filepath.Abs(".")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "playwright-core")); err != nil {
		t.Fatalf("the Studio's npm packages are not installed: run bash scripts/studio.sh deps: %v", err)
	}
	files, err := filepath.Glob(filepath.Join(dir, "e2e", "*.mjs"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no scenarios in e2e/*.mjs: %v", err)
	}
	for _, file := range files {
		t.Run(strings.TrimSuffix(filepath.Base(file), ".mjs"), func(t *testing.T) { runScenarios(t, dir, file) })
	}
}

// runScenarios runs the scenarios of one file and reports each as a subtest.
func runScenarios(t *testing.T, dir, file string) {
	var err error
	env := startStudio(t)
	if *screenshots != "" {
		if env.Screenshots, err = filepath.Abs(*screenshots); err != nil {
			t.Fatal(err)
		}
	}
	in, _ := json.Marshal(env)
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "node", file)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "STUDIO_E2E="+string(in))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, runErr := cmd.Output()
	var results []result
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		var r result
		if strings.HasPrefix(line, "{") && json.Unmarshal([]byte(line), &r) == nil && r.Name != "" {
			results = append(results, r)
			continue
		}
		t.Log(line)
	}
	for _, r := range results {
		t.Run(r.Name, func(t *testing.T) {
			if !r.OK {
				t.Error(r.Error)
			}
		})
	}
	if runErr != nil {
		t.Fatalf("node %s: %v\n%s", filepath.Base(file), runErr, stderr.String())
	}
	if len(results) == 0 {
		t.Fatalf("the scenarios reported no result\n%s", stderr.String())
	}
}

// startStudio serves a fresh instance with an origin on a loopback port
// and returns what the scenarios need.
func startStudio(t *testing.T) e2eEnv {
	t.Helper()
	ctx := context.Background()
	db, url := pgtest.New(t)
	// The Postgres server is shared with every other test running: a few
	// connections are enough for one browser.
	db.SetMaxOpenConns(8)
	cs := content.NewStore(db)
	inst, err := cs.CreateInstance(ctx, "studio-e2e", []content.Locale{{Code: "en-us", Name: "English"}, {Code: "fr-ca", Name: "Français"}})
	if err != nil {
		t.Fatal(err)
	}
	env := e2eEnv{Guid: inst.Guid, Users: map[string]string{}, Password: "a long enough password"}
	name := "site"
	if _, env.FetchKey, err = cs.CreateAPIKey(ctx, inst, content.APIKeyInput{Name: &name, Type: "fetch"}); err != nil {
		t.Fatal(err)
	}
	if _, env.PreviewKey, err = cs.CreateAPIKey(ctx, inst, content.APIKeyInput{Name: &name, Type: "preview"}); err != nil {
		t.Fatal(err)
	}
	_, token, err := cs.CreateToken(ctx, inst, "ci", content.RoleFull)
	if err != nil {
		t.Fatal(err)
	}
	env.Secrets = []string{env.FetchKey, env.PreviewKey, token}
	us := users.NewStore(db, users.Options{})
	for _, role := range []content.Role{content.RoleFull, content.RoleEdit} {
		email := string(role) + "@example.com"
		u, err := us.Create(ctx, users.NewUser{Email: email, Password: env.Password})
		if err != nil {
			t.Fatal(err)
		}
		if err := us.Grant(ctx, u.ID, inst, role); err != nil {
			t.Fatal(err)
		}
		env.Users[string(role)] = email
	}
	// An operator: no role on the instance, every instance by being one.
	if _, err := us.Create(ctx, users.NewUser{Email: "operator@example.com", Password: env.Password, Operator: true}); err != nil {
		t.Fatal(err)
	}
	env.Users["operator"] = "operator@example.com"

	// A webhook receiver that refuses the first delivery and takes the rest.
	var calls atomic.Int64
	receiver := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		if calls.Add(1) == 1 {
			http.Error(w, "receiver down for maintenance", http.StatusInternalServerError)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	})}
	rl := listen(t)
	go receiver.Serve(rl)
	t.Cleanup(func() { receiver.Close() })
	env.Receiver = "http://" + rl.Addr().String() + "/hook"

	hooks, err := webhooks.NewStore(db, webhooks.Options{Key: bytes.Repeat([]byte{7}, webhooks.KeySize),
		Policy: egress.NewPolicy(netip.MustParsePrefix("127.0.0.0/8")), Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	if testing.Verbose() {
		log = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	}
	ln := listen(t)
	// Asset URLs are the origin's address (the renderer takes it when made).
	cs.PublicURL = media.PublicURL("http://" + ln.Addr().String())
	r := render.New(cs)
	srv := origin.New(origin.Config{
		Render: func(ctx context.Context, req fetch.Request) ([]byte, []string, error) {
			site, err := render.LoadSite(ctx, cs, req.Guid)
			if err != nil {
				return nil, nil, err
			}
			res, err := r.Render(ctx, site, req)
			return res.Body, res.Tags, err
		},
		Webhooks: hooks, Assets: store.NewMemory(nil), Users: us, FetchRateLimit: 1000,
		SecretKey: bytes.Repeat([]byte{3}, 32),
	}, cs, log)
	workers, stop := context.WithCancel(context.Background())
	done := make(chan struct{}, 2)
	go func() { srv.Run(workers); done <- struct{}{} }()
	d := webhooks.NewDispatcher(hooks, webhooks.DispatcherConfig{Poll: 20 * time.Millisecond, ListenURL: url}, log)
	go func() { d.Run(workers); done <- struct{}{} }()
	go srv.App().Listener(ln)
	t.Cleanup(func() {
		srv.Shutdown(context.Background())
		stop()
		<-done
		<-done
	})
	env.Base = "http://" + ln.Addr().String()
	env.Site = serveSite(t, env)
	return env
}

// serveSite serves a small site as a real one previews drafts: its
// /api/preview route exchanges the preview link's token for what it opens
// (POST /api/v1/preview/verify with the site's preview key), remembers
// draft mode in a cookie and redirects to the page, which it then reads
// from the preview API. It returns the site's address.
func serveSite(t *testing.T, env e2eEnv) string {
	t.Helper()
	call := func(method, path string, body any, v any) error {
		var rd io.Reader
		if body != nil {
			b, _ := json.Marshal(body)
			rd = bytes.NewReader(b)
		}
		req, _ := http.NewRequest(method, env.Base+path, rd)
		req.Header.Set("APIKey", env.PreviewKey)
		req.Header.Set("Content-Type", "application/json")
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			return err
		}
		defer res.Body.Close()
		if res.StatusCode != 200 {
			b, _ := io.ReadAll(res.Body)
			return fmt.Errorf("%s %s: %d %s", method, path, res.StatusCode, b)
		}
		return json.NewDecoder(res.Body).Decode(v)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/api/preview", func(w http.ResponseWriter, r *http.Request) {
		var target struct{ Locale, Path string }
		if err := call("POST", "/api/v1/preview/verify", map[string]string{"token": r.URL.Query().Get("key")}, &target); err != nil {
			http.Error(w, err.Error(), http.StatusUnauthorized)
			return
		}
		http.SetCookie(w, &http.Cookie{Name: "draft", Value: target.Locale, Path: "/", HttpOnly: true})
		http.Redirect(w, r, target.Path, http.StatusTemporaryRedirect)
	})
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		ck, err := r.Cookie("draft")
		if err != nil {
			http.Error(w, "this site shows drafts only", http.StatusNotFound)
			return
		}
		var page struct {
			Page struct{ Title string } `json:"page"`
		}
		q := url.Values{"path": {r.URL.Path}}
		if err := call("GET", "/"+env.Guid+"/preview/"+ck.Value+"/page/website?"+q.Encode(), nil, &page); err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		fmt.Fprintf(w, "<!doctype html><html lang=en><title>%s</title><main><h1>%s</h1><p>The draft of %s</p></main></html>",
			html.EscapeString(page.Page.Title), html.EscapeString(page.Page.Title), html.EscapeString(r.URL.Path))
	})
	site := &http.Server{Handler: mux}
	ln := listen(t)
	go site.Serve(ln)
	t.Cleanup(func() { site.Close() })
	return "http://" + ln.Addr().String()
}

func listen(t *testing.T) net.Listener {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	return ln
}
