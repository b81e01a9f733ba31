package guard

import (
	"bufio"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/valyala/fasthttp"
)

// serve runs a hardened fasthttp server answering "ok" on a Listener with
// opts, on a loopback port, until the test ends.
func serve(t *testing.T, opts Options, readTimeout time.Duration, h fasthttp.RequestHandler) (*Listener, string) {
	t.Helper()
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	if h == nil {
		h = func(c *fasthttp.RequestCtx) { c.SetBodyString("ok") }
	}
	srv := &fasthttp.Server{Handler: h, ReadTimeout: readTimeout, ReadBufferSize: 4096}
	Harden(srv, slog.New(slog.DiscardHandler))
	l := NewListener(ln, opts, slog.New(slog.DiscardHandler))
	go srv.Serve(l)
	t.Cleanup(func() { srv.Shutdown() })
	return l, ln.Addr().String()
}

// exchange sends raw on a new connection and returns the status of the
// answer, or 0 when the server closed the connection without one.
func exchange(t *testing.T, addr, raw string) int {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := io.WriteString(c, raw); err != nil {
		t.Fatal(err)
	}
	res, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		return 0
	}
	res.Body.Close()
	return res.StatusCode
}

func TestFraming(t *testing.T) {
	t.Parallel()
	_, addr := serve(t, Options{}, 5*time.Second, nil)
	for _, tc := range []struct {
		name, raw string
		want      int
	}{
		{"plain", "GET / HTTP/1.1\r\nHost: a\r\n\r\n", 200},
		{"HTTP/1.0 without Host", "GET / HTTP/1.0\r\n\r\n", 200},
		{"HTTP/1.1 without Host", "GET / HTTP/1.1\r\n\r\n", 400},
		{"two Hosts", "GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n", 400},
		{"two different Content-Length", "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\nab", 400},
		{"two equal Content-Length", "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 2\r\nContent-Length: 2\r\n\r\nab", 400},
		{"Content-Length and chunked", "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n", 400},
		{"chunked and Content-Length", "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\nContent-Length: 3\r\n\r\n0\r\n\r\n", 400},
		{"Content-Length with space", "POST / HTTP/1.1\r\nHost: a\r\nContent-Length : 3\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n", 400},
		{"oversized head", "GET / HTTP/1.1\r\nHost: a\r\nX-Big: " + strings.Repeat("a", 8000) + "\r\n\r\n", 431},
	} {
		if got := exchange(t, addr, tc.raw); got != tc.want && !(tc.want == 400 && got == 0) {
			t.Errorf("%s: status %d, want %d", tc.name, got, tc.want)
		}
	}
}

func TestStalledHead(t *testing.T) {
	t.Parallel()
	_, addr := serve(t, Options{}, 300*time.Millisecond, nil)
	if got := exchange(t, addr, "GET / HTTP/1.1\r\nHost: a\r\nX-Part"); got != 408 && got != 0 {
		t.Errorf("stalled head: status %d, want 408 or a close", got)
	}
}

// dialIdle opens n connections that send nothing.
func dialIdle(t *testing.T, addr string, n int) []net.Conn {
	t.Helper()
	var cs []net.Conn
	for range n {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		cs = append(cs, c)
		t.Cleanup(func() { c.Close() })
	}
	return cs
}

// waitOpen waits until l counts want open connections.
func waitOpen(t *testing.T, l *Listener, want int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for l.Open() != want {
		if time.Now().After(deadline) {
			t.Fatalf("open connections: %d, want %d", l.Open(), want)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func TestCapClosesIdleFirst(t *testing.T) {
	t.Parallel()
	l, addr := serve(t, Options{MaxConns: 8, MaxConnsPerAddr: -1}, 5*time.Second, nil)
	idle := dialIdle(t, addr, 8)
	waitOpen(t, l, 8)
	// A ninth client is served: the oldest idle connection makes room.
	if got := exchange(t, addr, "GET / HTTP/1.1\r\nHost: a\r\n\r\n"); got != 200 {
		t.Fatalf("over the cap: status %d, want 200", got)
	}
	idle[0].SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, err := idle[0].Read(make([]byte, 1)); err != io.EOF {
		t.Errorf("oldest idle connection: read %v, want EOF (closed to make room)", err)
	}
}

func TestCapPerAddr(t *testing.T) {
	t.Parallel()
	l, addr := serve(t, Options{MaxConns: 100, MaxConnsPerAddr: 4}, 5*time.Second, nil)
	dialIdle(t, addr, 10)
	// The others came from the same address and are closed as they come.
	waitOpen(t, l, 4)
	if got := exchange(t, addr, "GET / HTTP/1.1\r\nHost: a\r\n\r\n"); got != 200 {
		t.Errorf("over the address's cap: status %d, want 200 (an idle one of its makes room)", got)
	}
}

func TestAcceptRetries(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	fl := &failingListener{Listener: ln, fails: 3}
	l := NewListener(fl, Options{}, slog.New(slog.DiscardHandler))
	defer l.Close()
	go func() {
		c, err := net.Dial("tcp", ln.Addr().String())
		if err == nil {
			defer c.Close()
			time.Sleep(time.Second)
		}
	}()
	c, err := l.Accept()
	if err != nil {
		t.Fatalf("Accept after %d failures: %v", 3, err)
	}
	c.Close()
}

// failingListener fails its first accepts as a process out of descriptors.
type failingListener struct {
	net.Listener
	fails int
}

func (l *failingListener) Accept() (net.Conn, error) {
	if l.fails > 0 {
		l.fails--
		return nil, &net.OpError{Op: "accept", Net: "tcp", Err: errEMFILE}
	}
	return l.Listener.Accept()
}

func TestWriteStallCloses(t *testing.T) {
	t.Parallel()
	big := strings.Repeat("x", 1<<20)
	l, addr := serve(t, Options{WriteStall: 200 * time.Millisecond}, 5*time.Second,
		func(c *fasthttp.RequestCtx) { c.SetBodyString(big) })
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	// Pipelined requests whose answers are never read.
	go io.WriteString(c, strings.Repeat("GET / HTTP/1.1\r\nHost: a\r\n\r\n", 64))
	waitOpen(t, l, 1)
	waitOpen(t, l, 0)
}
