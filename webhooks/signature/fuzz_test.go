package signature

import (
	"encoding/base64"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"
)

// FuzzVerify feeds Verify arbitrary headers and bodies. Verify must never
// panic; it must accept only a fresh integer timestamp and a header holding
// the right signature; its errors must wrap exactly one of the package's
// reasons; and whatever Sign produces for the same inputs must verify. The
// seed corpus, in testdata/fuzz/FuzzVerify, holds the reference vectors.
func FuzzVerify(f *testing.F) {
	key, err := ParseSecret(v1Secret)
	if err != nil {
		f.Fatal(err)
	}
	v, err := NewVerifier(v1Secret)
	if err != nil {
		f.Fatal(err)
	}
	now := time.Unix(v1TS, 0)
	reasons := []error{ErrMissingHeaders, ErrInvalidTimestamp, ErrTimestampTooOld, ErrTimestampTooNew, ErrNoMatchingSignature}

	f.Fuzz(func(t *testing.T, id, ts, sig string, body []byte) {
		h := http.Header{}
		h.Set(HeaderID, id)
		h.Set(HeaderTimestamp, ts)
		h.Set(HeaderSignature, sig)

		err := v.Verify(h, body, now)
		if err == nil {
			sent, perr := strconv.ParseInt(ts, 10, 64)
			if perr != nil || strings.ContainsAny(ts, "+-") {
				t.Fatalf("Verify accepted timestamp %q", ts)
			}
			if d := now.Unix() - sent; d > 300 || d < -300 {
				t.Fatalf("Verify accepted timestamp %q, %ds from now", ts, d)
			}
			want := "v1," + base64.StdEncoding.EncodeToString(mac(key, id, ts, body))
			if !containsField(sig, want) {
				t.Fatalf("Verify accepted %q, which lacks %q", sig, want)
			}
		} else {
			n := 0
			for _, r := range reasons {
				if errors.Is(err, r) {
					n++
				}
			}
			if n != 1 {
				t.Fatalf("Verify error %q wraps %d reasons, want 1", err, n)
			}
		}

		// Signing what a sender would send must verify.
		if id == "" {
			return
		}
		signed, err := Sign(id, now, body, v1Secret)
		if err != nil {
			t.Fatalf("Sign: %v", err)
		}
		h.Set(HeaderTimestamp, Timestamp(now))
		h.Set(HeaderSignature, sig+" "+signed)
		if err := v.Verify(h, body, now); err != nil {
			t.Fatalf("Verify of a signed delivery (id %q) = %v", id, err)
		}
	})
}

func containsField(s, want string) bool {
	for _, f := range strings.Fields(s) {
		if f == want {
			return true
		}
	}
	return false
}
