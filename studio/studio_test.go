package studio_test

import (
	"io/fs"
	"regexp"
	"strings"
	"testing"

	"github.com/edgecms/edgecms/studio"
)

// secretShapes are the shapes of the credentials edgecms issues: management
// tokens, fetch and preview keys (a prefix and 32 base32 characters), and
// webhook signing secrets.
var secretShapes = regexp.MustCompile(`(mt|live|preview)_[a-z2-7]{32}|whsec_[A-Za-z0-9+/=]{16,}`)

// TestNoSecretsEmbedded checks that no file of the built Studio holds a
// credential: the Studio gets its session from the sign-in, never from its
// files.
func TestNoSecretsEmbedded(t *testing.T) {
	n := 0
	err := fs.WalkDir(studio.Files(), ".", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := fs.ReadFile(studio.Files(), path)
		if err != nil {
			return err
		}
		n++
		if m := secretShapes.Find(b); m != nil {
			t.Errorf("%s holds what looks like a credential: %q", path, m)
		}
		if strings.HasSuffix(path, ".js") && strings.Contains(string(b), "Authorization") {
			t.Errorf("%s sends an Authorization header: the Studio uses its session cookie", path)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if n < 3 {
		t.Errorf("the embedded Studio has %d files, want index.html, a script and a style sheet at least", n)
	}
}
