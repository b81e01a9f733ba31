package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/edgecms/edgecms/content"
	"github.com/edgecms/edgecms/internal/cmdtest"
	"github.com/edgecms/edgecms/internal/pgtest"
	"github.com/edgecms/edgecms/publisher"
	"github.com/edgecms/edgecms/store"
)

// TestVerifyCommand runs the built binary: "edgecms verify" exits 0 on a
// freshly published instance (a new one, with no page yet, included), and
// 1 with a line per object once an object is changed, deleted or added
// behind the publisher's back.
func TestVerifyCommand(t *testing.T) {
	t.Parallel()
	db, url := pgtest.New(t)
	ctx := context.Background()
	dir := t.TempDir()
	objects := filepath.Join(dir, "objects")
	bin := cmdtest.Binary(t)
	cs := content.NewStore(db)
	inst, err := cs.CreateInstance(ctx, "acme", []content.Locale{{Code: "en-us", Name: "English"}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cs.CreateModel(ctx, inst, content.Model{Name: "Post", Kind: "content",
		Fields: content.Fields{{Name: "Title", Type: content.TypeText}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := cs.CreateContainer(ctx, inst, "posts", "Post"); err != nil {
		t.Fatal(err)
	}
	var ids []int64
	for _, title := range []string{"One", "Two"} {
		st, err := cs.CreateItem(ctx, inst, "en-us", "posts", map[string]json.RawMessage{"Title": json.RawMessage(`"` + title + `"`)})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := cs.ItemAction(ctx, inst, "en-us", st.ContentID, content.ActionPublish); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, st.ContentID)
	}
	st, err := store.Open(ctx, objects, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := loadConfig(flag.NewFlagSet("test", flag.ContinueOnError), []string{"--database-url", url, "--store", objects})
	if err != nil {
		t.Fatal(err)
	}
	pub, err := newPublisher(ctx, cfg, newContentStore(db, cfg), slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	defer pub.Close()
	if err := pub.Drain(ctx); err != nil {
		t.Fatal(err)
	}

	run := func() (string, string, int) {
		cmd := exec.Command(bin, "verify", "--guid", "acme")
		cmd.Env = append(os.Environ(), "DATABASE_URL="+url, "EDGECMS_STORE="+objects)
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		var exit *exec.ExitError
		switch {
		case errors.As(err, &exit):
			return stdout.String(), stderr.String(), exit.ExitCode()
		case err != nil:
			t.Fatal(err)
		}
		return stdout.String(), stderr.String(), 0
	}
	if out, errOut, code := run(); code != 0 || out != "" {
		t.Fatalf("verify after a publish: exit %d, stdout %q, stderr %q; want 0 and nothing listed", code, out, errOut)
	}

	key := "acme/fetch/en-us/item/" + strconv.FormatInt(ids[0], 10)
	var itemKey string
	err = st.List(ctx, key, func(i store.Info) error { itemKey = i.Key; return nil })
	if err != nil || itemKey == "" {
		t.Fatalf("no object under %s: %v", key, err)
	}
	o, err := st.Get(ctx, itemKey)
	if err != nil {
		t.Fatal(err)
	}
	o.Body = append([]byte(nil), bytes.Replace(o.Body, []byte(`"One"`), []byte(`"Uno"`), 1)...)
	if _, err := st.Put(ctx, o); err != nil {
		t.Fatal(err)
	}
	var gone string
	err = st.List(ctx, "acme/fetch/en-us/item/"+strconv.FormatInt(ids[1], 10), func(i store.Info) error { gone = i.Key; return nil })
	if err != nil || gone == "" {
		t.Fatalf("no object of item %d: %v", ids[1], err)
	}
	if err := st.Delete(ctx, gone); err != nil {
		t.Fatal(err)
	}
	extra := strings.Replace(itemKey, "/item/"+strconv.FormatInt(ids[0], 10), "/item/987654", 1)
	o.Key = extra
	if _, err := st.Put(ctx, o); err != nil {
		t.Fatal(err)
	}

	out, errOut, code := run()
	if code != 1 {
		t.Errorf("verify after tampering: exit %d, want 1 (stderr %q)", code, errOut)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	want := map[string]string{itemKey: publisher.Differs, gone: publisher.Missing, extra: publisher.Extra}
	for _, l := range lines {
		f := strings.Split(l, "\t")
		if len(f) != 4 || want[f[1]] != f[0] {
			t.Errorf("unexpected line %q", l)
			continue
		}
		delete(want, f[1])
	}
	if len(want) != 0 {
		t.Errorf("verify did not list %v; it printed:\n%s", want, out)
	}
	if !strings.Contains(errOut, "1 of") || !strings.Contains(errOut, "1 are missing, 1 are extra") {
		t.Errorf("stderr %q does not count the mismatches", errOut)
	}
}
