package delivery

import (
	"testing"
	"time"

	"github.com/edgecms/edgecms/problem"
)

func TestManifestKey(t *testing.T) {
	t.Parallel()
	if got, want := ManifestKey("Acme"), "_keys/acme.json"; got != want {
		t.Errorf("ManifestKey(Acme) = %q, want %q", got, want)
	}
	for key, want := range map[string]string{"_keys/acme.json": "acme", "acme/fetch/en-us/item/1/d1.json": "", FeedKey: ""} {
		got, ok := ManifestGuid(key)
		if got != want || ok != (want != "") {
			t.Errorf("ManifestGuid(%q) = %q, %v; want %q", key, got, ok, want)
		}
	}
}

func TestCheckKey(t *testing.T) {
	t.Parallel()
	now := time.Date(2030, 5, 17, 9, 30, 0, 0, time.UTC)
	tests := []struct {
		name string
		k    *Key
		ok   bool
		want problem.Kind // when not ok
	}{
		{"unknown", nil, false, problem.Unauthorized},
		{"valid", &Key{Type: "fetch", Enabled: true}, true, 0},
		{"valid until later", &Key{Type: "fetch", Enabled: true, Expires: now.Add(time.Second)}, true, 0},
		{"disabled", &Key{Type: "fetch"}, false, problem.Unauthorized},
		{"expired now", &Key{Type: "fetch", Enabled: true, Expires: now}, false, problem.Unauthorized},
		{"other type", &Key{Type: "preview", Enabled: true}, false, problem.Forbidden},
	}
	for _, tt := range tests {
		err := CheckKey("acme", tt.k, "fetch", now)
		if tt.ok && err != nil || !tt.ok && !problem.Is(err, tt.want) {
			t.Errorf("%s: CheckKey = %v, want ok %v or kind %v", tt.name, err, tt.ok, tt.want)
		}
	}
	if err := MissingKey(); !problem.Is(err, problem.Unauthorized) {
		t.Errorf("MissingKey() = %v, want Unauthorized", err)
	}
}
