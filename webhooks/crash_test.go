package webhooks

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"sync"
	"testing"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/edgecms/edgecms/content"
	"github.com/edgecms/edgecms/internal/pgtest"
	"github.com/edgecms/edgecms/webhooks/signature"
)

// crashEnv names the variable that turns TestCrashChild into a dispatcher
// process for TestCrash: the database URL it dispatches from.
const crashEnv = "EDGECMS_WEBHOOKS_CRASH_DSN"

// crashLease is the lease of both dispatchers of TestCrash: the deliveries
// the killed one had claimed are attempted again when it ends.
const crashLease = 3 * time.Second

// TestCrashChild is the dispatcher process TestCrash kills; it does nothing
// in a normal test run.
func TestCrashChild(t *testing.T) {
	dsn := os.Getenv(crashEnv)
	if dsn == "" {
		t.Skip("run by TestCrash only")
	}
	db, err := sqlx.Open("postgres", dsn)
	if err != nil {
		t.Fatal(err)
	}
	s, err := NewStore(db, Options{Key: testKey, Policy: loopback()})
	if err != nil {
		t.Fatal(err)
	}
	d := NewDispatcher(s, DispatcherConfig{Lease: crashLease, Workers: 32}, slog.New(slog.NewTextHandler(os.Stderr, nil)))
	d.Run(context.Background()) // until killed
}

// TestCrash kills a dispatcher process (SIGKILL) in the middle of a few
// thousand deliveries, starts another, and checks that every delivery
// arrived at least once, verified, and that duplicates carry the same
// webhook-id.
func TestCrash(t *testing.T) {
	if os.Getenv(crashEnv) != "" {
		t.Skip("in the child")
	}
	const deliveries = 3000
	db, dsn := pgtest.New(t)
	cs := content.NewStore(db)
	ctx := context.Background()
	inst, err := cs.CreateInstance(ctx, "crash", []content.Locale{{Code: "en-us", Name: "English"}})
	if err != nil {
		t.Fatal(err)
	}
	store, err := NewStore(db, Options{Key: testKey, Policy: loopback()})
	if err != nil {
		t.Fatal(err)
	}

	type receipt struct {
		id        string
		contentID int64
	}
	var (
		mu       sync.Mutex
		receipts []receipt
		bad      []string
	)
	var secret string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		time.Sleep(2 * time.Millisecond) // a little work, so that attempts are in flight at the kill
		var p struct {
			ContentID int64 `json:"contentID"`
		}
		json.Unmarshal(body, &p)
		mu.Lock()
		defer mu.Unlock()
		if err := signature.Verify([]string{secret}, r.Header, body, time.Now()); err != nil {
			bad = append(bad, err.Error())
		}
		receipts = append(receipts, receipt{r.Header.Get("webhook-id"), p.ContentID})
	}))
	defer srv.Close()
	url := srv.URL + "/hook"
	w, _, err := store.Save(ctx, inst, Input{URL: &url, ContentSaveEvents: ptr(true), SecureDeliveryEnabled: ptr(true)})
	if err != nil {
		t.Fatal(err)
	}
	secret = w.SigningSecret
	if _, err := db.Exec(`INSERT INTO events (instance_id, instance_guid, state, subject, locale, reference_name,
		content_id, version_id, change_date)
		SELECT $1, 'crash', 'Saved', 'item', 'en-us', 'Articles', g, g, now() FROM generate_series(1, $2) g`,
		inst.ID, deliveries); err != nil {
		t.Fatal(err)
	}
	received := func() int {
		mu.Lock()
		defer mu.Unlock()
		return len(receipts)
	}

	child := exec.Command(os.Args[0], "-test.run=^TestCrashChild$", "-test.count=1")
	child.Env = append(os.Environ(), crashEnv+"="+dsn)
	child.Stderr = testWriter{t}
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(2 * time.Minute)
	for received() < deliveries/3 {
		if time.Now().After(deadline) {
			child.Process.Kill()
			t.Fatalf("the child dispatcher delivered %d in two minutes", received())
		}
		time.Sleep(time.Millisecond)
	}
	if err := child.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	child.Wait()
	atKill := received()
	var leased int
	db.Get(&leased, `SELECT count(*) FROM webhook_deliveries WHERE lease_owner IS NOT NULL`)
	t.Logf("killed the dispatcher after %d receipts, with %d deliveries claimed", atKill, leased)
	if atKill >= deliveries {
		t.Fatalf("the child delivered everything before the kill; the test proves nothing")
	}

	d := NewDispatcher(store, DispatcherConfig{Lease: crashLease}, slog.New(slog.NewTextHandler(testWriter{t}, nil)))
	runFor(t, d, func() bool {
		var n int
		db.Get(&n, `SELECT count(*) FROM webhook_deliveries WHERE status = 'succeeded'`)
		return n == deliveries
	})

	mu.Lock()
	defer mu.Unlock()
	var ids []string
	if err := db.Select(&ids, `SELECT id FROM webhook_deliveries`); err != nil {
		t.Fatal(err)
	}
	if len(ids) != deliveries {
		t.Fatalf("%d deliveries queued, want %d (one per event)", len(ids), deliveries)
	}
	got := map[string]int{}
	idOf := map[int64]string{}
	for _, r := range receipts {
		got[r.id]++
		if prev, ok := idOf[r.contentID]; ok && prev != r.id {
			t.Errorf("content %d arrived under webhook-ids %s and %s", r.contentID, prev, r.id)
		}
		idOf[r.contentID] = r.id
	}
	for _, id := range ids {
		if got[id] == 0 {
			t.Errorf("delivery %s never arrived", id)
		}
	}
	dups := len(receipts) - len(got)
	t.Logf("%d receipts for %d deliveries: %d duplicates, each under its delivery's webhook-id", len(receipts), deliveries, dups)
	if len(bad) > 0 {
		t.Errorf("%d receipts did not verify, first: %s", len(bad), bad[0])
	}
}
