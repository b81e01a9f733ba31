package nextjs_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/edgecms/edgecms/internal/pgtest"
	"github.com/edgecms/edgecms/internal/testcert"
)

// Measurements: go test ./examples/nextjs -v -args -pages 500 [-preview-rate-limit N].
var (
	pages            = flag.Int("pages", 0, "add posts to the demo until the site has this many pages in all, before the preview build (0: the demo as it is)")
	previewRateLimit = flag.String("preview-rate-limit", "", "EDGECMS_PREVIEW_RATE_LIMIT of edgecms serve (empty: its default)")
)

// locales are the demo's locales, the default first, as the site is set up.
var locales = []string{"en-us", "fr-ca"}

// TestSite builds the example site against a running edgecms and checks
// what a visitor, an editor and a webhook see.
func TestSite(t *testing.T) {
	cms := startCMS(t)
	hero := cms.addHeroPhoto(t)
	s := newSite(t, cms)

	t.Run("build", func(t *testing.T) {
		out := s.build(t, nil)
		checkBuildLog(t, out)
		s.start(t)
		for _, locale := range locales {
			s.checkPages(t, locale)
		}
	})
	if t.Failed() {
		return
	}
	t.Run("AgilityPic from the edge", func(t *testing.T) { s.checkPicture(t, hero) })
	t.Run("ContentID redirect", func(t *testing.T) { s.checkContentIDRedirect(t) })
	t.Run("preview link", func(t *testing.T) { s.checkPreview(t) })
	t.Run("revalidate by webhook", func(t *testing.T) { s.checkRevalidate(t) })
	t.Run("preview build", func(t *testing.T) { s.checkPreviewBuild(t) })
}

// cms is edgecms as the site sees it: `edgecms serve` over TLS (its edge
// in front, the origin, publisher and webhook dispatcher behind it) with
// the demo instance.
type cms struct {
	base       string // https://127.0.0.1:port
	caFile     string
	client     *http.Client
	guid       string
	fetchKey   string
	previewKey string
	token      string
	bin, dbURL string
	objects    string // the folder of the object store
}

// moduleRoot is the root of the Go module (two folders up from here).
func moduleRoot(t *testing.T) string {
	_, file, _, _ := runtime.Caller(0)
	root, err := filepath.Abs(filepath.Join(filepath.Dir(file), "..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	return root
}

// freePort returns a loopback port nothing listens on now.
func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// startCMS builds the edgecms binary, fills a fresh database with the
// demo and serves it with `edgecms serve` at its default settings (only
// the address, the store, TLS, the secret key and the webhook targets
// set), until the test ends.
func startCMS(t *testing.T) *cms {
	t.Helper()
	root := moduleRoot(t)
	c := &cms{bin: filepath.Join(t.TempDir(), "edgecms"), guid: "demo"}
	build := exec.Command("go", "build", "-o", c.bin, "./cmd/edgecms")
	build.Dir = root
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	_, c.dbURL = pgtest.New(t)

	out := c.run(t, nil, "demo", "--guid", c.guid, "--locales", strings.Join(locales, ","))
	var creds struct{ FetchKey, PreviewKey, ManagementToken string }
	if err := json.Unmarshal(out, &creds); err != nil {
		t.Fatalf("edgecms demo printed %s: %v", out, err)
	}
	c.fetchKey, c.previewKey, c.token = creds.FetchKey, creds.PreviewKey, creds.ManagementToken

	certFile, keyFile := testcert.Files(t)
	c.caFile = certFile
	pem, _ := os.ReadFile(certFile)
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(pem)
	c.client = &http.Client{Timeout: time.Minute, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	secret := make([]byte, 32)
	rand.Read(secret)
	addr := fmt.Sprintf("127.0.0.1:%d", freePort(t))
	c.base = "https://" + addr
	serve := exec.Command(c.bin, "serve")
	c.objects = filepath.Join(t.TempDir(), "objects")
	serve.Env = append(c.env(), "EDGECMS_ADDR="+addr, "EDGECMS_STORE="+c.objects,
		"EDGECMS_TLS_CERT="+certFile, "EDGECMS_TLS_KEY="+keyFile, "EDGECMS_SECRET_KEY="+hex.EncodeToString(secret),
		"EDGECMS_WEBHOOK_ALLOW_NETS=127.0.0.0/8", "EDGECMS_ADMIN_ADDR=off")
	serve.Dir = t.TempDir()
	var log bytes.Buffer
	serve.Stdout, serve.Stderr = &log, &log
	if err := serve.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		serve.Process.Signal(os.Interrupt)
		serve.Wait()
		if t.Failed() {
			t.Logf("edgecms serve:\n%s", log.String())
		}
	})
	// Ready once the edge serves the published sitemap from the store.
	waitFor(t, "edgecms to serve the demo", 2*time.Minute, func() bool {
		status, _ := c.fetch(t, c.fetchKey, "/fetch/en-us/sitemap/flat/website")
		return status == 200
	})
	return c
}

// env is the environment of the edgecms commands: the test's database,
// and no EDGECMS_ setting of the environment the test runs in (the test
// checks the defaults).
func (c *cms) env() []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "EDGECMS_") {
			env = append(env, kv)
		}
	}
	if *previewRateLimit != "" {
		env = append(env, "EDGECMS_PREVIEW_RATE_LIMIT="+*previewRateLimit)
	}
	return append(env, "DATABASE_URL="+c.dbURL)
}

// run runs an edgecms command and returns what it printed on stdout.
func (c *cms) run(t *testing.T, env []string, args ...string) []byte {
	t.Helper()
	cmd := exec.Command(c.bin, args...)
	cmd.Env = append(c.env(), env...)
	cmd.Dir = t.TempDir()
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("edgecms %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
	}
	return out
}

// fetch reads a Fetch API path of the instance (after /{guid}) with key.
func (c *cms) fetch(t *testing.T, key, path string) (int, []byte) {
	t.Helper()
	req, _ := http.NewRequest("GET", c.base+"/"+c.guid+path, nil)
	req.Header.Set("APIKey", key)
	res, err := c.client.Do(req)
	if err != nil {
		return 0, []byte(err.Error())
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, b
}

// fetchJSON reads a Fetch API path with the fetch key and decodes it.
func (c *cms) fetchJSON(t *testing.T, path string, v any) {
	t.Helper()
	status, body := c.fetch(t, c.fetchKey, path)
	if status != 200 {
		t.Fatalf("GET %s = %d %s", path, status, body)
	}
	if err := json.Unmarshal(body, v); err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
}

// manage sends a management API request with the full-control token and
// decodes the answer into v (when not nil), failing unless it is 2xx.
func (c *cms) manage(t *testing.T, method, path string, body, v any) {
	t.Helper()
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, _ := http.NewRequest(method, c.base+"/api/v1/instance/"+c.guid+path, rd)
	req.Header.Set("Authorization", "Bearer "+c.token)
	req.Header.Set("Content-Type", "application/json")
	res, err := c.client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	if res.StatusCode/100 != 2 {
		t.Fatalf("%s %s = %d %s", method, path, res.StatusCode, b)
	}
	if v != nil {
		if err := json.Unmarshal(b, v); err != nil {
			t.Fatalf("%s %s: %v", method, path, err)
		}
	}
}

// waitFor calls cond until it is true or the time is up: a bound on the
// wait, not an assertion on speed.
func waitFor(t *testing.T, what string, limit time.Duration, cond func() bool) {
	t.Helper()
	for start := time.Now(); !cond(); time.Sleep(100 * time.Millisecond) {
		if time.Since(start) > limit {
			t.Fatalf("gave up waiting %s for %s", limit, what)
		}
	}
}

// site is the example site: a copy of this folder built and served with
// the npm packages of scripts/nextjs.sh.
type site struct {
	life          *testing.T // the test whose end stops the site and removes its builds
	cms           *cms
	src, packages string // this folder; the install's folder, holding node_modules
	addr          string // 127.0.0.1:port of next start
	hookSecret    string
	dir           string // the current build
	client        *http.Client
}

// newSite checks the site's packages, and makes the webhook and the preview
// URL that point edgecms at the site.
func newSite(t *testing.T, c *cms) *site {
	t.Helper()
	src := filepath.Join(moduleRoot(t), "examples", "nextjs")
	nm, err := filepath.EvalSymlinks(filepath.Join(src, "node_modules"))
	if err != nil {
		t.Fatalf("the example's npm packages are not installed: run bash scripts/nextjs.sh deps (scripts/test.sh does): %v", err)
	}
	if _, err := os.Stat(filepath.Join(nm, "next", "package.json")); err != nil {
		t.Fatalf("node_modules has no next: run bash scripts/nextjs.sh deps: %v", err)
	}
	s := &site{life: t, cms: c, src: src, packages: filepath.Dir(nm), addr: fmt.Sprintf("127.0.0.1:%d", freePort(t)),
		client: &http.Client{Timeout: time.Minute, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
	var hook struct{ SigningSecret string }
	c.manage(t, "POST", "/webhook", map[string]any{"name": "site", "url": "http://" + s.addr + "/api/revalidate", "enabled": true,
		"contentPublishEvents": true, "secureDeliveryEnabled": true}, &hook)
	s.hookSecret = hook.SigningSecret
	c.manage(t, "PATCH", "/channels/website", map[string]any{"previewUrl": "http://" + s.addr + "/api/preview?slug={path}&key={previewLink}"}, nil)
	return s
}

// env is the site's environment (.env.example), plus extra.
func (s *site) env(extra []string) []string {
	c := s.cms
	return append(append(os.Environ(),
		"AGILITY_BASE_URL="+c.base+"/"+c.guid, "AGILITY_GUID="+c.guid,
		"AGILITY_API_FETCH_KEY="+c.fetchKey, "AGILITY_API_PREVIEW_KEY="+c.previewKey,
		"AGILITY_LOCALES="+strings.Join(locales, ","), "AGILITY_SITEMAP=website",
		"AGILITY_FETCH_CACHE_DURATION=3600", "EDGECMS_WEBHOOK_SECRET="+s.hookSecret,
		"NODE_EXTRA_CA_CERTS="+c.caFile, "NEXT_TELEMETRY_DISABLED=1"), extra...)
}

// build copies the site into a new folder beside its packages (Turbopack
// resolves node_modules only inside the project's root, which it finds by
// the packages' lock file) and runs next build there; it returns the
// build's output.
func (s *site) build(t *testing.T, env []string) string {
	t.Helper()
	dir, err := os.MkdirTemp(s.packages, "build-")
	if err != nil {
		t.Fatal(err)
	}
	s.life.Cleanup(func() { os.RemoveAll(dir) })
	err = filepath.WalkDir(s.src, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(s.src, path)
		switch {
		case rel == "node_modules" || rel == ".next" || strings.HasSuffix(rel, ".go"):
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		case rel == "package-lock.json" || rel == ".env.local":
			return nil
		case d.IsDir():
			return os.MkdirAll(filepath.Join(dir, rel), 0o755)
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dir, rel), b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	s.dir = dir
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "node", filepath.Join(s.packages, "node_modules", "next", "dist", "bin", "next"), "build")
	cmd.Dir = dir
	cmd.Env = s.env(env)
	start := time.Now()
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("next build: %v\n%s", err, out)
	}
	t.Logf("next build took %s", time.Since(start).Round(time.Second))
	return string(out)
}

// checkBuildLog fails on an error of the SDK in a build's output (a 429,
// an unreachable API, a page it could not read).
func checkBuildLog(t *testing.T, out string) {
	t.Helper()
	for _, line := range strings.Split(out, "\n") {
		for _, bad := range []string{"returned a 429", "Fetch API ERROR", "was not able to be accessed", "not found in sitemap"} {
			if strings.Contains(line, bad) {
				t.Errorf("next build: %s", line)
			}
		}
	}
}

// start serves the current build with next start until the site's test
// ends.
func (s *site) start(t *testing.T) {
	t.Helper()
	host, port, _ := net.SplitHostPort(s.addr)
	cmd := exec.Command("node", filepath.Join(s.packages, "node_modules", "next", "dist", "bin", "next"), "start", "-H", host, "-p", port)
	cmd.Dir = s.dir
	cmd.Env = s.env(nil)
	var log bytes.Buffer
	cmd.Stdout, cmd.Stderr = &log, &log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	s.life.Cleanup(func() {
		cmd.Process.Signal(os.Interrupt)
		cmd.Wait()
		if s.life.Failed() {
			s.life.Logf("next start:\n%s", log.String())
		}
	})
	waitFor(t, "next start", time.Minute, func() bool {
		res, err := s.client.Get("http://" + s.addr + "/api/preview")
		if err == nil {
			res.Body.Close()
		}
		return err == nil
	})
}

// get fetches a path of the site with client (s.client when nil).
func (s *site) get(t *testing.T, client *http.Client, path string) (*http.Response, string) {
	t.Helper()
	if client == nil {
		client = s.client
	}
	res, err := client.Get("http://" + s.addr + path)
	if err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res, string(b)
}

// sitePath is the site's path of a sitemap path in a locale.
func sitePath(locale, path string) string {
	switch {
	case locale == locales[0]:
		return path
	case path == "/":
		return "/" + locale
	}
	return "/" + locale + path
}

// sitemapNode is a node of the flat sitemap.
type sitemapNode struct {
	Title     string
	PageID    int64
	ContentID int64
	IsFolder  bool
	Redirect  *struct{ URL string }
}

// fetchItem is an item of the Fetch API.
type fetchItem struct {
	ContentID int64
	Fields    map[string]any
}

// checkPages checks every page of the locale's sitemap: a folder is a 404,
// a link page redirects, and every other page was built (its HTML is in
// the build) and shows its title and every text of its components and of
// the item it shows.
func (s *site) checkPages(t *testing.T, locale string) {
	t.Helper()
	var sitemap map[string]sitemapNode
	s.cms.fetchJSON(t, "/fetch/"+locale+"/sitemap/flat/website", &sitemap)
	paths := make([]string, 0, len(sitemap))
	for p := range sitemap {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	checked := 0
	for _, p := range paths {
		node, path := sitemap[p], sitePath(locale, p)
		res, html := s.get(t, nil, path)
		switch {
		case node.IsFolder:
			if res.StatusCode != 404 {
				t.Errorf("%s (a folder) = %d, want 404", path, res.StatusCode)
			}
			continue
		case node.Redirect != nil:
			if res.StatusCode != 307 || res.Header.Get("Location") != node.Redirect.URL {
				t.Errorf("%s (a link page) = %d to %q, want 307 to %s", path, res.StatusCode, res.Header.Get("Location"), node.Redirect.URL)
			}
			continue
		case res.StatusCode != 200:
			t.Errorf("GET %s = %d", path, res.StatusCode)
			continue
		}
		if _, err := os.Stat(filepath.Join(s.dir, ".next", "server", "app", locale+p+".html")); err != nil {
			t.Errorf("%s was not built ahead: %v", path, err)
		}
		var want []string
		want = append(want, "<title>"+escape(node.Title)+" | Northwind Roasters</title>", fmt.Sprintf(`<html lang="%s"`, locale[:2]))
		var page struct {
			Zones map[string][]struct {
				Module string
				Item   fetchItem
			}
		}
		s.cms.fetchJSON(t, fmt.Sprintf("/fetch/%s/page/%d?contentLinkDepth=2&expandAllContentLinks=true", locale, node.PageID), &page)
		for _, zone := range page.Zones {
			for _, m := range zone {
				want = append(want, texts(m.Item.Fields)...)
				if m.Module == "FeaturedProducts" || m.Module == "PostListing" {
					for _, linked := range m.Item.Fields {
						if items, ok := linked.([]any); ok {
							for _, it := range items {
								want = append(want, escape(it.(map[string]any)["fields"].(map[string]any)["Title"].(string)))
							}
						}
					}
				}
			}
		}
		if node.ContentID > 0 {
			var post fetchItem
			s.cms.fetchJSON(t, fmt.Sprintf("/fetch/%s/item/%d", locale, node.ContentID), &post)
			want = append(want, texts(post.Fields)...)
		}
		for _, w := range want {
			if !strings.Contains(html, w) {
				t.Errorf("%s does not show %q", path, w)
			}
		}
		checked++
	}
	// The root is the sitemap's first page.
	res, html := s.get(t, nil, sitePath(locale, "/"))
	if res.StatusCode != 200 || !strings.Contains(html, "<title>"+escape(sitemap[paths0(sitemap)].Title)) {
		t.Errorf("%s = %d, want the first page of the sitemap", sitePath(locale, "/"), res.StatusCode)
	}
	if checked < 10 {
		t.Errorf("%s: checked %d pages, want the demo's (at least 10)", locale, checked)
	}
}

// paths0 is the first path of a flat sitemap, the home page: the one whose
// page has the smallest id.
func paths0(sitemap map[string]sitemapNode) string {
	first := ""
	for p, n := range sitemap {
		if first == "" || n.PageID < sitemap[first].PageID {
			first = p
		}
	}
	return first
}

// fieldValue is text a component shows; numbers, booleans, links and dates
// are shown formatted or not at all.
var notShown = regexp.MustCompile(`^(true|false|-?[0-9.]+|/.*|https?://.*|mailto:.*|\d{4}-\d\d-\d\dT.*)$`)

// texts are the texts of fields as a page shows them: rich text as it is,
// other text escaped as React escapes it.
func texts(fields map[string]any) []string {
	var out []string
	for _, v := range fields {
		s, ok := v.(string)
		if !ok || s == "" || notShown.MatchString(s) || regexp.MustCompile(`^\d+(,\d+)*$`).MatchString(s) {
			continue
		}
		if strings.HasPrefix(s, "<") {
			out = append(out, s)
		} else {
			out = append(out, escape(s))
		}
	}
	return out
}

// escape escapes text as React writes it into HTML.
func escape(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&quot;", "'", "&#x27;").Replace(s)
}

// checkContentIDRedirect: /?ContentID= goes to the page of the item, in
// the locale of ?lang=.
func (s *site) checkContentIDRedirect(t *testing.T) {
	for _, locale := range locales {
		var sitemap map[string]sitemapNode
		s.cms.fetchJSON(t, "/fetch/"+locale+"/sitemap/flat/website", &sitemap)
		for p, node := range sitemap {
			if node.ContentID == 0 {
				continue
			}
			res, _ := s.get(t, nil, fmt.Sprintf("/?ContentID=%d&lang=%s", node.ContentID, locale))
			if want := sitePath(locale, p); res.StatusCode != 307 || res.Header.Get("Location") != want {
				t.Errorf("?ContentID=%d&lang=%s = %d to %q, want 307 to %s", node.ContentID, locale, res.StatusCode, res.Header.Get("Location"), want)
			}
		}
	}
	if res, _ := s.get(t, nil, "/?ContentID=999999"); res.StatusCode != 404 {
		t.Errorf("?ContentID of no page = %d, want 404", res.StatusCode)
	}
}

// pageID returns the id of the page at a sitemap path in a locale.
func (s *site) pageID(t *testing.T, locale, path string) (int64, string) {
	t.Helper()
	var sitemap map[string]sitemapNode
	s.cms.fetchJSON(t, "/fetch/"+locale+"/sitemap/flat/website", &sitemap)
	n, ok := sitemap[path]
	if !ok {
		t.Fatalf("no %s in the %s sitemap", path, locale)
	}
	return n.PageID, n.Title
}

// browser is a client with a cookie jar that follows redirects.
func browser(t *testing.T) *http.Client {
	jar, err := cookiejar.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	return &http.Client{Jar: jar, Timeout: time.Minute}
}

// checkPreview: an editor's preview link (what the Studio's Preview button
// opens) turns on draft mode and shows the saved draft, while visitors see
// the published page; the Agility form of the link works too; a changed
// token is refused.
func (s *site) checkPreview(t *testing.T) {
	c := s.cms
	about, title := s.pageID(t, "en-us", "/about-us")
	c.manage(t, "PUT", fmt.Sprintf("/en-us/pages/%d", about), map[string]any{"title": title + ", draft"}, nil)

	var link struct{ URL, Token string }
	c.manage(t, "POST", fmt.Sprintf("/en-us/pages/%d/preview-link", about), nil, &link)
	editor := browser(t)
	res, html := s.get(t, editor, strings.TrimPrefix(link.URL, "http://"+s.addr))
	if res.StatusCode != 200 || res.Request.URL.Path != "/about-us" || !strings.Contains(html, "<title>"+escape(title)+", draft | ") ||
		!strings.Contains(html, "Preview: this page shows drafts") {
		t.Errorf("the preview link led to %s (%d), want /about-us with the draft title", res.Request.URL, res.StatusCode)
	}
	if _, html := s.get(t, nil, "/about-us"); !strings.Contains(html, "<title>"+escape(title)+" | ") {
		t.Errorf("a visitor sees the draft of /about-us")
	}
	// Draft mode stays on for the editor's other pages, and ends on exit.
	if _, html := s.get(t, editor, "/contact"); !strings.Contains(html, "Preview: this page shows drafts") {
		t.Errorf("draft mode is not on for the editor's next page")
	}
	if res, html := s.get(t, editor, "/api/preview/exit?slug=/about-us"); res.Request.URL.Path != "/about-us" || strings.Contains(html, ", draft") {
		t.Errorf("leaving the preview: %s still shows the draft", res.Request.URL)
	}

	// A changed token is refused, and the site says why.
	res, body := s.get(t, nil, "/api/preview?slug=/about-us&key="+url.QueryEscape(link.Token[:len(link.Token)-2]+"xx"))
	if res.StatusCode != 401 || !strings.Contains(body, "not valid") {
		t.Errorf("a changed token = %d %s, want 401", res.StatusCode, body)
	}

	// The Agility form of the template, through proxy.js: a French page,
	// and an item of the dynamic blog page.
	c.manage(t, "PATCH", "/channels/website", map[string]any{"previewUrl": "http://" + s.addr + "{path}?agilitypreviewkey={previewLink}&lang={locale}&ContentID={contentID}"}, nil)
	aPropos, _ := s.pageID(t, "fr-ca", "/a-propos")
	c.manage(t, "PUT", fmt.Sprintf("/fr-ca/pages/%d", aPropos), map[string]any{"title": "À propos, brouillon"}, nil)
	c.manage(t, "POST", fmt.Sprintf("/fr-ca/pages/%d/preview-link", aPropos), nil, &link)
	res, html = s.get(t, browser(t), strings.TrimPrefix(link.URL, "http://"+s.addr))
	if res.Request.URL.Path != "/fr-ca/a-propos" || !strings.Contains(html, escape("À propos, brouillon")) {
		t.Errorf("the Agility form of the link led to %s (%d) without the draft", res.Request.URL, res.StatusCode)
	}
	var posts struct{ Items []fetchItem }
	c.fetchJSON(t, "/fetch/en-us/list/posts", &posts)
	post := posts.Items[0]
	c.manage(t, "PUT", fmt.Sprintf("/en-us/items/%d", post.ContentID), map[string]any{"fields": map[string]any{"Title": "A draft headline"}}, nil)
	var blog struct{ PageID int64 }
	var sitemap map[string]sitemapNode
	c.fetchJSON(t, "/fetch/en-us/sitemap/flat/website", &sitemap)
	postPath := ""
	for p, n := range sitemap {
		if n.ContentID == post.ContentID {
			blog.PageID, postPath = n.PageID, p
		}
	}
	c.manage(t, "POST", fmt.Sprintf("/en-us/pages/%d/preview-link", blog.PageID), map[string]any{"contentID": post.ContentID}, &link)
	res, html = s.get(t, browser(t), strings.TrimPrefix(link.URL, "http://"+s.addr))
	if res.Request.URL.Path != postPath || !strings.Contains(html, "<h1>A draft headline</h1>") {
		t.Errorf("the preview of a post led to %s (%d) without its draft", res.Request.URL, res.StatusCode)
	}
}

// checkRevalidate: a publish reaches the built site through the signed
// Published webhook, which revalidates the pages that show the item; an
// unsigned call is refused.
func (s *site) checkRevalidate(t *testing.T) {
	c := s.cms
	var posts struct{ Items []fetchItem }
	c.fetchJSON(t, "/fetch/en-us/list/posts", &posts)
	post := posts.Items[1]
	var sitemap map[string]sitemapNode
	c.fetchJSON(t, "/fetch/en-us/sitemap/flat/website", &sitemap)
	postPath := ""
	for p, n := range sitemap {
		if n.ContentID == post.ContentID {
			postPath = p
		}
	}
	if _, html := s.get(t, nil, postPath); !strings.Contains(html, escape(post.Fields["Title"].(string))) {
		t.Fatalf("%s does not show its post before the change", postPath)
	}
	title := "Revalidated: " + post.Fields["Title"].(string)
	c.manage(t, "PUT", fmt.Sprintf("/en-us/items/%d", post.ContentID), map[string]any{"fields": map[string]any{"Title": title}}, nil)
	c.manage(t, "POST", fmt.Sprintf("/en-us/items/%d/publish", post.ContentID), nil, nil)
	for _, path := range []string{postPath, "/blog"} {
		waitFor(t, path+" to show the published title", time.Minute, func() bool {
			_, html := s.get(t, nil, path)
			return strings.Contains(html, escape(title))
		})
	}
	req, _ := http.NewRequest("POST", "http://"+s.addr+"/api/revalidate", strings.NewReader(`{"state":"Published","instanceGuid":"demo","languageCode":"en-us","pageID":1}`))
	req.Header.Set("webhook-id", "msg_x")
	req.Header.Set("webhook-timestamp", fmt.Sprint(time.Now().Unix()))
	req.Header.Set("webhook-signature", "v1,Ceo5qEr07ixe2NLpvHk3FH9bwy/WavXrAFQ/9tdO6mc=")
	res, err := s.client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != 401 {
		t.Errorf("a webhook with a bad signature = %d, want 401", res.StatusCode)
	}
}

// checkPreviewBuild builds the whole site from the preview API (a staging
// site) against edgecms at its default preview rate limit: no request is
// refused, and the drafts are in the built pages. With -pages it first
// adds posts until the site has that many pages, and reports the build.
func (s *site) checkPreviewBuild(t *testing.T) {
	if *pages > 0 {
		s.addPosts(t, *pages)
	}
	start := time.Now()
	out := s.build(t, []string{"EDGECMS_PREVIEW_BUILD=1", "AGILITY_LOG_LEVEL=debug"})
	took := time.Since(start)
	checkBuildLog(t, out)
	requests := strings.Count(out, "AgilityCMS Fetch API LOG")
	built := 0
	filepath.WalkDir(filepath.Join(s.dir, ".next", "server", "app"), func(path string, d os.DirEntry, err error) error {
		if err == nil && strings.HasSuffix(path, ".html") && !strings.Contains(path, "_") {
			built++
		}
		return nil
	})
	t.Logf("preview build: %d pages, %d requests to the preview API in %s (%.0f/s on average)", built, requests, took.Round(time.Second), float64(requests)/took.Seconds())
	html, err := os.ReadFile(filepath.Join(s.dir, ".next", "server", "app", "en-us", "about-us.html"))
	if err != nil || !strings.Contains(string(html), ", draft | Northwind Roasters</title>") {
		t.Errorf("the preview build's /about-us has no draft title (%v)", err)
	}
	if requests < built {
		t.Errorf("%d requests for %d pages: the build's requests were not counted", requests, built)
	}
}

// addPosts adds published posts (both locales) until the sitemaps have
// about want pages in all.
func (s *site) addPosts(t *testing.T, want int) {
	c := s.cms
	count := func() int {
		n := 0
		for _, l := range locales {
			var sitemap map[string]sitemapNode
			c.fetchJSON(t, "/fetch/"+l+"/sitemap/flat/website", &sitemap)
			n += len(sitemap)
		}
		return n
	}
	have := count()
	for i := 0; have+2*i < want; i++ {
		var st struct{ ContentID int64 }
		slug := fmt.Sprintf("field-notes-%d", i)
		c.manage(t, "POST", "/en-us/items", map[string]any{"referenceName": "posts", "fields": map[string]any{
			"Title": fmt.Sprintf("Field notes %d", i), "Slug": slug, "Excerpt": "Notes from the roastery.",
			"Body": "<p>What we tasted this week.</p>", "PostDate": "2025-01-02T09:00:00-05:00"}}, &st)
		c.manage(t, "PUT", fmt.Sprintf("/fr-ca/items/%d", st.ContentID), map[string]any{"fields": map[string]any{
			"Title": fmt.Sprintf("Carnet %d", i), "Slug": fmt.Sprintf("carnet-%d", i)}}, nil)
		for _, l := range locales {
			c.manage(t, "POST", fmt.Sprintf("/%s/items/%d/publish", l, st.ContentID), nil, nil)
		}
	}
	waitFor(t, fmt.Sprintf("the sitemaps to list %d pages", want), 5*time.Minute, func() bool { return count() >= want })
	t.Logf("the site has %d pages in all", count())
}
