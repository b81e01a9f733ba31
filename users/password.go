package users

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
	"sync"
	"unicode/utf8"

	"golang.org/x/crypto/argon2"

	"github.com/edgecms/edgecms/problem"
)

// Password rules: long enough to resist guessing, short enough that hashing
// one costs a bounded time.
const (
	MinPasswordChars = 12
	maxPasswordBytes = 1024
)

// hashParams are the Argon2id parameters of new hashes: OWASP's minimum
// for Argon2id (19 MiB, 2 passes, 1 lane), about 30-50 ms on one core.
// Each hash records its own parameters, so that raising these later keeps
// older hashes valid.
var hashParams = argonParams{memoryKiB: 19 * 1024, time: 2, threads: 1, keyLen: 32}

type argonParams struct {
	memoryKiB, time uint32
	threads         uint8
	keyLen          uint32
}

var b64 = base64.RawStdEncoding

// checkPassword validates a new password.
func checkPassword(password string) error {
	if n := utf8.RuneCountInString(password); n < MinPasswordChars {
		return problem.Field("password", "must be at least %d characters (it has %d)", MinPasswordChars, n)
	}
	if len(password) > maxPasswordBytes {
		return problem.Field("password", "must be at most %d bytes", maxPasswordBytes)
	}
	return nil
}

// hashPassword returns the PHC string of an Argon2id hash of password with
// a fresh salt: $argon2id$v=19$m=…,t=…,p=…$salt$hash.
func hashPassword(password string) string {
	salt := make([]byte, 16)
	if _, err := rand.Read(salt); err != nil {
		panic(fmt.Sprintf("crypto/rand: %v", err))
	}
	p := hashParams
	key := argon2.IDKey([]byte(password), salt, p.time, p.memoryKiB, p.threads, p.keyLen)
	return fmt.Sprintf("$argon2id$v=%d$m=%d,t=%d,p=%d$%s$%s", argon2.Version, p.memoryKiB, p.time, p.threads,
		b64.EncodeToString(salt), b64.EncodeToString(key))
}

var errBadHash = errors.New("users: malformed password hash")

// verifyPassword reports whether password matches the PHC string encoded,
// comparing the hashes in constant time.
func verifyPassword(encoded, password string) (bool, error) {
	parts := strings.Split(encoded, "$")
	if len(parts) != 6 || parts[1] != "argon2id" {
		return false, errBadHash
	}
	var version int
	if _, err := fmt.Sscanf(parts[2], "v=%d", &version); err != nil || version != argon2.Version {
		return false, errBadHash
	}
	var p argonParams
	if _, err := fmt.Sscanf(parts[3], "m=%d,t=%d,p=%d", &p.memoryKiB, &p.time, &p.threads); err != nil {
		return false, errBadHash
	}
	salt, err := b64.DecodeString(parts[4])
	if err != nil {
		return false, errBadHash
	}
	want, err := b64.DecodeString(parts[5])
	if err != nil || len(want) == 0 {
		return false, errBadHash
	}
	got := argon2.IDKey([]byte(password), salt, p.time, p.memoryKiB, p.threads, uint32(len(want)))
	return subtle.ConstantTimeCompare(got, want) == 1, nil
}

// decoy is a hash that no password matches, computed once: a sign-in with
// an unknown email verifies against it, so that it costs what a wrong
// password costs and the answer's timing does not tell which addresses
// have accounts.
var decoy = sync.OnceValue(func() string {
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic(fmt.Sprintf("crypto/rand: %v", err))
	}
	return hashPassword(b64.EncodeToString(b[:]))
})
