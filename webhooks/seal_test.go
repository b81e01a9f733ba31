package webhooks

import (
	"bytes"
	"encoding/base64"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestParseKey(t *testing.T) {
	t.Parallel()
	key := bytes.Repeat([]byte{0xab}, KeySize)
	tests := []struct {
		in string
		ok bool
	}{
		{hex.EncodeToString(key), true},
		{strings.ToUpper(hex.EncodeToString(key)), true},
		{" " + hex.EncodeToString(key) + "\n", true},
		{base64.StdEncoding.EncodeToString(key), true},
		{base64.RawURLEncoding.EncodeToString(key), true},
		{"", false},
		{"secret", false},
		{hex.EncodeToString(key[:16]), false}, // 16 bytes
		{base64.StdEncoding.EncodeToString(append(key, 1)), false}, // 33 bytes
	}
	for _, tt := range tests {
		got, err := ParseKey(tt.in)
		if (err == nil) != tt.ok || (tt.ok && !bytes.Equal(got, key)) {
			t.Errorf("ParseKey(%q) = %x, %v; want ok %v", tt.in, got, err, tt.ok)
		}
		if err != nil && !strings.Contains(err.Error(), KeyEnv) {
			t.Errorf("ParseKey(%q) error %q does not name %s", tt.in, err, KeyEnv)
		}
	}
}

func TestLoadKey(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "data", "secret.key")
	key, generated, err := LoadKey("", path)
	if err != nil || !generated || len(key) != KeySize {
		t.Fatalf("LoadKey on a missing file = %x, %v, %v; want a new key", key, generated, err)
	}
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("key file mode = %v, %v; want 0600", fi.Mode().Perm(), err)
	}
	again, generated, err := LoadKey("", path)
	if err != nil || generated || !bytes.Equal(again, key) {
		t.Errorf("LoadKey again = %x, %v, %v; want the same key, not generated", again, generated, err)
	}
	set := hex.EncodeToString(bytes.Repeat([]byte{7}, KeySize))
	if got, generated, err := LoadKey(set, path); err != nil || generated || !bytes.Equal(got, bytes.Repeat([]byte{7}, KeySize)) {
		t.Errorf("LoadKey with a setting = %x, %v, %v; want the setting's key", got, generated, err)
	}
	if _, _, err := LoadKey("short", path); err == nil {
		t.Errorf("LoadKey with a bad setting: no error")
	}
	if err := os.WriteFile(path, []byte("garbage"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, _, err := LoadKey("", path); err == nil || !strings.Contains(err.Error(), path) {
		t.Errorf("LoadKey of a bad file = %v, want an error naming the file", err)
	}
}

func TestSeal(t *testing.T) {
	t.Parallel()
	s, err := newSealer(testKey)
	if err != nil {
		t.Fatal(err)
	}
	secret := []byte("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw")
	sealed := s.seal(secret, []byte("wh_a"))
	if bytes.Contains(sealed, secret) || bytes.Contains(sealed, secret[6:]) {
		t.Errorf("sealed value contains the secret")
	}
	if got, err := s.open(sealed, []byte("wh_a")); err != nil || !bytes.Equal(got, secret) {
		t.Errorf("open = %q, %v; want the secret", got, err)
	}
	if bytes.Equal(sealed, s.seal(secret, []byte("wh_a"))) {
		t.Errorf("two seals of one secret are equal: the nonce is not random")
	}
	if _, err := s.open(sealed, []byte("wh_b")); err == nil {
		t.Errorf("a secret sealed for one webhook opens for another")
	}
	other, _ := newSealer(bytes.Repeat([]byte{1}, KeySize))
	if _, err := other.open(sealed, []byte("wh_a")); err == nil || !strings.Contains(err.Error(), KeyEnv) {
		t.Errorf("open under another key = %v, want an error naming %s", err, KeyEnv)
	}
	tampered := append([]byte(nil), sealed...)
	tampered[len(tampered)-1] ^= 1
	if _, err := s.open(tampered, []byte("wh_a")); err == nil {
		t.Errorf("a tampered value opens")
	}
	for _, bad := range [][]byte{nil, {sealVersion}, {2, 1, 2, 3}} {
		if _, err := s.open(bad, []byte("wh_a")); err == nil {
			t.Errorf("open(%x) succeeded", bad)
		}
	}
	if _, err := newSealer([]byte("short")); err == nil {
		t.Errorf("newSealer with a short key: no error")
	}
}
