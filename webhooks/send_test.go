package webhooks

import (
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/edgecms/edgecms/webhooks/signature"
)

func TestDelay(t *testing.T) {
	t.Parallel()
	const h = time.Hour
	tests := []struct {
		speed Speed
		n     int
		r     float64
		want  time.Duration
	}{
		{SpeedFast, 1, 0.5, 30 * time.Second},
		{SpeedFast, 2, 0.5, 2 * time.Minute},
		{SpeedFast, 3, 0.5, 8 * time.Minute},
		{SpeedFast, 8, 0.5, 30 * time.Second * 16384}, // 136.5 h before the cap
		{SpeedStandard, 1, 0.5, 5 * time.Minute},
		{SpeedStandard, 2, 0.5, 20 * time.Minute},
		{SpeedStandard, 5, 0.5, 5 * time.Minute * 256},
		{SpeedSlow, 1, 0.5, 30 * time.Minute},
		{SpeedSlow, 2, 0.5, 2 * h},
		{SpeedSlow, 3, 0.5, 8 * h},
		{SpeedSlow, 4, 0.5, MaxDelay}, // 32 h, capped
		{SpeedSlow, 8, 0.5, MaxDelay},
		// Jitter: 0.8x to 1.2x, never over the cap.
		{SpeedFast, 1, 0, 24 * time.Second},
		{SpeedFast, 1, 0.999999999, 36 * time.Second},
		{SpeedStandard, 1, 0.25, 4*time.Minute + 30*time.Second},
		{SpeedSlow, 3, 0.999999999, 9*h + 36*time.Minute},
		{SpeedSlow, 4, 0.999999999, MaxDelay},
		{SpeedSlow, 4, 0, MaxDelay * 8 / 10},
	}
	for _, tt := range tests {
		got := Delay(tt.speed, tt.n, tt.r)
		if tt.want > MaxDelay {
			tt.want = MaxDelay
		}
		if d := got - tt.want; d < -time.Millisecond || d > time.Millisecond {
			t.Errorf("Delay(%s, %d, %v) = %v, want %v", tt.speed, tt.n, tt.r, got, tt.want)
		}
	}
}

func TestHonourRetryAfter(t *testing.T) {
	t.Parallel()
	const m = time.Minute
	tests := []struct {
		scheduled, retryAfter, want time.Duration
	}{
		{5 * m, 0, 5 * m},                          // none
		{5 * m, 1 * m, 5 * m},                      // shorter than scheduled: scheduled
		{5 * m, 7 * m, 7 * m},                      // within: as asked
		{5 * m, 10 * m, 10 * m},                    // at twice
		{5 * m, 60 * m, 10 * m},                    // longer: twice scheduled
		{20 * time.Hour, 30 * time.Hour, MaxDelay}, // never over the cap
	}
	for _, tt := range tests {
		if got := honour(tt.scheduled, tt.retryAfter); got != tt.want {
			t.Errorf("honour(%v, %v) = %v, want %v", tt.scheduled, tt.retryAfter, got, tt.want)
		}
	}
}

func TestParseRetryAfter(t *testing.T) {
	t.Parallel()
	now := time.Date(2030, 1, 1, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		in   string
		want time.Duration
	}{
		{"", 0},
		{"120", 2 * time.Minute},
		{" 7 ", 7 * time.Second},
		{"0", 0},
		{"-5", 0},
		{"soon", 0},
		{"999999999999", MaxDelay},
		{now.Add(90 * time.Second).Format(http.TimeFormat), 90 * time.Second},
		{now.Add(-time.Hour).Format(http.TimeFormat), 0},
	}
	for _, tt := range tests {
		if got := parseRetryAfter(tt.in, now); got != tt.want {
			t.Errorf("parseRetryAfter(%q) = %v, want %v", tt.in, got, tt.want)
		}
	}
}

// TestRetrySchedule follows one failing delivery through its whole retry
// chain with a fake clock: no attempt before its time, each one at its
// time, nextAttemptUtc only while a retry is pending, the history's
// attemptCount, and failure after retryCount retries.
func TestRetrySchedule(t *testing.T) {
	t.Parallel()
	for _, speed := range []Speed{SpeedFast, SpeedStandard, SpeedSlow} {
		t.Run(string(speed), func(t *testing.T) {
			e := newEnv(t)
			rc := newReceiver(t)
			rc.setRespond(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(503) })
			const retries = 8
			w := e.webhook(rc.URL(), Input{ContentSaveEvents: ptr(true), RetriesEnabled: ptr(true),
				RetryCount: ptr(retries), RetrySpeed: ptr(string(speed))})
			e.createItem("en-us", "One")
			if n := e.pump(); n != 1 {
				t.Fatalf("first pump made %d attempts, want 1", n)
			}
			for n := 1; n <= retries; n++ {
				d := e.history(w.RowKey)[0]
				delay := Delay(speed, n, 0.5)
				if d.Status != StatusRetrying || d.NextAttemptUtc == nil || d.AttemptCount != n || d.SendDate != nil {
					t.Fatalf("after attempt %d: %+v, want retrying with nextAttemptUtc and attemptCount %d", n, d, n)
				}
				if want := d.LastAttemptDate.Add(delay); !d.NextAttemptUtc.Equal(want) {
					t.Fatalf("retry %d at %v, want %v (a delay of %v)", n, d.NextAttemptUtc, want, delay)
				}
				if d.HTTPResponseCode != 503 || d.LastError != "HTTP 503" || d.Success {
					t.Errorf("after attempt %d: code %d, lastError %q", n, d.HTTPResponseCode, d.LastError)
				}
				e.clock.Set(d.NextAttemptUtc.Add(-time.Microsecond))
				if got := e.pump(); got != 0 {
					t.Fatalf("retry %d attempted before its time", n)
				}
				e.clock.Set(*d.NextAttemptUtc)
				if got := e.pump(); got != 1 {
					t.Fatalf("retry %d: %d attempts at its time, want 1", n, got)
				}
			}
			d := e.history(w.RowKey)[0]
			if d.Status != StatusFailed || d.NextAttemptUtc != nil || d.AttemptCount != retries+1 {
				t.Errorf("after the last retry: %+v, want failed, no nextAttemptUtc, %d attempts", d, retries+1)
			}
			e.clock.Advance(48 * time.Hour)
			if got := e.pump(); got != 0 {
				t.Errorf("%d attempts after the chain ended", got)
			}
			reqs := rc.requests()
			if len(reqs) != retries+1 {
				t.Errorf("receiver got %d attempts, want %d", len(reqs), retries+1)
			}
		})
	}
}

// TestRetryOutcomes checks one attempt's outcome for each kind of answer:
// success only on 2xx, a redirect is a failure that is not followed, a
// failed request records code 0 and a short error, Retry-After is honoured
// within bounds, the stored response text is cut at 8 KB, retries off
// means one attempt.
func TestRetryOutcomes(t *testing.T) {
	t.Parallel()
	big := strings.Repeat("é", ResponseTextBytes) // 2 bytes each
	tests := []struct {
		name      string
		respond   func(w http.ResponseWriter, r *http.Request)
		retries   bool
		status    string
		code      int
		lastError string
		text      string
		delay     time.Duration // before the retry, when retrying
	}{
		{"200", func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("thanks")) }, true, StatusSucceeded, 200, "", "thanks", 0},
		{"202", func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(202) }, true, StatusSucceeded, 202, "", "", 0},
		{"redirect", func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/hook" {
				http.Redirect(w, r, "/elsewhere", http.StatusFound)
			}
		}, true, StatusRetrying, 302, "HTTP 302: redirect to /elsewhere not followed", "", 5 * time.Minute},
		{"404 retries off", func(w http.ResponseWriter, r *http.Request) { http.NotFound(w, r) }, false, StatusFailed, 404, "HTTP 404", "404 page not found\n", 0},
		{"429 Retry-After within", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Retry-After", "420")
			w.WriteHeader(429)
		}, true, StatusRetrying, 429, "HTTP 429", "", 7 * time.Minute},
		{"503 Retry-After too long", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Retry-After", "86400")
			w.WriteHeader(503)
		}, true, StatusRetrying, 503, "HTTP 503", "", 10 * time.Minute},
		{"503 Retry-After too short", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Retry-After", "1")
			w.WriteHeader(503)
		}, true, StatusRetrying, 503, "HTTP 503", "", 5 * time.Minute},
		{"long body", func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(500); w.Write([]byte("a" + big + big)) },
			false, StatusFailed, 500, "HTTP 500", ("a" + big)[:ResponseTextBytes-1], 0}, // not inside a character
		{"connection closed", func(w http.ResponseWriter, r *http.Request) {
			conn, _, _ := w.(http.Hijacker).Hijack()
			conn.Close()
		}, false, StatusFailed, 0, "EOF", "", 0},
		{"timeout", func(w http.ResponseWriter, r *http.Request) { time.Sleep(1500 * time.Millisecond) },
			false, StatusFailed, 0, "timeout: no complete answer within 1s", "", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t)
			e.store.timeout = time.Second
			rc := newReceiver(t)
			rc.setRespond(tt.respond)
			w := e.webhook(rc.URL(), Input{ContentSaveEvents: ptr(true), RetriesEnabled: ptr(tt.retries)})
			e.createItem("en-us", "One")
			e.pump()
			d := e.history(w.RowKey)[0]
			if d.Status != tt.status || d.HTTPResponseCode != tt.code || !strings.Contains(d.LastError, tt.lastError) || d.ResponseText != tt.text {
				t.Errorf("got status %s, code %d, lastError %q, %d bytes of text; want %s, %d, %q, %d bytes",
					d.Status, d.HTTPResponseCode, d.LastError, len(d.ResponseText), tt.status, tt.code, tt.lastError, len(tt.text))
			}
			if (d.SendDate != nil) != (tt.status == StatusSucceeded) || d.Success != (tt.status == StatusSucceeded) {
				t.Errorf("sendDate %v, success %v for status %s", d.SendDate, d.Success, tt.status)
			}
			if tt.delay > 0 && (d.NextAttemptUtc == nil || d.NextAttemptUtc.Sub(*d.LastAttemptDate) != tt.delay) {
				t.Errorf("nextAttemptUtc %v after %v, want %v later", d.NextAttemptUtc, d.LastAttemptDate, tt.delay)
			}
			if tt.delay == 0 && d.NextAttemptUtc != nil {
				t.Errorf("nextAttemptUtc %v, want none", d.NextAttemptUtc)
			}
			if d.AttemptCount != 1 {
				t.Errorf("attemptCount %d, want 1", d.AttemptCount)
			}
			if n := len(rc.requests()); n != 1 {
				t.Errorf("receiver got %d requests, want 1 (a redirect is not followed)", n)
			}
		})
	}
}

// TestRotationOverlap checks the secret rotation with a fake clock: one
// signature before, two (new and previous) for 24 hours after, then one
// again; each attempt signed afresh with a new timestamp and the same id.
func TestRotationOverlap(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	rc := newReceiver(t)
	w := e.webhook(rc.URL(), Input{ContentSaveEvents: ptr(true), SecureDeliveryEnabled: ptr(true),
		RetriesEnabled: ptr(true), RetrySpeed: ptr("fast")})
	first := w.SigningSecret
	id := e.createItem("en-us", "One")
	e.pump()
	e.clock.Advance(time.Second)

	rotated, err := e.store.RotateSecret(e.ctx, e.inst, w.RowKey)
	if err != nil {
		t.Fatal(err)
	}
	second := rotated.SigningSecret
	if rotated.PreviousSigningSecret != mask(first) || rotated.SecretRolledUtc == nil || !rotated.SecretRolledUtc.Equal(t0.Add(time.Second)) {
		t.Errorf("rotated: previous %q rolled %v; want %q at %v", rotated.PreviousSigningSecret, rotated.SecretRolledUtc, mask(first), t0.Add(time.Second))
	}
	e.saveItem("en-us", id, "Two")
	e.pump()
	e.clock.Advance(Overlap - 2*time.Second)
	// One failure then a retry: each attempt is signed afresh.
	failed := false
	rc.setRespond(func(w http.ResponseWriter, r *http.Request) {
		if !failed {
			failed = true
			w.WriteHeader(500)
		}
	})
	e.saveItem("en-us", id, "Three")
	e.pump()
	e.clock.Advance(time.Second) // the overlap ends before the retry
	e.clock.Advance(Delay(SpeedFast, 1, 0.5))
	e.pump()
	e.saveItem("en-us", id, "Four")
	e.pump()

	type want struct{ valid, invalid []string }
	wants := []want{
		{[]string{first}, []string{second}},
		{[]string{first, second}, nil},
		{[]string{first, second}, nil},      // the failed attempt within the overlap
		{[]string{second}, []string{first}}, // its retry after the overlap
		{[]string{second}, []string{first}},
	}
	reqs := rc.requests()
	if len(reqs) != len(wants) {
		t.Fatalf("receiver got %d requests, want %d", len(reqs), len(wants))
	}
	for i, r := range reqs {
		sigs := strings.Fields(r.header.Get(signature.HeaderSignature))
		if len(sigs) != len(wants[i].valid) {
			t.Errorf("request %d carries %d signatures, want %d", i, len(sigs), len(wants[i].valid))
		}
		sec, err := strconv.ParseInt(r.header.Get(signature.HeaderTimestamp), 10, 64)
		if err != nil {
			t.Fatalf("request %d: webhook-timestamp: %v", i, err)
		}
		now := time.Unix(sec, 0)
		for _, s := range wants[i].valid {
			if err := signature.Verify([]string{s}, r.header, r.body, now); err != nil {
				t.Errorf("request %d does not verify with secret %s: %v", i, mask(s), err)
			}
		}
		for _, s := range wants[i].invalid {
			if err := signature.Verify([]string{s}, r.header, r.body, now); err == nil {
				t.Errorf("request %d verifies with secret %s, which should not sign it", i, mask(s))
			}
		}
	}
	if reqs[2].header.Get("webhook-id") != reqs[3].header.Get("webhook-id") {
		t.Errorf("a retry has a new webhook-id")
	}
	if reqs[2].header.Get("webhook-timestamp") == reqs[3].header.Get("webhook-timestamp") {
		t.Errorf("a retry has the same webhook-timestamp: not signed afresh")
	}
	hist := e.history(w.RowKey)
	wantKeys := []int{1, 1, 2, 1} // newest first: Four, Three (retried after the overlap), Two, One
	for i, d := range hist {
		if !d.Signed || d.SignatureKeyCount != wantKeys[i] {
			t.Errorf("history %d: signed %v, signatureKeyCount %d; want true, %d", i, d.Signed, d.SignatureKeyCount, wantKeys[i])
		}
	}
	view, err := e.store.Webhook(e.ctx, e.inst, w.RowKey)
	if err != nil {
		t.Fatal(err)
	}
	if view.SignatureKeyCount != 1 || view.PreviousSigningSecret != "" || view.SigningSecret != mask(second) {
		t.Errorf("after the overlap: %+v, want signatureKeyCount 1, no previous secret, %s", view, mask(second))
	}
}

// TestDisabledWhilePending checks that a delivery waiting for a retry when
// its webhook is disabled fails without an attempt.
func TestDisabledWhilePending(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	rc := newReceiver(t)
	rc.setRespond(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(500) })
	w := e.webhook(rc.URL(), Input{ContentSaveEvents: ptr(true), RetriesEnabled: ptr(true)})
	e.createItem("en-us", "One")
	e.pump()
	if _, _, err := e.store.Save(e.ctx, e.inst, Input{RowKey: &w.RowKey, Enabled: ptr(false)}); err != nil {
		t.Fatal(err)
	}
	e.clock.Advance(time.Hour)
	e.pump()
	d := e.history(w.RowKey)[0]
	if d.Status != StatusFailed || d.AttemptCount != 1 || d.NextAttemptUtc != nil || !strings.Contains(d.LastError, "disabled") {
		t.Errorf("after disabling: %+v, want failed after its one attempt, lastError naming the reason", d)
	}
	if n := len(rc.requests()); n != 1 {
		t.Errorf("receiver got %d requests, want 1", n)
	}
}
