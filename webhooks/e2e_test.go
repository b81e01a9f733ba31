package webhooks_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/edgecms/edgecms/content"
	"github.com/edgecms/edgecms/internal/pgtest"
	"github.com/edgecms/edgecms/origin"
	"github.com/edgecms/edgecms/webhooks"
	"github.com/edgecms/edgecms/webhooks/egress"
)

// nodeReceiver is scripts/compat/webhook-receiver.js: an endpoint that
// verifies each delivery with the npm standardwebhooks package.
type nodeReceiver struct {
	t        *testing.T
	url      string
	stdin    io.WriteCloser
	receipts chan receipt
	acks     chan int
	controls int
}

// receipt is what the node receiver reports of one request.
type receipt struct {
	Method      string   `json:"method"`
	ContentType string   `json:"contentType"`
	ID          string   `json:"id"`
	Timestamp   string   `json:"timestamp"`
	Signature   string   `json:"signature"`
	Body        string   `json:"body"`
	Verified    []bool   `json:"verified"`
	Errors      []string `json:"errors"`
	Status      int      `json:"status"`
}

func startNodeReceiver(t *testing.T) *nodeReceiver {
	t.Helper()
	_, file, _, _ := runtime.Caller(0)
	dir := filepath.Join(filepath.Dir(file), "..", "scripts", "compat")
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "standardwebhooks")); err != nil {
		t.Fatalf("the npm package standardwebhooks is not installed: run scripts/test.sh (or npm ci in scripts/compat): %v", err)
	}
	cmd := exec.Command("node", "webhook-receiver.js")
	cmd.Dir = dir
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("node webhook-receiver.js: %v", err)
	}
	t.Cleanup(func() { stdin.Close(); cmd.Wait() })
	r := &nodeReceiver{t: t, stdin: stdin, receipts: make(chan receipt, 100), acks: make(chan int, 10)}
	ports := make(chan int, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			var line struct {
				Port *int `json:"port"`
				Ack  *int `json:"ack"`
				receipt
			}
			if err := json.Unmarshal(sc.Bytes(), &line); err != nil {
				continue
			}
			switch {
			case line.Port != nil:
				ports <- *line.Port
			case line.Ack != nil:
				r.acks <- *line.Ack
			default:
				r.receipts <- line.receipt
			}
		}
	}()
	select {
	case p := <-ports:
		r.url = fmt.Sprintf("http://127.0.0.1:%d/hook", p)
	case <-time.After(30 * time.Second):
		t.Fatal("the node receiver did not start")
	}
	return r
}

// control sends a control line and waits for its acknowledgement.
func (r *nodeReceiver) control(v any) {
	r.t.Helper()
	b, _ := json.Marshal(v)
	if _, err := r.stdin.Write(append(b, '\n')); err != nil {
		r.t.Fatal(err)
	}
	r.controls++
	for {
		select {
		case n := <-r.acks:
			if n == r.controls {
				return
			}
		case <-time.After(30 * time.Second):
			r.t.Fatal("the node receiver did not acknowledge")
		}
	}
}

// next waits for the next request the receiver got.
func (r *nodeReceiver) next() receipt {
	r.t.Helper()
	select {
	case rc := <-r.receipts:
		return rc
	case <-time.After(time.Minute):
		r.t.Fatal("no delivery arrived within a minute")
	}
	return receipt{}
}

// api is the management API of a real origin, as a client sees it.
type api struct {
	t     *testing.T
	base  string
	token string
}

func (a api) call(method, path string, body any, want int) map[string]any {
	a.t.Helper()
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, _ := http.NewRequest(method, a.base+path, rd)
	req.Header.Set("Authorization", "Bearer "+a.token)
	req.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		a.t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	if res.StatusCode != want {
		a.t.Fatalf("%s %s = %d %s, want %d", method, path, res.StatusCode, b, want)
	}
	var m map[string]any
	json.Unmarshal(b, &m)
	return m
}

// TestEndToEnd drives a real origin and dispatcher through the management
// API and checks every delivery with the npm standardwebhooks package in a
// real receiver, across a secret rotation: one signature before, two during
// the overlap (each verifying alone), one after it; a delivery the receiver
// refuses is retried and redelivered under the same webhook-id; history
// records match what arrived.
func TestEndToEnd(t *testing.T) {
	t.Parallel()
	rcv := startNodeReceiver(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	db, _ := pgtest.New(t)
	cs := content.NewStore(db)
	inst, err := cs.CreateInstance(ctx, "e2e", []content.Locale{{Code: "en-us", Name: "English"}})
	if err != nil {
		t.Fatal(err)
	}
	_, token, err := cs.CreateToken(ctx, inst, "e2e", content.RoleFull)
	if err != nil {
		t.Fatal(err)
	}
	wh, err := webhooks.NewStore(db, webhooks.Options{Key: bytes.Repeat([]byte{3}, webhooks.KeySize),
		Policy: egress.NewPolicy(netip.MustParsePrefix("127.0.0.1/32"))})
	if err != nil {
		t.Fatal(err)
	}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	srv := origin.New(origin.Config{Webhooks: wh}, cs, log)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go srv.App().Listener(ln)
	defer srv.Shutdown(context.Background())
	// No publisher runs here, so Published and Deleted are not held for
	// confirmation (TestConfirmation covers that gate).
	d := webhooks.NewDispatcher(wh, webhooks.DispatcherConfig{Poll: 10 * time.Millisecond}, log)
	stopped := make(chan struct{})
	go func() { d.Run(ctx); close(stopped) }()
	defer func() { cancel(); <-stopped }()
	a := api{t: t, base: "http://" + ln.Addr().String() + "/api/v1/instance/e2e", token: token}

	a.call("POST", "/models", map[string]any{"name": "Article", "kind": "content", "fields": []map[string]any{{"name": "title", "type": "text"}}}, 201)
	a.call("POST", "/containers", map[string]any{"referenceName": "articles", "model": "Article"}, 201)
	hook := a.call("POST", "/webhook", map[string]any{"name": "e2e", "url": rcv.url, "contentPublishEvents": true,
		"contentSaveEvents": true, "contentWorkflowEvents": true, "secureDeliveryEnabled": true, "retriesEnabled": true, "retrySpeed": "fast"}, 201)
	id, s1 := hook["rowKey"].(string), hook["signingSecret"].(string)
	rcv.control(map[string]any{"secrets": []string{s1}})

	var got []receipt
	expect := func(state string, signatures int, verified ...bool) receipt {
		t.Helper()
		r := rcv.next()
		got = append(got, r)
		var p map[string]any
		json.Unmarshal([]byte(r.Body), &p)
		if p["state"] != state || p["instanceGuid"] != "e2e" || r.Method != "POST" || r.ContentType != "application/json" {
			t.Errorf("got %s %s %s, want a POST of application/json, state %s: %+v", r.Method, r.ContentType, r.Body, state, r)
		}
		if n := len(strings.Fields(r.Signature)); n != signatures {
			t.Errorf("%s: %d signatures (%s), want %d", state, n, r.Signature, signatures)
		}
		if fmt.Sprint(r.Verified) != fmt.Sprint(verified) {
			t.Errorf("%s: standardwebhooks verified %v with the secrets (errors %q), want %v", state, r.Verified, r.Errors, verified)
		}
		return r
	}

	item := a.call("POST", "/en-us/items", map[string]any{"referenceName": "articles", "fields": map[string]any{"title": "One"}}, 201)
	path := fmt.Sprintf("/en-us/items/%v", item["contentID"])
	expect("Saved", 1, true)
	a.call("POST", path+"/request-approval", nil, 200)
	expect("AwaitingApproval", 1, true)
	a.call("POST", path+"/approve", nil, 200)
	expect("Approved", 1, true)
	a.call("POST", path+"/publish", nil, 200)
	expect("Published", 1, true)

	rot := a.call("POST", "/webhook/"+id+"/rotate-secret", nil, 200)
	s2 := rot["signingSecret"].(string)
	rcv.control(map[string]any{"secrets": []string{s1, s2}})
	a.call("PUT", path, map[string]any{"fields": map[string]any{"title": "Two"}}, 200)
	expect("Saved", 2, true, true)
	a.call("POST", path+"/unpublish", nil, 200)
	expect("Deleted", 2, true, true)

	// The overlap ends: 24 hours pass for the rotation.
	if _, err := db.Exec(`UPDATE webhooks SET secret_rolled_at = secret_rolled_at - interval '24 hours'`); err != nil {
		t.Fatal(err)
	}
	a.call("PUT", path, map[string]any{"fields": map[string]any{"title": "Three"}}, 200)
	expect("Saved", 1, false, true)

	// A receiver that only knows the old secret refuses the delivery (401):
	// it is retried later; redelivered now once the receiver knows the new
	// secret, under the same webhook-id.
	rcv.control(map[string]any{"secrets": []string{s1}})
	a.call("PUT", path, map[string]any{"fields": map[string]any{"title": "Four"}}, 200)
	refused := expect("Saved", 1, false)
	if refused.Status != 401 {
		t.Errorf("receiver answered %d, want 401", refused.Status)
	}
	var rec map[string]any
	for deadline := time.Now().Add(time.Minute); ; {
		rec = a.call("GET", "/webhook/"+id+"/history?take=1", nil, 200)["items"].([]any)[0].(map[string]any)
		if rec["status"] != "queued" || time.Now().After(deadline) {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	if rec["rowKey"] != refused.ID || rec["httpResponseCode"] != float64(401) || rec["status"] != "retrying" ||
		rec["nextAttemptUtc"] == nil || rec["success"] != false || rec["sendDate"] != nil {
		t.Errorf("refused delivery's record %v, want 401 and a retry pending", rec)
	}
	rcv.control(map[string]any{"secrets": []string{s2}})
	a.call("POST", "/webhook/"+id+"/history/"+refused.ID+"/redeliver", nil, 202)
	again := expect("Saved", 1, true)
	if again.ID != refused.ID || again.Body != refused.Body {
		t.Errorf("redelivery %+v of %+v: want the same id and body", again, refused)
	}

	test := a.call("POST", "/webhook/"+id+"/test", nil, 200)
	tr := expect("Test", 1, true)
	if test["rowKey"] != tr.ID || test["success"] != true {
		t.Errorf("test delivery record %v for webhook-id %s", test, tr.ID)
	}

	// The history has one record per delivery, its rowKey the webhook-id.
	hist := a.call("GET", "/webhook/"+id+"/history?take=100", nil, 200)["items"].([]any)
	byID := map[string]map[string]any{}
	for _, h := range hist {
		m := h.(map[string]any)
		byID[m["rowKey"].(string)] = m
	}
	for _, r := range got {
		m, ok := byID[r.ID]
		if !ok {
			t.Errorf("no history record for webhook-id %s", r.ID)
			continue
		}
		if m["payload"] != r.Body || m["signed"] != true {
			t.Errorf("record %s: payload %v signed %v; want the body received, signed", r.ID, m["payload"], m["signed"])
		}
	}
	if len(hist) != len(got)-1 { // the redelivery is the refused delivery's record
		t.Errorf("history has %d records for %d receipts", len(hist), len(got))
	}
	select {
	case r := <-rcv.receipts:
		t.Errorf("unexpected delivery %+v", r)
	default:
	}
}
