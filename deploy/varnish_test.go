package deploy_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/edgecms/edgecms/fetch"
	"github.com/edgecms/edgecms/internal/pgtest"
	"github.com/edgecms/edgecms/store"
)

// Ports of the Varnish test (the range 25500-25999 is this test's).
const (
	originPort  = 25601
	edge1Port   = 25602
	edge2Port   = 25603
	varnishPort = 25604
	varnishCLI  = 25605
	adminBase   = 25610 // EDGECMS_ADMIN_ADDR of each role: 25610, 25611, ...
)

// vclDir copies deploy/varnish into a folder with the backends' hosts and
// ports replaced (compose's edge1 and edge2 resolve only on its network).
func vclDir(t *testing.T, ports ...int) string {
	t.Helper()
	dir := t.TempDir()
	for _, name := range []string{"default.vcl", "backends.vcl"} {
		b, err := os.ReadFile(filepath.Join("varnish", name))
		if err != nil {
			t.Fatal(err)
		}
		if name == "backends.vcl" {
			for i, p := range ports {
				host := fmt.Sprintf(`.host = "edge%d";`, i+1)
				if !bytes.Contains(b, []byte(host)) {
					t.Fatalf("backends.vcl has no %s", host)
				}
				b = bytes.Replace(b, []byte(host), []byte(`.host = "127.0.0.1";`), 1)
				b = bytes.Replace(b, []byte(`.port = "8080";`), []byte(fmt.Sprintf(`.port = "%d";`, p)), 1)
			}
		}
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// TestVCLCompiles compiles deploy/varnish/default.vcl (with backends.vcl)
// with varnishd -C.
func TestVCLCompiles(t *testing.T) {
	t.Parallel()
	varnishd := need(t, "varnishd")
	dir := vclDir(t, 8080, 8080)
	cmd := exec.Command(varnishd, "-C", "-j", "none", "-f", filepath.Join(dir, "default.vcl"), "-p", "vcl_path="+dir, "-n", filepath.Join(dir, "n"))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("varnishd -C: %v\n%s", err, stderr.String())
	}
}

// proc is a process the test started, stopped at its end.
type proc struct {
	name string
	cmd  *exec.Cmd
	out  *bytes.Buffer
}

func start(t *testing.T, name string, env []string, bin string, args ...string) *proc {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), env...)
	out := &bytes.Buffer{}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", name, err)
	}
	p := &proc{name: name, cmd: cmd, out: out}
	t.Cleanup(func() {
		p.stop()
		if t.Failed() {
			t.Logf("%s output:\n%s", name, out.String())
		}
	})
	return p
}

// stop ends the process (SIGTERM) and waits for it.
func (p *proc) stop() {
	if p.cmd.ProcessState != nil {
		return
	}
	p.cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan struct{})
	go func() { p.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		p.cmd.Process.Kill()
		<-done
	}
}

// reply is one HTTP answer.
type reply struct {
	status int
	header http.Header
	body   string
}

func get(t *testing.T, url, apiKey string) reply {
	t.Helper()
	req, _ := http.NewRequest("GET", url, nil)
	if apiKey != "" {
		req.Header.Set("APIKey", apiKey)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return reply{}
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return reply{status: res.StatusCode, header: res.Header, body: string(b)}
}

// waitFor polls fn every 50 ms until it reports true, for up to d.
func waitFor(t *testing.T, d time.Duration, what string, fn func() bool) {
	t.Helper()
	for deadline := time.Now().Add(d); ; time.Sleep(50 * time.Millisecond) {
		if fn() {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("waited %v for %s", d, what)
		}
	}
}

// TestVarnishInFrontOfEdges runs the shipped VCL in a real varnishd in
// front of two real edges, with an origin and a publisher whose purge
// settings are compose.yaml's: Varnish answers a second read from its
// cache; a publish purges the objects tagged with the item, and only
// those; with both edges down, Varnish serves an expired object for its
// stale-if-error, long past what it serves stale while edges are up, and
// keeps published objects for 86400 s of stale-if-error (well past 90 s).
func TestVarnishInFrontOfEdges(t *testing.T) {
	t.Parallel()
	varnishd := need(t, "varnishd")
	varnishlog := need(t, "varnishlog")
	varnishadm := need(t, "varnishadm")
	dir := t.TempDir()
	bin := filepath.Join(dir, "edgecms")
	if out, err := exec.Command("go", "build", "-o", bin, "../cmd/edgecms").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	db, dsn := pgtest.New(t)
	objects := filepath.Join(dir, "objects")
	common := []string{"DATABASE_URL=" + dsn, "EDGECMS_STORE=" + objects, "EDGECMS_PUBLIC_URL=http://127.0.0.1:" + strconv.Itoa(varnishPort),
		"EDGECMS_SECRET_KEY=" + strings.Repeat("cd", 32), "EDGECMS_EDGE_FEED_POLL=50ms"}
	admin := func(i int) string { return "EDGECMS_ADMIN_ADDR=127.0.0.1:" + strconv.Itoa(adminBase+i) }

	// The demo site, its keys.
	demo := exec.Command(bin, "demo", "--guid", "vsite")
	demo.Env = append(os.Environ(), common...)
	var stderr bytes.Buffer
	demo.Stderr = &stderr
	out, err := demo.Output()
	if err != nil {
		t.Fatalf("demo: %v\n%s", err, stderr.String())
	}
	var creds struct {
		ManagementToken string `json:"managementToken"`
		FetchKey        string `json:"fetchKey"`
	}
	if err := json.Unmarshal(out, &creds); err != nil {
		t.Fatalf("demo printed %q: %v", out, err)
	}

	varnishURL := fmt.Sprintf("http://127.0.0.1:%d", varnishPort)
	start(t, "origin", append(common, admin(0), fmt.Sprintf("EDGECMS_ADDR=127.0.0.1:%d", originPort)), bin, "origin")
	// compose.yaml's purge settings, pointed at this Varnish.
	start(t, "publisher", append(common, admin(1), "EDGECMS_PURGE_URL="+varnishURL+"/", "EDGECMS_PURGE_METHOD=PURGE",
		"EDGECMS_PURGE_HEADERS=Surrogate-Key: {{tags}}"), bin, "publisher")
	edgeEnv := func(i, port int) []string {
		return []string{"EDGECMS_STORE=" + objects, admin(i), fmt.Sprintf("EDGECMS_ADDR=127.0.0.1:%d", port),
			fmt.Sprintf("EDGECMS_ORIGIN_URL=http://127.0.0.1:%d", originPort), "EDGECMS_PUBLIC_URL=http://127.0.0.1:" + strconv.Itoa(varnishPort)}
	}
	edge1 := start(t, "edge1", edgeEnv(2, edge1Port), bin, "edge")
	edge2 := start(t, "edge2", edgeEnv(3, edge2Port), bin, "edge")
	vdir := vclDir(t, edge1Port, edge2Port)
	work := filepath.Join(dir, "varnish")
	start(t, "varnishd", nil, varnishd, "-F", "-j", "none", "-n", work, "-a", fmt.Sprintf("127.0.0.1:%d", varnishPort),
		"-T", fmt.Sprintf("127.0.0.1:%d", varnishCLI), "-f", filepath.Join(vdir, "default.vcl"), "-p", "vcl_path="+vdir, "-s", "malloc,64m")

	// Two published items of different containers, A with a title field
	// to change, B embedding nothing of A.
	a, b := pickItems(t, db)
	path := func(id int64) string { return fmt.Sprintf("/vsite/fetch/en-us/item/%d", id) }
	edgeURL := fmt.Sprintf("http://127.0.0.1:%d", edge1Port)
	waitFor(t, 60*time.Second, "the edges to serve the demo", func() bool {
		return get(t, edgeURL+path(a.id), creds.FetchKey).status == 200 &&
			get(t, fmt.Sprintf("http://127.0.0.1:%d", edge2Port)+path(b.id), creds.FetchKey).status == 200
	})
	waitFor(t, 30*time.Second, "Varnish to answer", func() bool { return get(t, varnishURL+path(a.id), creds.FetchKey).status == 200 })
	if r := get(t, edgeURL+path(b.id), creds.FetchKey); strings.Contains(" "+r.header.Get("Surrogate-Key")+" ", " vsite.en-us.i:"+strconv.FormatInt(a.id, 10)+" ") {
		t.Fatalf("item %d embeds item %d: pick another", b.id, a.id)
	}

	// 1. A hit: the second read of each comes from Varnish's cache.
	for _, id := range []int64{a.id, b.id} {
		get(t, varnishURL+path(id), creds.FetchKey)
		r := get(t, varnishURL+path(id), creds.FetchKey)
		if r.status != 200 || r.header.Get("X-Varnish-Cache") != "HIT" {
			t.Fatalf("second read of %s through Varnish = %d, X-Varnish-Cache %q, want a 200 hit", path(id), r.status, r.header.Get("X-Varnish-Cache"))
		}
	}
	// Every series the Grafana dashboard reads is served by a role.
	metricsURL := func(i int) string { return "http://127.0.0.1:" + strconv.Itoa(adminBase+i) + "/metrics" }
	checkDashboardSeries(t, metricsURL(0), metricsURL(1), metricsURL(2))
	// A key that is not the fetch key is another cache entry (and a 401).
	if r := get(t, varnishURL+path(a.id), "wrong"); r.status != 401 {
		t.Errorf("read with a wrong key through Varnish = %d %s, want 401", r.status, r.body)
	}
	before := get(t, varnishURL+path(a.id), creds.FetchKey)

	// Published objects stay for stale-if-error: the TTL record of their
	// fetch shows 30 s to live and 86400 s of grace.
	logOut, err := exec.Command(varnishlog, "-d", "-n", work, "-g", "request", "-i", "TTL,BereqURL,BerespStatus,BerespHeader").CombinedOutput()
	if err != nil {
		t.Fatalf("varnishlog: %v\n%s", err, logOut)
	}
	// Per backend fetch of a 200, the TTL the VCL left (the builtin rules
	// keep a 401's no-store as a 120 s hit-for-miss, not an object).
	ttlVCL := regexp.MustCompile(`TTL\s+VCL\s+(-?\d+)\s+(\d+)\s`)
	checked := 0
	for _, block := range strings.Split(string(logOut), "<< BeReq")[1:] {
		if !strings.Contains(block, "BerespStatus   200") {
			continue
		}
		ms := ttlVCL.FindAllStringSubmatch(block, -1)
		if len(ms) == 0 {
			t.Fatalf("no TTL VCL record in:\n%s", block)
		}
		m := ms[len(ms)-1]
		checked++
		if grace, _ := strconv.Atoi(m[2]); m[1] != "30" || grace <= 90 {
			t.Errorf("an object was cached for %s s with %s s of grace, want 30 s and a stale-if-error past 90 s:\n%s", m[1], m[2], block)
		}
	}
	if checked < 2 {
		t.Fatalf("%d fetches of a 200 in varnishlog, want the 2 items':\n%s", checked, logOut)
	}

	// 2. A purge by tag after a publish: A's new title comes through,
	// B stays cached.
	newTitle := "Varnish purged " + strconv.FormatInt(time.Now().UnixNano(), 36)
	manage(t, creds.ManagementToken, "PUT", fmt.Sprintf("/en-us/items/%d", a.id), fmt.Sprintf(`{"fields":{%q:%q}}`, a.field, newTitle))
	manage(t, creds.ManagementToken, "POST", fmt.Sprintf("/en-us/items/%d/publish", a.id), "")
	// The edges first (they learn of it from the store's feed), then
	// Varnish, which keeps the old copy until the publisher's purge.
	waitFor(t, 30*time.Second, "the edges to serve the new title", func() bool {
		return strings.Contains(get(t, edgeURL+path(a.id), creds.FetchKey).body, newTitle)
	})
	var fresh reply
	waitFor(t, 30*time.Second, "Varnish to serve the new title after the purge", func() bool {
		fresh = get(t, varnishURL+path(a.id), creds.FetchKey)
		return strings.Contains(fresh.body, newTitle)
	})
	// Purged, not expired: the first answer with the new title was
	// fetched from an edge (once expired, Varnish would have answered its
	// stale copy first, then a hit refreshed in the background).
	if fresh.header.Get("X-Varnish-Cache") != "MISS" {
		t.Errorf("the first answer with the new title: X-Varnish-Cache %q, want a miss after a purge", fresh.header.Get("X-Varnish-Cache"))
	}
	if r := get(t, varnishURL+path(b.id), creds.FetchKey); r.header.Get("X-Varnish-Cache") != "HIT" {
		t.Errorf("%s after the purge of item %d: X-Varnish-Cache %q, want a hit: the purge went beyond the item's tags", path(b.id), a.id, r.header.Get("X-Varnish-Cache"))
	}
	if before.body == get(t, varnishURL+path(a.id), creds.FetchKey).body {
		t.Errorf("the body did not change")
	}
	// Purges Varnish refuses.
	for _, h := range []string{"", "vsite.en-us.i:1 (.*)"} {
		req, _ := http.NewRequest("PURGE", varnishURL+"/", nil)
		if h != "" {
			req.Header.Set("Surrogate-Key", h)
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != 400 {
			t.Errorf("PURGE with Surrogate-Key %q = %d, want 400", h, res.StatusCode)
		}
	}

	// 3. Stale-if-error: an object that expires after 1 s, served again
	// while both edges are down, past the 60 s Varnish serves stale while
	// they are up.
	req, err := fetch.Parse(fetch.Input{Path: "/vsite/fetch/en-us/item/999999"})
	if err != nil {
		t.Fatal(err)
	}
	st, err := store.Open(context.Background(), objects, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	const shortLived = `{"contentID":999999,"note":"expires in a second"}`
	if _, err := st.Put(context.Background(), store.Object{Key: req.Key(), Body: []byte(shortLived), ContentType: "application/json; charset=utf-8",
		CacheControl: "public, max-age=0, s-maxage=1, stale-while-revalidate=1, stale-if-error=86400", Tags: []string{"vsite.en-us.i:999999"}}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 10*time.Second, "Varnish to cache the short-lived object", func() bool {
		return get(t, varnishURL+"/vsite/fetch/en-us/item/999999", creds.FetchKey).body == shortLived
	})
	cached := time.Now()
	edge1.stop()
	edge2.stop()
	waitFor(t, 20*time.Second, "Varnish to see both edges down", func() bool {
		out, _ := exec.Command(varnishadm, "-n", work, "backend.list").CombinedOutput()
		return strings.Count(string(out), "sick") >= 2
	})
	if r := get(t, varnishURL+"/vsite/fetch/en-us/item/1234567", creds.FetchKey); r.status != 503 {
		t.Errorf("an object never cached, with the edges down = %d, want 503", r.status)
	}
	time.Sleep(time.Until(cached.Add(62 * time.Second)))
	for _, p := range []string{"/vsite/fetch/en-us/item/999999", path(a.id), path(b.id)} {
		r := get(t, varnishURL+p, creds.FetchKey)
		if r.status != 200 || r.body == "" {
			t.Errorf("%s with both edges down = %d %.100s, want the cached object", p, r.status, r.body)
		}
	}
}

// item is a published item of the demo.
type item struct {
	id    int64
	field string // a text field of its model
}

// pickItems returns two published items of different containers: the
// first with a text field named title (in any case), the second linking
// to no item, and not linked from the first.
func pickItems(t *testing.T, db *sqlx.DB) (item, item) {
	t.Helper()
	var rows []struct {
		ID        int64  `db:"content_id"`
		Container string `db:"reference_name"`
		Title     string `db:"title"`
		Fields    []byte `db:"fields"`
	}
	err := db.Select(&rows, `SELECT i.content_id, c.reference_name,
			coalesce((SELECT f->>'name' FROM jsonb_array_elements(m.fields) f
				WHERE lower(f->>'name') = 'title' AND f->>'type' = 'text' LIMIT 1), '') AS title,
			ic.published_fields AS fields
		FROM items i JOIN containers c ON c.id = i.container_id JOIN models m ON m.id = i.model_id
		JOIN item_copies ic ON ic.content_id = i.content_id AND ic.locale = 'en-us'
		WHERE ic.published_version_id IS NOT NULL ORDER BY i.content_id`)
	if err != nil {
		t.Fatal(err)
	}
	links := func(fields []byte) map[int64]bool {
		var vals map[string]any
		json.Unmarshal(fields, &vals)
		out := map[int64]bool{}
		for _, v := range vals {
			m, _ := v.(map[string]any)
			if id, ok := m["contentID"].(float64); ok {
				out[int64(id)] = true
			}
			ids, _ := m["contentIDs"].([]any)
			for _, id := range ids {
				if f, ok := id.(float64); ok {
					out[int64(f)] = true
				}
			}
		}
		return out
	}
	for _, x := range rows {
		if x.Title == "" {
			continue
		}
		for _, y := range rows {
			if y.Container != x.Container && len(links(y.Fields)) == 0 && !links(x.Fields)[y.ID] {
				return item{id: x.ID, field: x.Title}, item{id: y.ID}
			}
		}
	}
	t.Fatalf("no two unrelated published items in the demo")
	return item{}, item{}
}

// manage sends a management request to the origin and wants a 2xx.
func manage(t *testing.T, token, method, path, body string) {
	t.Helper()
	req, _ := http.NewRequest(method, fmt.Sprintf("http://127.0.0.1:%d/api/v1/instance/vsite%s", originPort, path), strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+token)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	if res.StatusCode/100 != 2 {
		t.Fatalf("%s %s = %d %s", method, path, res.StatusCode, b)
	}
}
