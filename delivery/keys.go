package delivery

import (
	"strings"
	"time"

	"github.com/edgecms/edgecms/problem"
)

// ManifestPrefix is the key prefix of the key manifests in the store.
const ManifestPrefix = "_keys/"

// ManifestKey is the object key of instance guid's key manifest.
func ManifestKey(guid string) string { return ManifestPrefix + strings.ToLower(guid) + ".json" }

// ManifestGuid returns the guid of a key manifest's object key, and false
// for any other key.
func ManifestGuid(key string) (string, bool) {
	rest, ok := strings.CutPrefix(key, ManifestPrefix)
	if !ok {
		return "", false
	}
	return strings.CutSuffix(rest, ".json")
}

// Manifest is an instance's API key manifest: what an edge needs to check a
// Fetch API key without the database. It holds hashes, never keys.
type Manifest struct {
	Guid string          `json:"guid"`
	Keys []ManifestEntry `json:"keys"`
}

// ManifestEntry is one API key of a Manifest.
type ManifestEntry struct {
	// Hash is the hex SHA-256 of the key (content.HashSecret).
	Hash string `json:"hash"`
	// Type is "fetch" or "preview".
	Type string `json:"type"`
	// ExpiresAt is when the key stops working; nil never.
	ExpiresAt *time.Time `json:"expiresAt"`
	Enabled   bool       `json:"enabled"`
}

// Key is what a key check needs of an API key, wherever it was found (the
// database at the origin, a manifest at the edge).
type Key struct {
	// Type is "fetch" or "preview".
	Type string
	// Expires is when the key stops working; zero never.
	Expires time.Time
	Enabled bool
}

// MissingKey is the answer to a Fetch API request without an APIKey header.
func MissingKey() error { return problem.Unauthorizedf("missing APIKey header") }

// CheckKey applies the key-check rules, with the same messages at the
// origin and the edge, to key k (nil: no key of instance guid has the
// secret sent) used for the API of apiType ("fetch" or "preview") at now:
// an unknown, disabled or expired key is Unauthorized, a valid key of the
// other type Forbidden.
func CheckKey(guid string, k *Key, apiType string, now time.Time) error {
	switch {
	case k == nil:
		return problem.Unauthorizedf("the API key is not valid for instance %q", guid)
	case !k.Enabled:
		return problem.Unauthorizedf("the API key is disabled")
	case !k.Expires.IsZero() && !now.Before(k.Expires):
		return problem.Unauthorizedf("the API key has expired")
	case k.Type != apiType:
		return problem.Forbiddenf("a %s key cannot read the %s API; use a %s key", k.Type, apiType, apiType)
	}
	return nil
}
