package webhooks

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// KeySize is the length in bytes of the key that encrypts signing secrets at
// rest (EDGECMS_SECRET_KEY).
const KeySize = 32

// KeyEnv is the setting that holds the key, named in errors.
const KeyEnv = "EDGECMS_SECRET_KEY"

// ParseKey parses an EDGECMS_SECRET_KEY value: 32 bytes written as 64
// hexadecimal digits or in base64 (standard or URL alphabet, padded or not).
// Generate one with `openssl rand -hex 32`.
func ParseKey(s string) ([]byte, error) {
	s = strings.TrimSpace(s)
	if b, err := hex.DecodeString(s); err == nil && len(b) == KeySize {
		return b, nil
	}
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding} {
		if b, err := enc.DecodeString(s); err == nil && len(b) == KeySize {
			return b, nil
		}
	}
	return nil, fmt.Errorf("%s: want %d bytes as 64 hexadecimal digits or base64 (for example from `openssl rand -hex 32`)", KeyEnv, KeySize)
}

// LoadKey returns the key that encrypts signing secrets: setting parsed by
// ParseKey when it is not empty; otherwise the key stored in the file at
// path, which is generated (with mode 0600, its folder created) when it does
// not exist yet. generated reports that a new key was just written, which
// the caller should warn about: every process that reads the same database
// needs the same key.
func LoadKey(setting, path string) (key []byte, generated bool, err error) {
	if strings.TrimSpace(setting) != "" {
		key, err := ParseKey(setting)
		return key, false, err
	}
	b, err := os.ReadFile(path)
	if err == nil {
		key, err := ParseKey(string(b))
		if err != nil {
			return nil, false, fmt.Errorf("read key file %s: %w", path, err)
		}
		return key, false, nil
	}
	if !errors.Is(err, fs.ErrNotExist) {
		return nil, false, fmt.Errorf("read key file: %w", err)
	}
	key = make([]byte, KeySize)
	if _, err := io.ReadFull(rand.Reader, key); err != nil {
		return nil, false, fmt.Errorf("generate key: %w", err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, false, fmt.Errorf("generate key: %w", err)
	}
	// O_EXCL: when two processes start at once, the second reads the first's key.
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, fs.ErrExist) {
		return LoadKey("", path)
	}
	if err != nil {
		return nil, false, fmt.Errorf("generate key: %w", err)
	}
	if _, err := f.WriteString(hex.EncodeToString(key) + "\n"); err != nil {
		f.Close()
		return nil, false, fmt.Errorf("generate key: %w", err)
	}
	if err := f.Close(); err != nil {
		return nil, false, fmt.Errorf("generate key: %w", err)
	}
	return key, true, nil
}

// sealVersion is the first byte of every sealed value, so that a later
// format (or a rotated master key) can be told apart.
const sealVersion = 1

// sealer encrypts signing secrets with AES-256-GCM and signs paging tokens,
// each under its own key derived from the master key.
type sealer struct {
	aead     cipher.AEAD
	tokenKey []byte
}

func newSealer(key []byte) (*sealer, error) {
	if len(key) != KeySize {
		return nil, fmt.Errorf("%s: want a %d-byte key, got %d bytes", KeyEnv, KeySize, len(key))
	}
	block, err := aes.NewCipher(derive(key, "edgecms webhook signing secrets"))
	if err != nil {
		return nil, err
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, err
	}
	return &sealer{aead: aead, tokenKey: derive(key, "edgecms webhook paging tokens")}, nil
}

// derive returns a subkey of key for one purpose.
func derive(key []byte, purpose string) []byte {
	h := hmac.New(sha256.New, key)
	h.Write([]byte(purpose))
	return h.Sum(nil)
}

// seal encrypts plaintext bound to aad (the webhook's id, so that a sealed
// secret copied to another row does not open).
func (s *sealer) seal(plaintext, aad []byte) []byte {
	out := make([]byte, 1+s.aead.NonceSize(), 1+s.aead.NonceSize()+len(plaintext)+s.aead.Overhead())
	out[0] = sealVersion
	if _, err := io.ReadFull(rand.Reader, out[1:]); err != nil {
		panic("webhooks: crypto/rand failed: " + err.Error())
	}
	return s.aead.Seal(out, out[1:], plaintext, aad)
}

// errUnseal is the error of a sealed value that does not open: the key
// changed, or the value was tampered with.
var errUnseal = errors.New("cannot decrypt the signing secret: was " + KeyEnv + " changed?")

// open decrypts a value made by seal with the same aad.
func (s *sealer) open(sealed, aad []byte) ([]byte, error) {
	n := s.aead.NonceSize()
	if len(sealed) < 1+n || sealed[0] != sealVersion {
		return nil, errUnseal
	}
	out, err := s.aead.Open(nil, sealed[1:1+n], sealed[1+n:], aad)
	if err != nil {
		return nil, errUnseal
	}
	return out, nil
}

// mac returns the token signature of msg.
func (s *sealer) mac(msg []byte) []byte {
	h := hmac.New(sha256.New, s.tokenKey)
	h.Write(msg)
	return h.Sum(nil)[:16]
}
