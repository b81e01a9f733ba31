package edge

import (
	"bufio"
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/valyala/fasthttp"
)

// hitHeadSeeds are request heads of every shape parseHitHead tells apart.
var hitHeadSeeds = []string{
	"GET /acme/fetch/en-us/item/42 HTTP/1.1\r\nHost: edge.test\r\nAPIKey: k\r\n\r\n",
	"HEAD /fetch/en-us/item/42?contentLinkDepth=2 HTTP/1.1\r\nhost: edge.test:80\r\napikey:  k \r\nGuid: acme\r\nIf-None-Match: W/\"e\"\r\n\r\n",
	"GET / HTTP/1.1\r\nHost: a\r\nConnection: keep-alive\r\nContent-Length: 0\r\nUser-Agent: x\r\n\r\nGET / HTTP/1.1\r\n",
	"GET / HTTP/1.1\r\nHost: a\r\nAPIKey: \tk\r\n\r\n",
	"GET / HTTP/1.1\r\nHost: a\r\nAPIKey: a\r\nAPIKey: b\r\n\r\n",
	"GET / HTTP/1.1\r\nHost: a\r\nContent-Length: 3\r\n\r\nabc",
	"GET / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
	"GET / HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n",
	"GET / HTTP/1.0\r\nHost: a\r\n\r\n",
	"GET http://a/ HTTP/1.1\r\nHost: a\r\n\r\n",
	"GET / HTTP/1.1\nHost: a\n\n",
	"GET / HTTP/1.1\r\nHost: a\r\n folded\r\n\r\n",
	"GET / HTTP/1.1\r\nHost : a\r\n\r\n",
	"POST / HTTP/1.1\r\nHost: a\r\n\r\n",
	"GET /a b HTTP/1.1\r\nHost: a\r\n\r\n",
	"GET / HTTP/1.1\r\nHost: a\r\nX: \x01\r\n\r\n",
	"GET / HTTP/1.1\r\nHost: a\r\n",
	"GET / HTTP/1.1\r\nHost: a\r\nTrailer: Host\r\nCookie: a=b\r\nContent-Type: x\r\nUser-Agent: u\r\n\r\n",
	"GET / HTTP/1.1\r\nHost: a\r\nX-Pad: " + strings.Repeat("p", maxHitHead) + "\r\n\r\n",
}

// TestParseHitHead checks the heads parseHitHead answers, leaves to
// fasthttp, or waits for more of.
func TestParseHitHead(t *testing.T) {
	tests := []struct {
		raw  string
		n    int // 0: incomplete
		ok   bool
		want hitRequest
	}{
		{hitHeadSeeds[0], len(hitHeadSeeds[0]), true, hitRequest{uri: []byte("/acme/fetch/en-us/item/42"), host: []byte("edge.test"), apiKey: []byte("k")}},
		{hitHeadSeeds[1], len(hitHeadSeeds[1]), true, hitRequest{head: true, uri: []byte("/fetch/en-us/item/42?contentLinkDepth=2"), host: []byte("edge.test:80"), apiKey: []byte("k"), guid: []byte("acme"), ifNoneMatch: []byte(`W/"e"`)}},
		{hitHeadSeeds[2], strings.Index(hitHeadSeeds[2], "\r\n\r\n") + 4, true, hitRequest{uri: []byte("/"), host: []byte("a")}},
		{hitHeadSeeds[3], len(hitHeadSeeds[3]), true, hitRequest{uri: []byte("/"), host: []byte("a"), apiKey: []byte("\tk")}},
		{"GET / HTTP/1.1\r\nHost: a\r\n", 0, true, hitRequest{}},
		{"GET / HTTP/1.1\r\nHost: a\r\n\r", 0, true, hitRequest{}},
		{"GET / HTTP/1.1\r\nAPIKey: k\r\n\r\n", 0, false, hitRequest{}}, // no host
	}
	for _, s := range hitHeadSeeds[4:16] {
		tests = append(tests, struct {
			raw  string
			n    int
			ok   bool
			want hitRequest
		}{s, 0, false, hitRequest{}})
	}
	for _, tt := range tests {
		r, n, ok := parseHitHead([]byte(tt.raw))
		if n != tt.n || ok != tt.ok {
			t.Errorf("parseHitHead(%q) = %d, %v, want %d, %v", tt.raw, n, ok, tt.n, tt.ok)
			continue
		}
		if ok && n > 0 && !sameHitRequest(r, tt.want) {
			t.Errorf("parseHitHead(%q) = %s, want %s", tt.raw, r, tt.want)
		}
	}
}

func sameHitRequest(a, b hitRequest) bool {
	return a.head == b.head && bytes.Equal(a.uri, b.uri) && bytes.Equal(a.host, b.host) && bytes.Equal(a.apiKey, b.apiKey) &&
		bytes.Equal(a.guid, b.guid) && bytes.Equal(a.ifNoneMatch, b.ifNoneMatch)
}

// FuzzParseHitHead checks that every head parseHitHead answers is one that
// fasthttp reads the same way: same length, method, target and header
// values, no body, kept alive. (What it hands over, fasthttp answers by
// definition.)
func FuzzParseHitHead(f *testing.F) {
	for _, s := range hitHeadSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		r, n, ok := parseHitHead(b)
		if !ok || n == 0 {
			return
		}
		var rq fasthttp.Request
		br := bufio.NewReader(bytes.NewReader(b[:n]))
		if err := rq.Read(br); err != nil {
			t.Fatalf("parseHitHead answers %q, which fasthttp rejects: %v", b[:n], err)
		}
		h := &rq.Header
		method := "GET"
		if r.head {
			method = "HEAD"
		}
		switch {
		case br.Buffered() != 0:
			t.Fatalf("%q: fasthttp left %d bytes of the head", b[:n], br.Buffered())
		case string(h.Method()) != method:
			t.Fatalf("%q: method %q, fasthttp %q", b[:n], method, h.Method())
		case !bytes.Equal(h.RequestURI(), r.uri):
			t.Fatalf("%q: target %q, fasthttp %q", b[:n], r.uri, h.RequestURI())
		case !bytes.Equal(h.Host(), r.host):
			t.Fatalf("%q: host %q, fasthttp %q", b[:n], r.host, h.Host())
		case !bytes.Equal(h.PeekBytes(hAPIKey), r.apiKey):
			t.Fatalf("%q: APIKey %q, fasthttp %q", b[:n], r.apiKey, h.PeekBytes(hAPIKey))
		case !bytes.Equal(h.PeekBytes(hGuid), r.guid):
			t.Fatalf("%q: Guid %q, fasthttp %q", b[:n], r.guid, h.PeekBytes(hGuid))
		case !bytes.Equal(h.PeekBytes(hIfNoneMatch), r.ifNoneMatch):
			t.Fatalf("%q: If-None-Match %q, fasthttp %q", b[:n], r.ifNoneMatch, h.PeekBytes(hIfNoneMatch))
		case len(rq.Body()) != 0 || h.ConnectionClose():
			t.Fatalf("%q: fasthttp reads a body or closes the connection", b[:n])
		}
	})
}

func (r hitRequest) String() string {
	return fmt.Sprintf("{head %v uri %q host %q apiKey %q guid %q ifNoneMatch %q}", r.head, r.uri, r.host, r.apiKey, r.guid, r.ifNoneMatch)
}
