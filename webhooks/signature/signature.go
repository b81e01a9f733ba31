// Package signature signs and verifies webhook deliveries as the Standard
// Webhooks specification (v1) describes them: an HMAC-SHA256 over
// "<webhook-id>.<webhook-timestamp>.<body>", keyed with the decoded part of a
// "whsec_" secret, sent as space-separated "v1,<base64>" entries in the
// webhook-signature header.
//
// The dispatcher uses Sign on every attempt (the timestamp is new each time,
// so every attempt is signed afresh, with every secret that is still valid
// after a rotation). Receivers use Verify or a Verifier; the package depends
// on the standard library only, so a receiver written in Go can import it
// without pulling in the rest of edgecms.
package signature

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
)

// The header names a signed delivery carries.
const (
	HeaderID        = "webhook-id"
	HeaderTimestamp = "webhook-timestamp"
	HeaderSignature = "webhook-signature"
)

// SecretPrefix begins every secret this package generates.
const SecretPrefix = "whsec_"

// secretBytes is the number of random bytes in a new secret; the standard
// asks for 24 to 64.
const secretBytes = 32

// random is the source of secret bytes; tests may replace it.
var random io.Reader = rand.Reader

// NewSecret returns a new signing secret: "whsec_" followed by the standard
// base64 encoding of 32 bytes from a cryptographically secure source.
func NewSecret() (string, error) {
	b := make([]byte, secretBytes)
	if _, err := io.ReadFull(random, b); err != nil {
		return "", fmt.Errorf("new secret: %w", err)
	}
	return SecretPrefix + base64.StdEncoding.EncodeToString(b), nil
}

// ParseSecret returns the HMAC key of a secret: the standard base64 decoding
// of the part after "whsec_". Like the standard's own libraries it also
// accepts a secret without the prefix. Surrounding white space is ignored.
func ParseSecret(s string) ([]byte, error) {
	enc := strings.TrimPrefix(strings.TrimSpace(s), SecretPrefix)
	if enc == "" {
		return nil, errors.New("parse secret: empty secret")
	}
	key, err := base64.StdEncoding.DecodeString(enc)
	if err != nil {
		return nil, fmt.Errorf("parse secret: want %q followed by standard base64: %w", SecretPrefix, err)
	}
	return key, nil
}

// Sign returns the webhook-signature header value for a delivery with the
// given id, timestamp and exact body bytes: one "v1,<base64 HMAC-SHA256>"
// entry per secret, separated by spaces, in the order of the secrets. The
// timestamp is signed as whole Unix seconds, which is what the
// webhook-timestamp header must carry (see Timestamp).
func Sign(id string, ts time.Time, body []byte, secrets ...string) (string, error) {
	if len(secrets) == 0 {
		return "", errors.New("sign: no secret")
	}
	var sb strings.Builder
	for i, s := range secrets {
		key, err := ParseSecret(s)
		if err != nil {
			return "", fmt.Errorf("sign: secret %d: %w", i+1, err)
		}
		if i > 0 {
			sb.WriteByte(' ')
		}
		sb.WriteString("v1,")
		sb.WriteString(base64.StdEncoding.EncodeToString(mac(key, id, Timestamp(ts), body)))
	}
	return sb.String(), nil
}

// Timestamp formats t as the webhook-timestamp header value: integer Unix
// seconds.
func Timestamp(t time.Time) string {
	return strconv.FormatInt(t.Unix(), 10)
}

// mac computes the HMAC-SHA256 of "<id>.<ts>.<body>" with key.
func mac(key []byte, id, ts string, body []byte) []byte {
	h := hmac.New(sha256.New, key)
	io.WriteString(h, id)
	io.WriteString(h, ".")
	io.WriteString(h, ts)
	io.WriteString(h, ".")
	h.Write(body)
	return h.Sum(nil)
}
