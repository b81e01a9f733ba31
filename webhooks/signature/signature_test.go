package signature

import (
	"bytes"
	"encoding/base64"
	"errors"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"testing/iotest"
	"time"
)

// The test vectors of /work/shared/reference/webhooks.md, taken from the
// Standard Webhooks libraries.
const (
	v1Secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
	v1ID     = "msg_p5jXN8AQM9LWM0D4loKWxJek"
	v1TS     = 1614265330
	v1Body   = `{"test": 2432232314}`
	v1Sig    = "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="

	v2Secret = "whsec_C2FVsBQIhrscChlQIMV+b5sSYspob7oD"
	v2ID     = "msg_27UH4WbU6Z5A5EzD8u03UvzRbpk"
	v2TS     = 1649367553
	v2Body   = `{"email":"test@example.com","username":"test_user"}`
	v2Sig    = "v1,tZ1I4/hDygAJgO5TYxiSd6Sd0kDW6hPenDe+bTa3Kkw="
)

// vector is one signing input and the header it must produce.
type vector struct {
	name   string
	secret string
	id     string
	ts     int64
	body   []byte
	sig    string
}

func vectors() []vector {
	return []vector{
		{"V1", v1Secret, v1ID, v1TS, []byte(v1Body), v1Sig},
		{"V2", v2Secret, v2ID, v2TS, []byte(v2Body), v2Sig},
		{"V3 1048576", v1Secret, v1ID, v1TS, bytes.Repeat([]byte("a"), 1048576), "v1,txpEUxqWZJ5nteTnymUVa+7C4NHpBeXJ6CsBAW0c3/A="},
		{"V3 262144", v1Secret, v1ID, v1TS, bytes.Repeat([]byte("a"), 262144), "v1,Mw4Pe2WgApuT7NSqnSq0PQPV9gbLdggCl9B865x5Xh0="},
		{"V3 262143", v1Secret, v1ID, v1TS, bytes.Repeat([]byte("a"), 262143), "v1,NTItnqyWMoFhk2Bbe5V/BMdcFRWgcSQaTgqLHX7FC7c="},
	}
}

// headers builds the headers of a delivery.
func headers(id, ts, sig string) http.Header {
	h := http.Header{}
	if id != "" {
		h.Set(HeaderID, id)
	}
	if ts != "" {
		h.Set(HeaderTimestamp, ts)
	}
	if sig != "" {
		h.Set(HeaderSignature, sig)
	}
	return h
}

func TestSignVectors(t *testing.T) {
	for _, v := range vectors() {
		t.Run(v.name, func(t *testing.T) {
			got, err := Sign(v.id, time.Unix(v.ts, 0), v.body, v.secret)
			if err != nil {
				t.Fatalf("Sign: %v", err)
			}
			if got != v.sig {
				t.Errorf("Sign(%s) = %q, want %q", v.name, got, v.sig)
			}
		})
	}
}

func TestSignIgnoresSubSeconds(t *testing.T) {
	got, err := Sign(v1ID, time.Unix(v1TS, 999_999_999), []byte(v1Body), v1Secret)
	if err != nil || got != v1Sig {
		t.Errorf("Sign with nanoseconds = %q, %v, want %q, nil", got, err, v1Sig)
	}
}

func TestSignSeveralSecrets(t *testing.T) {
	got, err := Sign(v1ID, time.Unix(v1TS, 0), []byte(v1Body), v1Secret, v2Secret)
	if err != nil {
		t.Fatalf("Sign: %v", err)
	}
	v2Key := strings.TrimPrefix(v2Secret, SecretPrefix) // without prefix: same key
	other, err := Sign(v1ID, time.Unix(v1TS, 0), []byte(v1Body), v2Key)
	if err != nil {
		t.Fatalf("Sign: %v", err)
	}
	if want := v1Sig + " " + other; got != want {
		t.Errorf("Sign(two secrets) = %q, want %q", got, want)
	}
	// Each secret on its own verifies the two-entry header: this is what
	// a receiver sees during a rotation.
	for _, secret := range []string{v1Secret, v2Secret} {
		h := headers(v1ID, "1614265330", got)
		if err := Verify([]string{secret}, h, []byte(v1Body), time.Unix(v1TS, 0)); err != nil {
			t.Errorf("Verify(%s) of a two-entry header = %v, want nil", secret, err)
		}
	}
}

func TestSignErrors(t *testing.T) {
	tests := []struct {
		name    string
		secrets []string
	}{
		{"no secret", nil},
		{"empty secret", []string{""}},
		{"bad base64", []string{"whsec_not base64!"}},
		{"second secret bad", []string{v1Secret, "whsec_%%%"}},
	}
	for _, tt := range tests {
		got, err := Sign(v1ID, time.Unix(v1TS, 0), []byte(v1Body), tt.secrets...)
		if err == nil {
			t.Errorf("Sign(%s) = %q, nil, want an error", tt.name, got)
		}
	}
}

func TestVerifyVectors(t *testing.T) {
	for _, v := range vectors() {
		t.Run(v.name, func(t *testing.T) {
			h := headers(v.id, Timestamp(time.Unix(v.ts, 0)), v.sig)
			if err := Verify([]string{v.secret}, h, v.body, time.Unix(v.ts, 0)); err != nil {
				t.Errorf("Verify(%s) = %v, want nil", v.name, err)
			}
		})
	}
}

func TestVerifyRejects(t *testing.T) {
	now := time.Unix(v1TS, 0)
	body := []byte(v1Body)
	tests := []struct {
		name    string
		secrets []string
		h       http.Header
		body    []byte
		now     time.Time
		want    error
	}{
		// The must-NOT-verify vectors.
		{"V1 last character changed", []string{v1Secret}, headers(v1ID, "1614265330", "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OA="), body, now, ErrNoMatchingSignature},
		{"V2 wrong signature", []string{v2Secret}, headers(v2ID, "1649367553", "v1,R3PTzyfHASBKHH98a7yexTwaJ4yNIcGhFQc1yuN+BPU="), []byte(v2Body), time.Unix(v2TS, 0), ErrNoMatchingSignature},
		{"empty v1", []string{v1Secret}, headers(v1ID, "1614265330", "v1,"), body, now, ErrNoMatchingSignature},
		{"signature cut to 8 characters", []string{v1Secret}, headers(v1ID, "1614265330", "v1,g0hM9SsE"), body, now, ErrNoMatchingSignature},
		{"header cut to 8 characters", []string{v1Secret}, headers(v1ID, "1614265330", v1Sig[:8]), body, now, ErrNoMatchingSignature},
		{"timestamp hello", []string{v1Secret}, headers(v1ID, "hello", v1Sig), body, now, ErrInvalidTimestamp},
		{"timestamp negative", []string{v1Secret}, headers(v1ID, "-161426533", v1Sig), body, now, ErrInvalidTimestamp},
		{"timestamp fraction", []string{v1Secret}, headers(v1ID, "161426533.0", v1Sig), body, now, ErrInvalidTimestamp},
		{"V1 timestamp changed", []string{v1Secret}, headers(v1ID, "1614265331", v1Sig), body, time.Unix(v1TS+1, 0), ErrNoMatchingSignature},

		// More ways to be wrong.
		{"timestamp with plus sign", []string{v1Secret}, headers(v1ID, "+1614265330", v1Sig), body, now, ErrInvalidTimestamp},
		{"timestamp with space", []string{v1Secret}, headers(v1ID, "1614265330 ", v1Sig), body, now, ErrInvalidTimestamp},
		{"timestamp out of range", []string{v1Secret}, headers(v1ID, "99999999999999999999", v1Sig), body, now, ErrInvalidTimestamp},
		{"timestamp too old", []string{v1Secret}, headers(v1ID, "1614265330", v1Sig), body, now.Add(301 * time.Second), ErrTimestampTooOld},
		{"timestamp too new", []string{v1Secret}, headers(v1ID, "1614265330", v1Sig), body, now.Add(-301 * time.Second), ErrTimestampTooNew},
		{"timestamp zero", []string{v1Secret}, headers(v1ID, "0", v1Sig), body, now, ErrTimestampTooOld},
		{"no id", []string{v1Secret}, headers("", "1614265330", v1Sig), body, now, ErrMissingHeaders},
		{"no timestamp", []string{v1Secret}, headers(v1ID, "", v1Sig), body, now, ErrMissingHeaders},
		{"no signature", []string{v1Secret}, headers(v1ID, "1614265330", ""), body, now, ErrMissingHeaders},
		{"blank signature", []string{v1Secret}, headers(v1ID, "1614265330", "   "), body, now, ErrMissingHeaders},
		{"no headers", []string{v1Secret}, http.Header{}, body, now, ErrMissingHeaders},
		{"other id", []string{v1Secret}, headers("msg_other", "1614265330", v1Sig), body, now, ErrNoMatchingSignature},
		{"other body", []string{v1Secret}, headers(v1ID, "1614265330", v1Sig), []byte(`{"test": 2432232315}`), now, ErrNoMatchingSignature},
		{"body with trailing newline", []string{v1Secret}, headers(v1ID, "1614265330", v1Sig), []byte(v1Body + "\n"), now, ErrNoMatchingSignature},
		{"other secret", []string{v2Secret}, headers(v1ID, "1614265330", v1Sig), body, now, ErrNoMatchingSignature},
		{"right bytes under v2", []string{v1Secret}, headers(v1ID, "1614265330", "v2,"+v1Sig[3:]), body, now, ErrNoMatchingSignature},
		{"right bytes, no version", []string{v1Secret}, headers(v1ID, "1614265330", v1Sig[3:]), body, now, ErrNoMatchingSignature},
		{"right bytes, upper-case version", []string{v1Secret}, headers(v1ID, "1614265330", "V1,"+v1Sig[3:]), body, now, ErrNoMatchingSignature},
		{"right bytes, unpadded", []string{v1Secret}, headers(v1ID, "1614265330", strings.TrimRight(v1Sig, "=")), body, now, ErrNoMatchingSignature},
		{"right bytes, url alphabet", []string{v1Secret}, headers(v1ID, "1614265330", strings.NewReplacer("+", "-", "/", "_").Replace(v1Sig)), body, now, ErrNoMatchingSignature},
		{"signature longer than a digest", []string{v1Secret}, headers(v1ID, "1614265330", "v1,"+base64.StdEncoding.EncodeToString(append(mustDecode(t, v1Sig[3:]), 0))), body, now, ErrNoMatchingSignature},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := Verify(tt.secrets, tt.h, tt.body, tt.now)
			if !errors.Is(err, tt.want) {
				t.Errorf("Verify(%s) = %v, want %v", tt.name, err, tt.want)
			}
		})
	}
}

func mustDecode(t *testing.T, s string) []byte {
	t.Helper()
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestVerifyAccepts(t *testing.T) {
	now := time.Unix(v1TS, 0)
	tests := []struct {
		name string
		h    http.Header
		now  time.Time
	}{
		{"mixed decoys and one valid entry", headers(v1ID, "1614265330",
			"v2,Ceo5qEr07ixe2NLpvHk3FH9bwy/WavXrAFQ/9tdO6mc= v1,Ceo5qEr07ixe2NLpvHk3FH9bwy/WavXrAFQ/9tdO6mc= "+v1Sig), now},
		{"valid entry first", headers(v1ID, "1614265330", v1Sig+" v1,Ceo5qEr07ixe2NLpvHk3FH9bwy/WavXrAFQ/9tdO6mc="), now},
		{"garbage entries around", headers(v1ID, "1614265330", "v1, nonsense v3,abc ,, v1,!!!! "+v1Sig+" v1"), now},
		{"several header lines", http.Header{
			"Webhook-Id":        {v1ID},
			"Webhook-Timestamp": {"1614265330"},
			"Webhook-Signature": {"v1,Ceo5qEr07ixe2NLpvHk3FH9bwy/WavXrAFQ/9tdO6mc=", v1Sig},
		}, now},
		{"300 s old", headers(v1ID, "1614265330", v1Sig), now.Add(300 * time.Second)},
		{"300 s ahead", headers(v1ID, "1614265330", v1Sig), now.Add(-300 * time.Second)},
		{"leading zeros", headers(v1ID, "01614265330", mustSign(t, v1ID, "01614265330")), now},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := Verify([]string{v1Secret}, tt.h, []byte(v1Body), tt.now); err != nil {
				t.Errorf("Verify(%s) = %v, want nil", tt.name, err)
			}
		})
	}
}

// mustSign signs the V1 body with the V1 secret under a timestamp string
// that Sign would not produce itself.
func mustSign(t *testing.T, id, ts string) string {
	t.Helper()
	key, err := ParseSecret(v1Secret)
	if err != nil {
		t.Fatal(err)
	}
	return "v1," + base64.StdEncoding.EncodeToString(mac(key, id, ts, []byte(v1Body)))
}

func TestVerifierTolerance(t *testing.T) {
	v, err := NewVerifier(v1Secret)
	if err != nil {
		t.Fatal(err)
	}
	v.Tolerance = time.Minute
	h := headers(v1ID, "1614265330", v1Sig)
	tests := []struct {
		offset time.Duration
		want   error
	}{
		{0, nil},
		{60 * time.Second, nil},
		{-60 * time.Second, nil},
		{61 * time.Second, ErrTimestampTooOld},
		{-61 * time.Second, ErrTimestampTooNew},
	}
	for _, tt := range tests {
		got := v.Verify(h, []byte(v1Body), time.Unix(v1TS, 0).Add(tt.offset))
		if !errors.Is(got, tt.want) || (tt.want == nil && got != nil) {
			t.Errorf("Verify at now%+v with tolerance 1m = %v, want %v", tt.offset, got, tt.want)
		}
	}
}

func TestVerifierSecrets(t *testing.T) {
	if _, err := NewVerifier(); err == nil {
		t.Error("NewVerifier() = nil error, want an error")
	}
	if _, err := NewVerifier(v1Secret, "whsec_!"); err == nil {
		t.Error("NewVerifier(good, bad) = nil error, want an error")
	}
	if err := Verify(nil, headers(v1ID, "1614265330", v1Sig), []byte(v1Body), time.Unix(v1TS, 0)); err == nil {
		t.Error("Verify(no secrets) = nil, want an error")
	}
	// The previous secret still verifies during a rotation.
	v, err := NewVerifier(v2Secret, v1Secret)
	if err != nil {
		t.Fatal(err)
	}
	if err := v.Verify(headers(v1ID, "1614265330", v1Sig), []byte(v1Body), time.Unix(v1TS, 0)); err != nil {
		t.Errorf("Verify(new, old secret) of an old-secret signature = %v, want nil", err)
	}
}

func TestParseSecret(t *testing.T) {
	tests := []struct {
		in      string
		want    []byte
		wantErr bool
	}{
		{"whsec_AAECAw==", []byte{0, 1, 2, 3}, false},
		{"AAECAw==", []byte{0, 1, 2, 3}, false},
		{" whsec_AAECAw==\n", []byte{0, 1, 2, 3}, false},
		{"", nil, true},
		{"whsec_", nil, true},
		{"whsec_AAECAw", nil, true},         // unpadded
		{"whsec_AAECAw-_", nil, true},       // URL alphabet
		{"whsec_not base64!", nil, true},    // not base64 at all
		{"whsek_AAECAw==", nil, true},       // misspelt prefix is not base64
		{"whsec_whsec_AAECAw==", nil, true}, // prefix only once
	}
	for _, tt := range tests {
		got, err := ParseSecret(tt.in)
		if (err != nil) != tt.wantErr || !bytes.Equal(got, tt.want) {
			t.Errorf("ParseSecret(%q) = %v, %v, want %v, error %v", tt.in, got, err, tt.want, tt.wantErr)
		}
	}
}

func TestNewSecret(t *testing.T) {
	s, err := NewSecret()
	if err != nil {
		t.Fatalf("NewSecret: %v", err)
	}
	if !strings.HasPrefix(s, SecretPrefix) {
		t.Errorf("NewSecret() = %q, want prefix %q", s, SecretPrefix)
	}
	key, err := ParseSecret(s)
	if err != nil || len(key) != 32 {
		t.Errorf("ParseSecret(NewSecret()) = %d bytes, %v, want 32 bytes", len(key), err)
	}
	other, _ := NewSecret()
	if other == s {
		t.Errorf("NewSecret() twice = %q both times", s)
	}
}

func TestNewSecretRandomSeam(t *testing.T) {
	defer func(r io.Reader) { random = r }(random)

	random = bytes.NewReader(bytes.Repeat([]byte{0xff}, 32))
	got, err := NewSecret()
	if want := "whsec_//////////////////////////////////////////8="; got != want || err != nil {
		t.Errorf("NewSecret() from 0xff bytes = %q, %v, want %q, nil", got, err, want)
	}

	random = iotest.ErrReader(errors.New("no entropy"))
	if got, err := NewSecret(); err == nil {
		t.Errorf("NewSecret() from a failing reader = %q, nil, want an error", got)
	}
}

func BenchmarkSign(b *testing.B) {
	for _, n := range []int{len(v1Body), 1 << 20} {
		body := bytes.Repeat([]byte("a"), n)
		b.Run(strconv.Itoa(n), func(b *testing.B) {
			b.SetBytes(int64(n))
			for b.Loop() {
				if _, err := Sign(v1ID, time.Unix(v1TS, 0), body, v1Secret, v2Secret); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkVerify(b *testing.B) {
	v, err := NewVerifier(v1Secret)
	if err != nil {
		b.Fatal(err)
	}
	h := headers(v1ID, "1614265330", "v1,Ceo5qEr07ixe2NLpvHk3FH9bwy/WavXrAFQ/9tdO6mc= "+v1Sig)
	now := time.Unix(v1TS, 0)
	b.SetBytes(int64(len(v1Body)))
	for b.Loop() {
		if err := v.Verify(h, []byte(v1Body), now); err != nil {
			b.Fatal(err)
		}
	}
}
