package edge

import (
	"bytes"
	"math/rand/v2"
	"testing"

	"github.com/valyala/fasthttp"
)

// TestRequestTarget checks that splitting a plain request target gives what
// fasthttp's URI parsing gives, and that the targets it cannot split are
// left to that parsing.
func TestRequestTarget(t *testing.T) {
	tests := []struct {
		host, uri string
		plain     bool
	}{
		{"edge.test", "/acme/fetch/en-us/item/42", true},
		{"edge.test:8080", "/acme/fetch/en-us/list/posts?take=10&skip=0", true},
		{"acme-api.example.com", "/fetch/en-us/item/42?", true},
		{"127.0.0.1:18080", "/v1/acme/fetch/en-us/item/42/?contentLinkDepth=2&expandAllContentLinks=true", true},
		{"edge.test", "/api/instances", true},
		{"edge.test", "/healthz", true},
		{"edge.test", "/acme/fetch/en-us/item/42?q=a%20b/../c//d", true}, // the query is not normalised
		{"edge.test", "/", true},

		{"Edge.Test", "/acme/fetch/en-us/item/42", false}, // fasthttp lower-cases the host
		{"", "/acme/fetch/en-us/item/42", false},
		{"[::1]:80", "/acme/fetch/en-us/item/42", false},
		{"edge.test:x", "/acme/fetch/en-us/item/42", false},
		{"user@edge.test", "/acme/fetch/en-us/item/42", false},
		{"edge.test", "/acme/fetch/..%2f..%2fetc/item/1", false},
		{"edge.test", "/acme/../api/instances", false},
		{"edge.test", "/x/./api", false},
		{"edge.test", "//api/instances", false},
		{"edge.test", "/acme/fetch/en-us/item/42#frag", false},
		{"edge.test", "/acme/fetch/en-us/item/42?next=http://x/", false},
		{"edge.test", "http://other.test/acme/fetch/en-us/item/42", false},
		{"edge.test", "*", false},
		{"edge.test", "/a\x01b", false},
		{"edge.test", "/acme/.well-known", false},
		{"edge.test", "/acme/fetch/en-us/item/42/..", false},
	}
	for _, tt := range tests {
		var rq fasthttp.Request
		rq.Header.SetHost(tt.host)
		rq.Header.SetRequestURI(tt.uri)
		_, ok := plainTarget(rq.Header.Host(), rq.Header.RequestURI())
		if ok != tt.plain {
			t.Errorf("plainTarget(%q, %q): ok = %v, want %v", tt.host, tt.uri, ok, tt.plain)
		}
		checkTarget(t, tt.host, tt.uri)
	}

	// Random targets over an alphabet rich in the bytes that matter.
	const hostChars, uriChars = "aZ0.-:@[]", "ab/.%2f?#&=:Ac-_~"
	rnd := rand.New(rand.NewPCG(1, 2))
	pick := func(chars string, n int) string {
		b := make([]byte, n)
		for i := range b {
			b[i] = chars[rnd.IntN(len(chars))]
		}
		return string(b)
	}
	plain := 0
	for range 20000 {
		host, uri := pick(hostChars, 1+rnd.IntN(4)), "/"+pick(uriChars, rnd.IntN(12))
		if _, ok := plainTarget([]byte(host), []byte(uri)); ok {
			plain++
		}
		checkTarget(t, host, uri)
	}
	if plain < 1000 {
		t.Errorf("only %d of the random targets were plain: the test checks too few", plain)
	}
}

// checkTarget checks that requestTarget gives what fasthttp's URI gives.
func checkTarget(t *testing.T, host, uri string) {
	t.Helper()
	var rq fasthttp.Request
	rq.Header.SetHost(host)
	rq.Header.SetRequestURI(uri)
	got := requestTarget(&rq)
	var ref fasthttp.Request
	ref.Header.SetHost(host)
	ref.Header.SetRequestURI(uri)
	u := ref.URI()
	for _, f := range []struct {
		name      string
		got, want []byte
	}{
		{"host", got.host, u.Host()},
		{"path", got.path, u.PathOriginal()},
		{"clean path", got.cleanPath, u.Path()},
		{"query", got.query, u.QueryString()},
	} {
		if !bytes.Equal(f.got, f.want) {
			t.Errorf("host %q, target %q: %s = %q, want %q (fasthttp's)", host, uri, f.name, f.got, f.want)
		}
	}
}

func BenchmarkPlainTarget(b *testing.B) {
	host, uri := []byte("acme-api.example.com:8080"), []byte("/acme/fetch/en-us/list/posts?take=10&skip=0&sort=properties.modified")
	for b.Loop() {
		plainTarget(host, uri)
	}
}
