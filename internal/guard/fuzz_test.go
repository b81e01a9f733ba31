package guard

import (
	"bufio"
	"bytes"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/valyala/fasthttp"
)

// FuzzRequest sends arbitrary bytes to a hardened server and checks what
// comes back: never a 5xx, and never a 2xx to a request whose framing is
// ambiguous (both Content-Length and Transfer-Encoding, two
// Content-Length, HTTP/1.1 without one Host).
func FuzzRequest(f *testing.F) {
	for _, s := range []string{
		"GET / HTTP/1.1\r\nHost: a\r\n\r\n",
		"GET / HTTP/1.0\r\n\r\n",
		"GET / HTTP/1.1\r\n\r\n",
		"POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\nab",
		"POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
		"POST / HTTP/1.1\r\nHost: a\r\ntransfer-encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n",
		"GET / HTTP/1.1\r\nHost: a\r\nX: " + strings.Repeat("b", 5000) + "\r\n\r\n",
	} {
		f.Add([]byte(s))
	}
	srv := &fasthttp.Server{Handler: func(c *fasthttp.RequestCtx) { c.SetBodyString("ok") }, ReadTimeout: time.Second, ReadBufferSize: 4096}
	Harden(srv, slog.New(slog.DiscardHandler))
	f.Fuzz(func(t *testing.T, raw []byte) {
		cc, sc := net.Pipe()
		done := make(chan struct{})
		go func() { defer close(done); srv.ServeConn(sc); sc.Close() }()
		go func() { cc.Write(raw); cc.Write([]byte("\r\n\r\n")) }()
		cc.SetReadDeadline(time.Now().Add(5 * time.Second))
		res, err := http.ReadResponse(bufio.NewReader(cc), nil)
		if err == nil {
			io.Copy(io.Discard, res.Body)
			res.Body.Close()
			if res.StatusCode >= 500 {
				t.Errorf("status %d for %q", res.StatusCode, raw)
			}
			if res.StatusCode < 300 && ambiguous(raw) {
				t.Errorf("status %d for the ambiguous %q", res.StatusCode, raw)
			}
		}
		cc.Close()
		<-done
	})
}

// ambiguous reports whether the first request head in raw has ambiguous
// framing, by a reading independent of Framing's: net/http's line rules.
func ambiguous(raw []byte) bool {
	head, _, ok := bytes.Cut(raw, []byte("\r\n\r\n"))
	if !ok {
		return false
	}
	ls := strings.Split(string(head), "\r\n")
	if len(ls) == 0 || strings.ContainsAny(string(head), "\n\r\x00") && strings.Count(string(head), "\n") != len(ls)-1 {
		return false // bare line ends: not judged here
	}
	var cl, te, host int
	for _, l := range ls[1:] {
		name, _, ok := strings.Cut(l, ":")
		if !ok {
			continue
		}
		switch strings.ToLower(strings.TrimRight(name, " \t")) {
		case "content-length":
			cl++
		case "transfer-encoding":
			te++
		case "host":
			host++
		}
	}
	http11 := strings.HasSuffix(ls[0], " HTTP/1.1")
	return cl > 1 || cl > 0 && te > 0 || http11 && host != 1
}
