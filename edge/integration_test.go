package edge_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/edgecms/edgecms/content"
	"github.com/edgecms/edgecms/delivery"
	"github.com/edgecms/edgecms/edge"
	"github.com/edgecms/edgecms/internal/cmdtest"
	"github.com/edgecms/edgecms/internal/pgtest"
	"github.com/edgecms/edgecms/publisher"
	"github.com/edgecms/edgecms/store"
)

// published is what a real origin rendered for the demo site and what was
// written to a folder store from it.
type published struct {
	guid                 string
	fetchKey, previewKey string
	urls                 []string          // Fetch API URLs (path?query) of every stored object
	bodies               map[string]string // URL -> body the origin answered
	storeDir             string
	st                   store.Store
	manifest             delivery.Manifest
}

// publishDemo fills a fresh database with the demo site, publishes it into
// a folder store with the real publisher (objects, key manifest, feed),
// and records what a real origin answers for every published item, list
// page, page (both page variants and by path) and sitemap of each locale,
// crawling it from the sitemaps and lists. Then it stops the origin and
// closes the database.
func publishDemo(t *testing.T) *published {
	t.Helper()
	ctx := context.Background()
	in := newInstance(t, "demo-site", content.Locale{Code: "en-us", Name: "English"}, content.Locale{Code: "fr-ca", Name: "Français"})
	db, cs, inst := in.db, in.cs, in.inst
	_, fetchSecret := in.apiKey(t, "fetch")
	_, previewSecret := in.apiKey(t, "preview")
	in.fillDemo(t)
	base, stopOrigin := startOrigin(t, cs)

	dir := t.TempDir()
	st, err := store.Open(ctx, dir, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	p := &published{guid: inst.Guid, fetchKey: fetchSecret, previewKey: previewSecret,
		bodies: map[string]string{}, storeDir: dir, st: st}
	fetchURL := func(u string) []byte {
		t.Helper()
		if _, ok := p.bodies[u]; ok {
			return []byte(p.bodies[u])
		}
		res := get(t, base+u, fetchSecret)
		if res.status != 200 {
			t.Fatalf("origin GET %s = %d %s", u, res.status, res.body)
		}
		p.urls = append(p.urls, u)
		p.bodies[u] = string(res.body)
		return res.body
	}

	locales, err := cs.Locales(ctx, inst)
	if err != nil {
		t.Fatal(err)
	}
	channels, err := cs.Channels(ctx, inst)
	if err != nil {
		t.Fatal(err)
	}
	containers, err := cs.Containers(ctx, inst)
	if err != nil {
		t.Fatal(err)
	}
	g := "/" + p.guid + "/fetch/"
	for _, l := range locales {
		lc := strings.ToLower(l.Code)
		for _, ch := range channels {
			fetchURL(g + lc + "/sitemap/nested/" + ch.Name)
			var flat map[string]struct {
				PageID int64 `json:"pageID"`
				Path   string
			}
			if err := json.Unmarshal(fetchURL(g+lc+"/sitemap/flat/"+ch.Name), &flat); err != nil {
				t.Fatal(err)
			}
			for path, node := range flat {
				fetchURL(fmt.Sprintf("%s%s/page/%d", g, lc, node.PageID))
				fetchURL(fmt.Sprintf("%s%s/page/%d?contentLinkDepth=2&expandAllContentLinks=true", g, lc, node.PageID))
				fetchURL(fmt.Sprintf("%s%s/page/%s?path=%s&contentLinkDepth=2&expandAllContentLinks=true", g, lc, ch.Name, url.QueryEscape(path)))
			}
		}
		for _, c := range containers {
			for skip := 0; ; skip += 10 {
				var list struct {
					Items []struct {
						ContentID int64 `json:"contentID"`
					} `json:"items"`
					TotalCount int `json:"totalCount"`
				}
				u := fmt.Sprintf("%s%s/list/%s", g, lc, strings.ToLower(c.ReferenceName))
				if skip > 0 {
					u += fmt.Sprintf("?skip=%d", skip)
				}
				if err := json.Unmarshal(fetchURL(u), &list); err != nil {
					t.Fatal(err)
				}
				for _, it := range list.Items {
					fetchURL(fmt.Sprintf("%s%s/item/%d", g, lc, it.ContentID))
				}
				if skip+10 >= list.TotalCount {
					break
				}
			}
		}
	}

	pub := publisher.New(publisher.Config{Store: st}, cs, testLog(t))
	defer pub.Close()
	if err := pub.Drain(ctx); err != nil {
		t.Fatal(err)
	}
	if err := pub.PublishKeys(ctx, p.guid); err != nil {
		t.Fatal(err)
	}
	m, err := st.Get(ctx, delivery.ManifestKey(p.guid))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(m.Body, &p.manifest); err != nil {
		t.Fatal(err)
	}

	stopOrigin()
	db.Close()
	return p
}

func TestMain(m *testing.M) {
	code := pgtest.Run(m)
	cmdtest.Cleanup()
	os.Exit(code)
}

// startCommand runs "edgecms <command>", in a scratch folder, on a free
// loopback address with
// the given environment added to this process's, which loses DATABASE_URL
// (give it in env where wanted), and returns its base URL once it answers.
// The command is interrupted when the test ends.
func startCommand(t *testing.T, command string, env ...string) string {
	t.Helper()
	bin := cmdtest.Binary(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	cmd := exec.Command(bin, command)
	cmd.Dir = t.TempDir() // serve keeps files under ./data
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "DATABASE_URL=") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env, "EDGECMS_ADDR="+addr)
	cmd.Env = append(cmd.Env, env...)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	logged := make(chan struct{})
	go func() {
		defer close(logged)
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			t.Log("edgecms " + command + ": " + sc.Text())
		}
	}()
	t.Cleanup(func() {
		cmd.Process.Signal(os.Interrupt)
		<-logged
		if err := cmd.Wait(); err != nil {
			t.Errorf("edgecms %s: %v", command, err)
		}
	})
	base := "http://" + addr
	waitFor(t, 60*time.Second, "edgecms "+command+" listening", func() bool {
		res, err := http.Get(base + "/healthz")
		if err == nil {
			res.Body.Close()
		}
		return err == nil
	})
	return base
}

// TestWithoutDatabase publishes the demo site with the real publisher into
// a folder store, records what a real origin answers, stops the origin and
// the database, and checks that an "edgecms edge" started without
// DATABASE_URL serves every published item, list page, page and sitemap
// from the store with the origin's bytes, refuses a revoked key once the
// manifest changes, never serves preview from the store, and answers clear
// problems for what only the origin could answer.
func TestWithoutDatabase(t *testing.T) {
	t.Parallel()
	p := publishDemo(t)
	t.Logf("published %d objects of instance %s", len(p.urls), p.guid)
	if len(p.urls) < 40 {
		t.Fatalf("only %d objects published; the demo site should give more", len(p.urls))
	}
	originURL := deadURL(t) // the origin is stopped: nothing listens
	base := startCommand(t, "edge", "EDGECMS_STORE="+p.storeDir, "EDGECMS_ORIGIN_URL="+originURL, "EDGECMS_EDGE_FEED_POLL=20ms")

	kinds := map[string]int{}
	for _, u := range p.urls {
		for _, want := range []string{"MISS", "HIT"} {
			r := get(t, base+u, p.fetchKey)
			if r.status != 200 || string(r.body) != p.bodies[u] {
				t.Errorf("GET %s = %d %.200s, want 200 and the origin's body", u, r.status, r.body)
				break
			}
			if got := r.header.Get("X-Cache"); got != want {
				t.Errorf("GET %s: X-Cache = %q, want %q", u, got, want)
			}
		}
		path, _, _ := strings.Cut(u, "?")
		seg := strings.Split(path, "/")
		kinds[seg[4]]++
	}
	t.Logf("served from the store by kind: %v", kinds)
	for _, k := range []string{"item", "list", "page", "sitemap"} {
		if kinds[k] == 0 {
			t.Errorf("no %s was published and served", k)
		}
	}

	item := p.urls[len(p.urls)-1]
	for _, tt := range []struct{ name, url, key string }{
		{"preview (never from the store)", strings.Replace(item, "/fetch/", "/preview/", 1), p.previewKey},
		{"a variant not in the store", item + "?contentLinkDepth=4", p.fetchKey},
		{"management API", "/api/v1/instance/" + p.guid + "/models", ""},
	} {
		r := get(t, base+tt.url, tt.key)
		if r.status != 502 && r.status != 503 || r.header.Get("Cache-Control") != "no-store" {
			t.Errorf("%s: GET %s = %d (Cache-Control %q) %s, want 502/503 no-store", tt.name, tt.url, r.status, r.header.Get("Cache-Control"), r.body)
		}
	}
	if r := get(t, base+item, "not-a-key"); r.status != 401 {
		t.Errorf("unknown key: %d, want 401", r.status)
	}

	// Revoke the fetch key as the publisher would (it is stopped): rewrite the
	// manifest and list it in the feed.
	for i := range p.manifest.Keys {
		if p.manifest.Keys[i].Type == "fetch" {
			p.manifest.Keys[i].Enabled = false
		}
	}
	putJSON(t, p.st, delivery.ManifestKey(p.guid), p.manifest)
	seq := feedSeq(t, p.st) + 1
	putJSON(t, p.st, delivery.FeedKey, delivery.Feed{Seq: seq, Oldest: seq, Changes: []delivery.Change{{Seq: seq, Key: delivery.ManifestKey(p.guid)}}})
	took := waitFor(t, 10*time.Second, "revoked key refused", func() bool { return get(t, base+item, p.fetchKey).status == 401 })
	t.Logf("revoked key refused %v after the manifest and feed were written (feed poll 20 ms)", took)
}

// TestRealOriginBehindEdge puts an edge with an empty store in front of a
// real origin on Postgres and checks that management calls, the OpenAPI
// document, the health check, preview and store misses all pass through
// and come back as the origin answers them directly.
func TestRealOriginBehindEdge(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	in := newInstance(t, "proxied")
	cs, inst := in.cs, in.inst
	_, token, err := cs.CreateToken(ctx, inst, "test", content.RoleFull)
	if err != nil {
		t.Fatal(err)
	}
	_, previewSecret := in.apiKey(t, "preview")
	in.fillDemo(t)
	direct, _ := startOrigin(t, cs)
	e := startEdge(t, store.NewMemory(nil), edge.Config{OriginURL: direct})

	bearer := "Bearer " + token
	api := "/api/v1/instance/proxied"
	// A key created through the edge works through the edge: no manifest
	// in the store, so the origin checks it.
	res := do(t, "POST", e.url+api+"/apikeys", strings.NewReader(`{"name":"via edge","type":"fetch"}`), "Authorization", bearer, "Content-Type", "application/json")
	if res.status != 201 {
		t.Fatalf("POST apikeys via the edge = %d %s", res.status, res.body)
	}
	var created struct{ Key string }
	if err := json.Unmarshal(res.body, &created); err != nil || created.Key == "" {
		t.Fatalf("POST apikeys: %s", res.body)
	}

	for _, tt := range []struct {
		name, method, path, body string
		headers                  []string
		status                   int
	}{
		{"list models", "GET", api + "/models", "", []string{"Authorization", bearer}, 200},
		{"bad token", "GET", api + "/models", "", []string{"Authorization", "Bearer nope"}, 401},
		{"invalid body", "POST", api + "/containers", `{"referenceName":`, []string{"Authorization", bearer, "Content-Type", "application/json"}, 400},
		{"openapi", "GET", "/api/openapi.json", "", nil, 200},
		{"health", "GET", "/healthz", "", nil, 200},
		{"HEAD health", "HEAD", "/healthz", "", nil, 200},
		{"fetch miss", "GET", "/proxied/fetch/en-us/item/1", "", []string{"APIKey", created.Key}, 200},
		{"fetch list miss", "GET", "/proxied/fetch/en-us/list/categories?take=2", "", []string{"APIKey", created.Key}, 200},
		{"preview", "GET", "/proxied/preview/en-us/item/1", "", []string{"APIKey", previewSecret}, 200},
		{"fetch, wrong key type", "GET", "/proxied/fetch/en-us/item/1", "", []string{"APIKey", previewSecret}, 403},
		{"fetch, no such item", "GET", "/proxied/fetch/en-us/item/99999", "", []string{"APIKey", created.Key}, 404},
	} {
		via := do(t, tt.method, e.url+tt.path, strings.NewReader(tt.body), tt.headers...)
		dir := do(t, tt.method, direct+tt.path, strings.NewReader(tt.body), tt.headers...)
		if via.status != tt.status || dir.status != tt.status {
			t.Errorf("%s: %s %s = %d via the edge, %d direct, want %d (%s)", tt.name, tt.method, tt.path, via.status, dir.status, tt.status, via.body)
			continue
		}
		if string(via.body) != string(dir.body) {
			t.Errorf("%s: body via the edge %.200s, direct %.200s", tt.name, via.body, dir.body)
		}
		for _, h := range []string{"Content-Type", "Cache-Control", "ETag", "Surrogate-Key", "Content-Length"} {
			if via.header.Get(h) != dir.header.Get(h) {
				t.Errorf("%s: %s via the edge %q, direct %q", tt.name, h, via.header.Get(h), dir.header.Get(h))
			}
		}
	}
}

// TestServe runs "edgecms serve" on a database filled by "edgecms demo" and
// checks that its one public address is an edge: Fetch API reads come from
// the store the publisher inside serve fills (X-Cache: HIT once cached),
// and management calls reach the origin behind it.
func TestServe(t *testing.T) {
	t.Parallel()
	_, dsn := pgtest.New(t)
	bin := cmdtest.Binary(t)
	demoCmd := exec.Command(bin, "demo", "--guid", "served", "--locales", "en-us")
	demoCmd.Env = append(os.Environ(), "DATABASE_URL="+dsn)
	demoCmd.Dir = t.TempDir()
	var stderr strings.Builder
	demoCmd.Stderr = &stderr
	out, err := demoCmd.Output()
	if err != nil {
		t.Fatalf("edgecms demo: %v\n%s", err, stderr.String())
	}
	var creds struct{ ManagementToken, FetchKey string }
	if err := json.Unmarshal(out, &creds); err != nil {
		t.Fatalf("edgecms demo printed %s: %v", out, err)
	}
	base := startCommand(t, "serve", "DATABASE_URL="+dsn, "EDGECMS_STORE="+t.TempDir(), "EDGECMS_FETCH_RATE_LIMIT=0")

	item := base + "/served/fetch/en-us/item/1"
	waitFor(t, 60*time.Second, "item served from the edge's memory", func() bool {
		r := get(t, item, creds.FetchKey)
		return r.status == 200 && r.header.Get("X-Cache") == "HIT"
	})
	if r := get(t, base+"/served/fetch/en-us/item/1", "wrong"); r.status != 401 {
		t.Errorf("wrong key: %d, want 401", r.status)
	}
	r := do(t, "GET", base+"/api/v1/instance/served/models", nil, "Authorization", "Bearer "+creds.ManagementToken)
	if r.status != 200 || !strings.Contains(string(r.body), "Category") {
		t.Errorf("GET models through serve's edge = %d %.200s", r.status, r.body)
	}
}
