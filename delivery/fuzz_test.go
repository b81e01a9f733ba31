package delivery

import (
	"strings"
	"testing"
	"time"

	"github.com/edgecms/edgecms/problem"
)

// FuzzCheckKey checks the key-check rules for any key: CheckKey accepts
// exactly an enabled, unexpired key of the API's type; it refuses every
// other key as Unauthorized, but for a valid key of the other type, which
// is Forbidden; it refuses the absence of a key as Unauthorized.
func FuzzCheckKey(f *testing.F) {
	f.Add("acme", "fetch", "fetch", true, int64(0))
	f.Add("acme", "preview", "fetch", true, int64(1))
	f.Add("acme", "fetch", "fetch", true, int64(-1))
	f.Add("acme", "fetch", "preview", false, int64(0))
	now := time.Date(2030, 5, 17, 9, 30, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, guid, typ, apiType string, enabled bool, expiresIn int64) {
		k := &Key{Type: typ, Enabled: enabled}
		if expiresIn != 0 {
			k.Expires = now.Add(time.Duration(expiresIn))
		}
		unexpired := k.Expires.IsZero() || now.Before(k.Expires)
		err := CheckKey(guid, k, apiType, now)
		switch {
		case enabled && unexpired && typ == apiType:
			if err != nil {
				t.Errorf("CheckKey(%+v, %q) = %v, want it accepted", k, apiType, err)
			}
		case enabled && unexpired:
			if !problem.Is(err, problem.Forbidden) {
				t.Errorf("CheckKey(%+v, %q) = %v, want Forbidden", k, apiType, err)
			}
		default:
			if !problem.Is(err, problem.Unauthorized) {
				t.Errorf("CheckKey(%+v, %q) = %v, want Unauthorized", k, apiType, err)
			}
		}
		if err := CheckKey(guid, nil, apiType, now); !problem.Is(err, problem.Unauthorized) {
			t.Errorf("CheckKey(%q, nil, %q) = %v, want Unauthorized", guid, apiType, err)
		}
	})
}

// FuzzManifestKey checks the manifest keys for any guid and any object key:
// an instance's manifest key gives back its guid (lower case), and a key
// gives a guid only when it is in the manifests' prefix, with its suffix.
func FuzzManifestKey(f *testing.F) {
	f.Add("Acme", "_keys/acme.json")
	f.Add("", "acme/fetch/en-us/item/1/d1.json")
	f.Add("a.json", FeedKey)
	f.Fuzz(func(t *testing.T, guid, key string) {
		mk := ManifestKey(guid)
		if got, ok := ManifestGuid(mk); !ok || got != strings.ToLower(guid) {
			t.Errorf("ManifestGuid(ManifestKey(%q)) = %q, %v; want %q", guid, got, ok, strings.ToLower(guid))
		}
		if g, ok := ManifestGuid(key); ok && ManifestPrefix+g+".json" != key {
			t.Errorf("ManifestGuid(%q) = %q, which is not the key's guid", key, g)
		}
	})
}
