package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/edgecms/edgecms/internal/cmdtest"
	"github.com/edgecms/edgecms/internal/pgtest"
	"github.com/edgecms/edgecms/store"
)

// TestExportImportCommands runs the built binary as an operator would:
// demo and republish on one database and store, export to a .tar.gz,
// import into a fresh database and store with and without a new guid.
// The import renders every object (the same bytes as the original's, the
// new guid in place of the old) and publishes the keys, so that edgecms
// serve on the new database answers the original fetch key at once, with
// no republish by hand. A bad command line fails with a one-line reason.
func TestExportImportCommands(t *testing.T) {
	t.Parallel()
	bin := cmdtest.Binary(t)
	type env struct {
		dsn, objects string
	}
	newEnv := func() env {
		_, dsn := pgtest.New(t)
		return env{dsn: dsn, objects: t.TempDir()}
	}
	run := func(e env, extra []string, args ...string) (string, string, error) {
		cmd := exec.Command(bin, args...)
		cmd.Env = append(os.Environ(), "DATABASE_URL="+e.dsn, "EDGECMS_STORE="+e.objects,
			"EDGECMS_PUBLIC_URL=https://cdn.example", "EDGECMS_SECRET_KEY="+strings.Repeat("ab", 32))
		cmd.Env = append(cmd.Env, extra...)
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		return stdout.String(), stderr.String(), err
	}
	src := newEnv()
	out, errOut, err := run(src, nil, "demo", "--guid", "acme")
	if err != nil {
		t.Fatalf("demo: %v\n%s", err, errOut)
	}
	var creds credentials
	if err := json.Unmarshal([]byte(out), &creds); err != nil {
		t.Fatalf("demo printed %q: %v", out, err)
	}
	if _, errOut, err := run(src, nil, "republish", "--guid", "acme"); err != nil {
		t.Fatalf("republish: %v\n%s", err, errOut)
	}
	file := filepath.Join(t.TempDir(), "acme.tar.gz")
	if _, errOut, err := run(src, nil, "export", "--guid", "acme", "--out", file); err != nil {
		t.Fatalf("export: %v\n%s", err, errOut)
	}
	if b, err := os.ReadFile(file); err != nil || len(b) < 2 || b[0] != 0x1f || b[1] != 0x8b {
		t.Fatalf("export wrote no gzip file at %s (%v)", file, err)
	}
	original := objectsOf(t, src.objects, "acme/")

	for _, c := range []struct{ guid, port string }{{"", "25511"}, {"acme-copy", "25512"}} {
		dst := newEnv()
		// The contract's form (--file) and the short one (the file as
		// the argument).
		args := []string{"import", file}
		guid := "acme"
		if c.guid != "" {
			args = []string{"import", "--file", file, "--guid", c.guid}
			guid = c.guid
		}
		out, errOut, err := run(dst, nil, args...)
		if err != nil {
			t.Fatalf("import %v: %v\n%s", args, err, errOut)
		}
		var sum struct {
			Guid string           `json:"guid"`
			Rows map[string]int64 `json:"rows"`
		}
		if err := json.Unmarshal([]byte(out), &sum); err != nil || sum.Guid != guid || sum.Rows["items"] == 0 {
			t.Errorf("import printed %q (%v), want its summary", out, err)
		}
		got := objectsOf(t, dst.objects, guid+"/")
		if len(got) != len(original) {
			t.Errorf("import --guid %q rendered %d objects, the original has %d", c.guid, len(got), len(original))
		}
		for k, want := range original {
			want = strings.ReplaceAll(strings.ReplaceAll(want, "acme/assets/", guid+"/assets/"), " acme.", " "+guid+".")
			if g := got[strings.Replace(k, "acme/", guid+"/", 1)]; g != want {
				t.Errorf("object %s after import --guid %q:\n got %.300q\nwant %.300q", k, c.guid, g, want)
			}
		}

		// serve on the imported database answers the original key.
		ctx, cancel := context.WithCancel(context.Background())
		cmd := exec.CommandContext(ctx, bin, "serve")
		cmd.Env = append(os.Environ(), "DATABASE_URL="+dst.dsn, "EDGECMS_STORE="+dst.objects, "EDGECMS_ADDR=127.0.0.1:"+c.port,
			"EDGECMS_PUBLIC_URL=https://cdn.example", "EDGECMS_SECRET_KEY="+strings.Repeat("ab", 32))
		var log bytes.Buffer
		cmd.Stdout, cmd.Stderr = &log, &log
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		url := "http://127.0.0.1:" + c.port + "/" + guid + "/fetch/en-us/sitemap/flat/website"
		var status int
		var body []byte
		for deadline := time.Now().Add(40 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
			req, _ := http.NewRequest("GET", url, nil)
			req.Header.Set("APIKey", creds.FetchKey)
			res, err := http.DefaultClient.Do(req)
			if err != nil {
				continue
			}
			body, _ = io.ReadAll(res.Body)
			res.Body.Close()
			if status = res.StatusCode; status == 200 {
				break
			}
		}
		want := original["acme/fetch/en-us/sitemap/flat/website.json"]
		if status != 200 || !strings.HasSuffix(want, "\n"+string(body)) {
			t.Errorf("GET %s with the original fetch key = %d %.200s, want the original sitemap\n%s", url, status, body, log.String())
		}
		preview, _ := http.NewRequest("GET", strings.Replace(url, "/fetch/", "/preview/", 1), nil)
		preview.Header.Set("APIKey", creds.PreviewKey)
		if res, err := http.DefaultClient.Do(preview); err != nil || res.StatusCode != 200 {
			t.Errorf("preview with the original preview key: %v %v", res, err)
		} else {
			res.Body.Close()
		}
		cancel()
		cmd.Wait()
	}

	// Bad command lines: a one-line reason, no archive left behind.
	failed := filepath.Join(t.TempDir(), "x.tar")
	for _, args := range [][]string{
		{"export"},
		{"export", "--guid", "nosuch", "-o", failed},
		{"import"},
		{"import", file, "--guid", "x"},
		{"import", filepath.Join(t.TempDir(), "missing.tar")},
		{"export", "--bogus"},
		{"import", "--bogus"},
	} {
		_, errOut, err := run(src, nil, args...)
		if err == nil {
			t.Errorf("%v succeeded", args)
			continue
		}
		if lines := strings.Count(strings.TrimSpace(errOut), "\n"); lines > 0 && !strings.Contains(strings.Join(args, " "), "bogus") {
			t.Errorf("%v: %d lines on stderr, want one: %s", args, lines+1, errOut)
		}
	}
	if left, _ := filepath.Glob(filepath.Join(filepath.Dir(failed), "*")); len(left) > 0 {
		t.Errorf("a failed export left %v", left)
	}
}

// objectsOf returns every object below prefix in the folder store at dir,
// as its content type, tags and body.
func objectsOf(t *testing.T, dir, prefix string) map[string]string {
	t.Helper()
	ctx := context.Background()
	st, err := store.Open(ctx, dir, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	var keys []string
	st.List(ctx, prefix, func(i store.Info) error { keys = append(keys, i.Key); return nil })
	for _, k := range keys {
		o, err := st.Get(ctx, k)
		if err != nil {
			t.Fatal(err)
		}
		out[k] = o.ContentType + " " + o.CacheControl + " " + strings.Join(o.Tags, " ") + "\n" + string(o.Body)
	}
	return out
}
