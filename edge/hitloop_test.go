package edge_test

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/edgecms/edgecms/edge"
)

// script is what a client sends on one connection: chunks written one
// after another (with a pause between them, so that the edge reads them
// apart), and the methods of the requests in them, in order, to know which
// answers have a body.
type script struct {
	name    string
	chunks  []string
	methods []string
}

// req is a request head as a client sends it.
func req(method, target string, headers ...string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s HTTP/1.1\r\nHost: edge.test\r\n", method, target)
	for i := 0; i+1 < len(headers); i += 2 {
		fmt.Fprintf(&b, "%s: %s\r\n", headers[i], headers[i+1])
	}
	b.WriteString("\r\n")
	return b.String()
}

// one is a script of one request in one write.
func one(name, method, raw string) script {
	return script{name: name, chunks: []string{raw}, methods: []string{method}}
}

var dateLine = regexp.MustCompile(`(?m)^Date: [^\r]*\r$`)

// play runs sc on a new connection to addr and returns the answers, with
// their Date headers blanked. An answer without a length ends the
// connection.
func play(t *testing.T, addr string, sc script) string {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(20 * time.Second))
	for i, chunk := range sc.chunks {
		if i > 0 {
			time.Sleep(2 * time.Millisecond)
		}
		if _, err := io.WriteString(c, chunk); err != nil {
			t.Fatalf("%s: write: %v", sc.name, err)
		}
	}
	r := bufio.NewReader(c)
	var out bytes.Buffer
	for _, method := range sc.methods {
		head, err := readHead(r)
		out.Write(head)
		if err != nil {
			fmt.Fprintf(&out, "[%v]", err)
			break
		}
		status, _ := strconv.Atoi(string(head[9:12]))
		n := -1
		if m := regexp.MustCompile(`(?mi)^Content-Length: (\d+)\r$`).FindSubmatch(head); m != nil {
			n, _ = strconv.Atoi(string(m[1]))
		}
		switch {
		case method == "HEAD" || status == 304 || status < 200:
		case n >= 0:
			body := make([]byte, n)
			if _, err := io.ReadFull(r, body); err != nil {
				t.Fatalf("%s: read body: %v", sc.name, err)
			}
			out.Write(body)
		default:
			body, _ := io.ReadAll(r)
			out.Write(body)
		}
	}
	return dateLine.ReplaceAllString(out.String(), "Date: -\r")
}

// readHead reads an answer's head, through its empty line.
func readHead(r *bufio.Reader) ([]byte, error) {
	var head []byte
	for {
		line, err := r.ReadBytes('\n')
		head = append(head, line...)
		if err != nil {
			return head, err
		}
		if string(line) == "\r\n" {
			return head, nil
		}
	}
}

// TestHitLoopAnswersAsFasthttp plays the same requests to two edges on the
// same store, one answering cache hits from its event loops and one
// serving every connection with a goroutine (NoHitLoops), and checks that
// the answers are the same bytes: hits, 304s and HEADs from the loops, and
// whatever the loops hand over (misses, preview, errors, requests outside
// what they read), alone, pipelined after hits, split in pieces.
func TestHitLoopAnswersAsFasthttp(t *testing.T) {
	st, item := site(t)
	big := strings.Repeat("x", 3<<20)
	put(t, st, "acme/fetch/en-us/item/7/d1.json", `{"big":"`+big+`"}`)
	org := newOrigin(t)
	now := time.Now()
	clock := func() time.Time { return now }
	loops := startEdge(t, st, edge.Config{OriginURL: org.URL, Now: clock})
	plain := startEdge(t, st, edge.Config{OriginURL: org.URL, Now: clock, NoHitLoops: true})

	const itemPath = "/acme/fetch/en-us/item/42"
	hit := req("GET", itemPath, "APIKey", fetchKey)
	scripts := []script{
		one("warm the item", "GET", hit),
		one("warm the list page", "GET", req("GET", "/acme/fetch/en-us/list/posts", "APIKey", fetchKey)),
		one("warm the large item", "GET", req("GET", "/acme/fetch/en-us/item/7", "APIKey", fetchKey)),
		one("item", "GET", hit),
		one("item again", "GET", hit),
		one("list page", "GET", req("GET", "/acme/fetch/en-us/list/posts?take=10", "APIKey", fetchKey)),
		one("large item", "GET", req("GET", "/acme/fetch/en-us/item/7", "APIKey", fetchKey)),
		one("HEAD", "HEAD", req("HEAD", itemPath, "APIKey", fetchKey)),
		one("If-None-Match", "GET", req("GET", itemPath, "APIKey", fetchKey, "If-None-Match", `"x", `+item.ETag)),
		one("If-None-Match weak", "GET", req("GET", itemPath, "APIKey", fetchKey, "If-None-Match", "W/"+item.ETag)),
		one("If-None-Match other", "GET", req("GET", itemPath, "APIKey", fetchKey, "If-None-Match", `"other"`)),
		one("HEAD If-None-Match", "HEAD", req("HEAD", itemPath, "APIKey", fetchKey, "If-None-Match", item.ETag)),
		one("header names in any case, blanks around values", "GET", req("GET", itemPath, "aPiKeY", " "+fetchKey+"\t", "user-agent", "x", "Connection", "Keep-Alive", "Content-Length", "0")),
		one("guid header", "GET", req("GET", "/fetch/en-us/item/42", "APIKey", fetchKey, "Guid", "acme")),
		one("other spelling", "GET", req("GET", "/v1/ACME/Fetch/en-US/item/42/?contentLinkDepth=1&expandAllContentLinks=false", "APIKey", fetchKey)),

		one("no key", "GET", req("GET", itemPath)),
		one("empty key", "GET", req("GET", itemPath, "APIKey", "")),
		one("unknown key", "GET", req("GET", itemPath, "APIKey", "nope")),
		one("disabled key", "GET", req("GET", itemPath, "APIKey", "disabled")),
		one("expired key", "GET", req("GET", itemPath, "APIKey", "expired")),
		one("preview key on fetch", "GET", req("GET", itemPath, "APIKey", previewKey)),
		one("bad parameter", "GET", req("GET", "/acme/fetch/en-us/list/posts?take=0", "APIKey", fetchKey)),
		one("path traversal", "GET", req("GET", "/acme/fetch/..%2f..%2fetc/item/1", "APIKey", fetchKey)),
		one("dot segments", "GET", req("GET", "/acme/fetch/en-us/x/../item/42", "APIKey", fetchKey)),
		one("store miss", "GET", req("GET", "/acme/fetch/en-us/item/43", "APIKey", fetchKey)),
		one("preview", "GET", req("GET", "/acme/preview/en-us/item/42", "APIKey", previewKey)),
		one("no manifest", "GET", req("GET", "/other/fetch/en-us/item/1", "APIKey", "whatever")),
		one("health check", "GET", req("GET", "/healthz")),
		one("management API", "GET", req("GET", "/api/instances")),
		one("management API, shaped as a read", "GET", req("GET", "/api/fetch/en-us/item/42", "APIKey", fetchKey)),
		one("POST", "POST", "POST "+itemPath+" HTTP/1.1\r\nHost: edge.test\r\nAPIKey: "+fetchKey+"\r\nContent-Length: 2\r\n\r\n{}"),
		one("GET with a body", "GET", "GET "+itemPath+" HTTP/1.1\r\nHost: edge.test\r\nAPIKey: "+fetchKey+"\r\nContent-Length: 3\r\n\r\nabc"),
		one("chunked GET", "GET", "GET "+itemPath+" HTTP/1.1\r\nHost: edge.test\r\nAPIKey: "+fetchKey+"\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n"),
		one("Connection: close", "GET", req("GET", itemPath, "APIKey", fetchKey, "Connection", "close")),
		one("HTTP/1.0", "GET", "GET "+itemPath+" HTTP/1.0\r\nHost: edge.test\r\nAPIKey: "+fetchKey+"\r\n\r\n"),
		one("duplicate key header", "GET", req("GET", itemPath, "APIKey", "nope", "APIKey", fetchKey)),
		one("absolute target", "GET", req("GET", "http://edge.test"+itemPath, "APIKey", fetchKey)),
		one("upper-case host", "GET", "GET "+itemPath+" HTTP/1.1\r\nHost: EDGE.test\r\nAPIKey: "+fetchKey+"\r\n\r\n"),
		one("no host", "GET", "GET "+itemPath+" HTTP/1.1\r\nAPIKey: "+fetchKey+"\r\n\r\n"),
		one("bare line feeds", "GET", "GET "+itemPath+" HTTP/1.1\nHost: edge.test\nAPIKey: "+fetchKey+"\n\n"),
		one("long head", "GET", req("GET", itemPath, "APIKey", fetchKey, "X-Pad", strings.Repeat("p", 5000))),
		one("not HTTP", "GET", "hello\r\n\r\n"),
		one("Trailer: Host", "GET", req("GET", itemPath, "APIKey", fetchKey, "Trailer", "Host")),
		one("Trailer: Content-Length", "GET", req("GET", itemPath, "APIKey", fetchKey, "Trailer", "Content-Length")),
		one("head of 4095 bytes", "GET", padded(itemPath, 4095)),
		one("head of 4096 bytes", "GET", padded(itemPath, 4096)),
		one("head of 4097 bytes", "GET", padded(itemPath, 4097)),
		one("Connection: Close", "GET", req("GET", itemPath, "APIKey", fetchKey, "Connection", "Close")),

		{name: "pipelined hits", chunks: []string{hit + req("HEAD", itemPath, "APIKey", fetchKey) + hit}, methods: []string{"GET", "HEAD", "GET"}},
		{name: "pipelined hit, preview, hit", chunks: []string{hit + req("GET", "/acme/preview/en-us/item/42", "APIKey", previewKey) + hit}, methods: []string{"GET", "GET", "GET"}},
		{name: "hit, then an error, then a hit", chunks: []string{hit, req("GET", itemPath, "APIKey", "nope"), hit}, methods: []string{"GET", "GET", "GET"}},
		{name: "hit, then the start of a miss", chunks: []string{hit + "GET /acme/fetch/en-us/item/43 HTTP/1.1\r\nHost: edge.test\r\n", "APIKey: " + fetchKey + "\r\n\r\n"}, methods: []string{"GET", "GET"}},
		{name: "a hit in pieces", chunks: split(hit, 7), methods: []string{"GET"}},
		{name: "a hit byte by byte", chunks: split(hit, 1), methods: []string{"GET"}},
		{name: "large items pipelined", chunks: []string{strings.Repeat(req("GET", "/acme/fetch/en-us/item/7", "APIKey", fetchKey), 3)}, methods: []string{"GET", "GET", "GET"}},
	}
	for _, sc := range scripts {
		want := play(t, plain.addr(), sc)
		got := play(t, loops.addr(), sc)
		if got != want {
			t.Errorf("%s: the event loops answered\n%s\nfasthttp answered\n%s", sc.name, clip(got), clip(want))
		}
		if strings.HasPrefix(sc.name, "item") && !strings.Contains(got, "X-Cache: HIT") {
			t.Errorf("%s: no hit:\n%s", sc.name, clip(got))
		}
	}
}

// padded is a hit for path whose head is size bytes long.
func padded(path string, size int) string {
	base := len(req("GET", path, "APIKey", fetchKey, "X-Pad", ""))
	return req("GET", path, "APIKey", fetchKey, "X-Pad", strings.Repeat("p", size-base))
}

// split cuts s into pieces of n bytes.
func split(s string, n int) []string {
	var out []string
	for len(s) > n {
		out = append(out, s[:n])
		s = s[n:]
	}
	return append(out, s)
}

// clip shortens long answers for failure messages.
func clip(s string) string {
	if len(s) > 2000 {
		return s[:1000] + fmt.Sprintf("\n[... %d bytes ...]\n", len(s)-2000) + s[len(s)-1000:]
	}
	return s
}

// addr is the edge's host:port.
func (e *runningEdge) addr() string { return strings.TrimPrefix(e.url, "http://") }

// dial opens a connection to the edge, closed when the test ends.
func (e *runningEdge) dial(t testing.TB) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", e.addr())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// TestHitLoopHandsOver checks that a connection stays with the event loops
// while its requests are hits, and that the first other request hands it
// over to the fasthttp server, which answers it and those after it.
func TestHitLoopHandsOver(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the event loops are Linux's")
	}
	st, _ := site(t)
	org := newOrigin(t)
	e := startEdge(t, st, edge.Config{OriginURL: org.URL})
	get(t, e.url+"/acme/fetch/en-us/item/42", fetchKey) // cached
	base := e.srv.LoopConns()

	c := e.dial(t)
	r := bufio.NewReader(c)
	ask := func(raw string, status int, xcache string) {
		t.Helper()
		if _, err := io.WriteString(c, raw); err != nil {
			t.Fatal(err)
		}
		head, err := readHead(r)
		if err != nil {
			t.Fatalf("read: %v (%q)", err, head)
		}
		if !bytes.HasPrefix(head, []byte("HTTP/1.1 "+strconv.Itoa(status))) || !bytes.Contains(head, []byte("X-Cache: "+xcache)) {
			t.Fatalf("answer %q, want %d with X-Cache: %s", head, status, xcache)
		}
		m := regexp.MustCompile(`(?m)^Content-Length: (\d+)\r$`).FindSubmatch(head)
		n, _ := strconv.Atoi(string(m[1]))
		if _, err := io.ReadFull(r, make([]byte, n)); err != nil {
			t.Fatal(err)
		}
	}
	hit := req("GET", "/acme/fetch/en-us/item/42", "APIKey", fetchKey)
	for range 3 {
		ask(hit, 200, "HIT")
	}
	waitFor(t, 5*time.Second, "the loops hold the connection", func() bool { return e.srv.LoopConns() == base+1 })
	ask(req("GET", "/acme/preview/en-us/item/42", "APIKey", previewKey), 200, "MISS")
	if n := e.srv.LoopConns(); n != base {
		t.Errorf("after a preview request the loops hold %d connections, want %d", n, base)
	}
	for range 3 {
		ask(hit, 200, "HIT") // now answered by fasthttp
	}
}

// TestHitLoopTimeouts checks that the event loops close a connection idle
// for longer than the idle timeout, and one whose request head is not
// complete after the read timeout, and keep one that is busy, whatever
// the requests' clock says.
func TestHitLoopTimeouts(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the event loops are Linux's")
	}
	edge.SetTimeouts(t, 1500*time.Millisecond, time.Second)
	st, _ := site(t)
	// The requests' clock (Config.Now) plays no part in timeouts.
	past := time.Now().Add(-time.Hour)
	e := startEdge(t, st, edge.Config{OriginURL: deadURL(t), Now: func() time.Time { return past }})
	hit := req("GET", "/acme/fetch/en-us/item/42", "APIKey", fetchKey)
	get(t, e.url+"/acme/fetch/en-us/item/42", fetchKey) // cached

	closed := func(c net.Conn) bool { // reads what was sent, then tells
		c.SetReadDeadline(time.Now().Add(10 * time.Millisecond))
		for {
			if _, err := c.Read(make([]byte, 64<<10)); err != nil {
				return err == io.EOF
			}
		}
	}
	idle, partial, busy := e.dial(t), e.dial(t), e.dial(t)
	io.WriteString(idle, hit)
	io.WriteString(partial, hit[:20])
	start := time.Now()
	for time.Since(start) < 3*time.Second { // busy asks every 100 ms
		if _, err := io.WriteString(busy, hit); err != nil {
			t.Fatalf("the busy connection: %v", err)
		}
		if closed(busy) {
			t.Fatal("the busy connection was closed")
		}
		time.Sleep(100 * time.Millisecond)
	}
	if !closed(idle) {
		t.Error("the idle connection is still open after the idle timeout")
	}
	if !closed(partial) {
		t.Error("the connection with half a request is still open after the read timeout")
	}
}

// TestHitLoopSlowReader checks that answers a client does not read yet wait
// for it without holding up the loop's other connections, and arrive
// whole and in order.
func TestHitLoopSlowReader(t *testing.T) {
	st, _ := site(t)
	body := `{"big":"` + strings.Repeat("y", 4<<20) + `"}`
	put(t, st, "acme/fetch/en-us/item/7/d1.json", body)
	e := startEdge(t, st, edge.Config{OriginURL: deadURL(t), CacheBytes: 64 << 20})
	get(t, e.url+"/acme/fetch/en-us/item/7", fetchKey) // cached

	slow := e.dial(t)
	const n = 5
	if _, err := io.WriteString(slow, strings.Repeat(req("GET", "/acme/fetch/en-us/item/7", "APIKey", fetchKey), n)); err != nil {
		t.Fatal(err)
	}
	// While slow reads nothing, others are answered.
	for range 20 {
		if r := get(t, e.url+"/acme/fetch/en-us/item/42", fetchKey); r.status != 200 {
			t.Fatalf("status %d while a client reads slowly", r.status)
		}
	}
	slow.SetDeadline(time.Now().Add(30 * time.Second))
	r := bufio.NewReader(slow)
	for i := range n {
		head, err := readHead(r)
		if err != nil || !bytes.HasPrefix(head, []byte("HTTP/1.1 200")) {
			t.Fatalf("answer %d: %q, %v", i, head, err)
		}
		got := make([]byte, len(body))
		if _, err := io.ReadFull(r, got); err != nil || string(got) != body {
			t.Fatalf("answer %d: body of %d bytes, want %d: %v", i, len(got), len(body), err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestHitLoopShutdown checks that Shutdown closes the connections the
// loops hold and those handed over, and that Serve returns.
func TestHitLoopShutdown(t *testing.T) {
	st, _ := site(t)
	e := startEdge(t, st, edge.Config{OriginURL: deadURL(t)})
	get(t, e.url+"/acme/fetch/en-us/item/42", fetchKey)
	var conns []net.Conn
	for i := range 4 {
		c := e.dial(t)
		key := fetchKey
		if i%2 == 1 {
			key = "nope" // handed over
		}
		io.WriteString(c, req("GET", "/acme/fetch/en-us/item/42", "APIKey", key))
		if _, err := readHead(bufio.NewReader(c)); err != nil {
			t.Fatal(err)
		}
		conns = append(conns, c)
	}
	e.stop() // returns once Serve has returned
	for i, c := range conns {
		c.SetReadDeadline(time.Now().Add(5 * time.Second))
		if _, err := io.ReadAll(c); err != nil {
			t.Errorf("connection %d: %v, want it closed", i, err)
		}
	}
	if _, err := net.DialTimeout("tcp", e.addr(), time.Second); err == nil {
		t.Error("the edge still accepts connections after Shutdown")
	}
}

// TestHitLoopHalfClose checks that a client that sends its requests and
// then ends its side of the connection gets every answer, also when they
// fill the loop's read buffer exactly.
func TestHitLoopHalfClose(t *testing.T) {
	st, _ := site(t)
	for _, noLoops := range []bool{false, true} {
		e := startEdge(t, st, edge.Config{OriginURL: deadURL(t), NoHitLoops: noLoops})
		get(t, e.url+"/acme/fetch/en-us/item/42", fetchKey)
		hit := req("GET", "/acme/fetch/en-us/item/42", "APIKey", fetchKey)
		hit = req("GET", "/acme/fetch/en-us/item/42", "APIKey", fetchKey, "X-Pad", strings.Repeat("p", 256-len(hit)-9))
		for _, n := range []int{1, 63, 64, 65, 200} { // 64 requests are 16 KiB
			c := e.dial(t)
			io.WriteString(c, strings.Repeat(hit, n))
			c.(*net.TCPConn).CloseWrite()
			c.SetDeadline(time.Now().Add(10 * time.Second))
			b, err := io.ReadAll(c)
			c.Close()
			if got := strings.Count(string(b), "HTTP/1.1 200 OK"); got != n || err != nil {
				t.Errorf("NoHitLoops %v: %d requests, then the end of the client's side: %d answers (%v)", noLoops, n, got, err)
			}
		}
	}
}

// TestHitLoopBoundedMemory checks that a client that asks for a large
// object many times in one small write and reads nothing makes the edge
// hold neither copies of it nor the answers to all its requests.
func TestHitLoopBoundedMemory(t *testing.T) {
	st, _ := site(t)
	body := `{"big":"` + strings.Repeat("x", 4<<20) + `"}`
	put(t, st, "acme/fetch/en-us/item/7/d1.json", body)
	e := startEdge(t, st, edge.Config{OriginURL: deadURL(t), CacheBytes: 64 << 20})
	get(t, e.url+"/acme/fetch/en-us/item/7", fetchKey)
	r := req("GET", "/acme/fetch/en-us/item/7", "APIKey", fetchKey)

	before := heapInUse()
	const n = 100 // 400 MiB of answers for an 8 KiB write
	var conns []net.Conn
	for range 4 {
		c := e.dial(t)
		io.WriteString(c, strings.Repeat(r, n))
		conns = append(conns, c)
	}
	time.Sleep(500 * time.Millisecond) // the loops answer what they can
	if grown := heapInUse() - before; grown > 32<<20 {
		t.Errorf("4 clients not reading their answers made the heap grow by %d MiB", grown>>20)
	}
	// And the answers are all there, whole, once read.
	c := conns[0]
	c.SetDeadline(time.Now().Add(60 * time.Second))
	br := bufio.NewReader(c)
	got := make([]byte, len(body))
	for i := range n {
		head, err := readHead(br)
		if err != nil || !bytes.HasPrefix(head, []byte("HTTP/1.1 200")) {
			t.Fatalf("answer %d: %q, %v", i, head, err)
		}
		if _, err := io.ReadFull(br, got); err != nil || string(got) != body {
			t.Fatalf("answer %d: a body of %d bytes that differs from the object's: %v", i, len(got), err)
		}
	}
}

// TestHitLoopShutdownSendsAnswers checks that Shutdown lets the answers a
// loop holds reach a client that reads them, then closes; and that a
// client that never reads holds Shutdown no longer than the write
// timeout, also when a request that is not a hit waits behind the answers.
func TestHitLoopShutdownSendsAnswers(t *testing.T) {
	st, _ := site(t)
	body := `{"big":"` + strings.Repeat("z", 4<<20) + `"}`
	put(t, st, "acme/fetch/en-us/item/7/d1.json", body)
	e := startEdge(t, st, edge.Config{OriginURL: deadURL(t), CacheBytes: 64 << 20, OriginTimeout: 2 * time.Second})
	get(t, e.url+"/acme/fetch/en-us/item/7", fetchKey)
	big := req("GET", "/acme/fetch/en-us/item/7", "APIKey", fetchKey)

	dial := func(raw string) net.Conn {
		c := e.dial(t)
		io.WriteString(c, raw)
		return c
	}
	reader := dial(strings.Repeat(big, 3))
	stuck := dial(big + req("GET", "/acme/fetch/en-us/item/42", "APIKey", "nope"))
	time.Sleep(300 * time.Millisecond)

	done := make(chan error, 1)
	go func() { done <- e.srv.Shutdown(context.Background()) }()
	reader.SetDeadline(time.Now().Add(30 * time.Second))
	b, err := io.ReadAll(reader)
	if n := strings.Count(string(b), body); n != 3 || err != nil {
		t.Errorf("during Shutdown the reading client got %d whole answers of 3 (%v)", n, err)
	}
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("Shutdown: %v", err)
		}
	case <-time.After(30 * time.Second): // a bound, well past the 2 s write timeout
		t.Fatal("Shutdown still waits for a client that reads nothing")
	}
	stuck.SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, err := io.ReadAll(stuck); err != nil && !errors.Is(err, syscall.ECONNRESET) {
		t.Errorf("the client that read nothing: %v, want its connection closed", err)
	}
	e.stop()
}

// TestHitLoopReadTimeouts checks the read timeout: a new connection that
// sends nothing is closed after it (not after the longer idle timeout),
// and a client pipelining steadily is not, though its reads end in the
// middle of requests.
func TestHitLoopReadTimeouts(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the event loops are Linux's")
	}
	edge.SetTimeouts(t, time.Second, time.Minute)
	st, _ := site(t)
	e := startEdge(t, st, edge.Config{OriginURL: deadURL(t)})
	get(t, e.url+"/acme/fetch/en-us/item/42", fetchKey)
	hit := req("GET", "/acme/fetch/en-us/item/42", "APIKey", fetchKey)

	silent := e.dial(t)
	steady := e.dial(t)
	half := len(hit) / 2
	io.WriteString(steady, hit[:half])
	br := bufio.NewReader(steady)
	for range 12 { // 3 s of a request and a half every 250 ms
		time.Sleep(250 * time.Millisecond)
		if _, err := io.WriteString(steady, hit[half:]+hit[:half]); err != nil {
			t.Fatalf("the steady client: %v", err)
		}
		steady.SetReadDeadline(time.Now().Add(5 * time.Second))
		head, err := readHead(br)
		if err != nil {
			t.Fatalf("the steady client was cut off: %v", err)
		}
		m := regexp.MustCompile(`(?m)^Content-Length: (\d+)\r$`).FindSubmatch(head)
		n, _ := strconv.Atoi(string(m[1]))
		io.ReadFull(br, make([]byte, n))
	}
	silent.SetReadDeadline(time.Now().Add(time.Second))
	if _, err := silent.Read(make([]byte, 1)); err != io.EOF {
		t.Errorf("a connection silent for 3 s with a 1 s read timeout: %v, want closed", err)
	}
}

// TestHitLoopWriteTimeoutPerAnswer checks that the write timeout bounds
// each answer, as fasthttp's does, not all the answers a client asked for:
// a client that reads steadily gets them all.
func TestHitLoopWriteTimeoutPerAnswer(t *testing.T) {
	for _, noLoops := range []bool{false, true} {
		st, _ := site(t)
		body := `{"big":"` + strings.Repeat("z", 4<<20) + `"}`
		put(t, st, "acme/fetch/en-us/item/7/d1.json", body)
		e := startEdge(t, st, edge.Config{OriginURL: deadURL(t), CacheBytes: 64 << 20, OriginTimeout: 2 * time.Second, NoHitLoops: noLoops})
		get(t, e.url+"/acme/fetch/en-us/item/7", fetchKey)
		c := e.dial(t)
		const n = 10 // about 0.4 s each at the pace below: 4 s in all
		io.WriteString(c, strings.Repeat(req("GET", "/acme/fetch/en-us/item/7", "APIKey", fetchKey), n))
		c.SetDeadline(time.Now().Add(60 * time.Second))
		buf := make([]byte, 64<<10)
		total := 0
		for total < n*len(body) {
			k, err := c.Read(buf)
			total += k
			if err != nil {
				break
			}
			time.Sleep(6 * time.Millisecond)
		}
		if total < n*len(body) {
			t.Errorf("NoHitLoops %v: a client reading steadily was cut off after %d of %d answers' bytes", noLoops, total, n*len(body))
		}
	}
}

// TestHitLoopPinsLittle checks that clients that ask, in one write each,
// for many large objects and read nothing do not keep in memory the
// objects the cache has let go: each connection holds at most 256 KiB of
// answers beyond the one it is sending.
func TestHitLoopPinsLittle(t *testing.T) {
	st, _ := site(t)
	const conns, per, size, cacheBytes = 6, 60, 512 << 10, 32 << 20
	for g := range conns {
		for i := range per {
			put(t, st, fmt.Sprintf("acme/fetch/en-us/item/%d/d1.json", 1000+g*per+i), `{"b":"`+strings.Repeat(string(rune('a'+g)), size)+`"}`)
		}
	}
	e := startEdge(t, st, edge.Config{OriginURL: deadURL(t), CacheBytes: cacheBytes, OriginTimeout: time.Minute})
	before := heapInUse()
	for g := range conns {
		var raw strings.Builder
		for i := range per {
			p := fmt.Sprintf("/acme/fetch/en-us/item/%d", 1000+g*per+i)
			get(t, e.url+p, fetchKey) // cached, evicting the objects of the connections before
			raw.WriteString(req("GET", p, "APIKey", fetchKey))
		}
		c := e.dial(t)
		io.WriteString(c, raw.String()) // and read nothing
		time.Sleep(200 * time.Millisecond)
	}
	limit := int64(cacheBytes + conns*(256<<10+2*size) + 8<<20)
	if grown := heapInUse() - before; grown > limit {
		t.Errorf("%d clients reading nothing: the heap grew by %d MiB, want at most %d MiB (the cache and what each connection may hold)", conns, grown>>20, limit>>20)
	}
}

// heapInUse is the heap in use after a collection, in bytes.
func heapInUse() int64 {
	var m runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&m)
	return int64(m.HeapInuse)
}

// TestHitLoopFairness checks that a client pipelining without pause does
// not keep a loop from its other connections: with one loop, a client
// asking once every 20 ms is answered all along.
func TestHitLoopFairness(t *testing.T) {
	st, _ := site(t)
	prev := runtime.GOMAXPROCS(1) // one loop
	e := startEdge(t, st, edge.Config{OriginURL: deadURL(t)})
	runtime.GOMAXPROCS(prev)
	get(t, e.url+"/acme/fetch/en-us/item/42", fetchKey)
	hit := req("GET", "/acme/fetch/en-us/item/42", "APIKey", fetchKey)

	probe := e.dial(t)
	pr := bufio.NewReader(probe)
	ask := func(i int) {
		t.Helper()
		probe.SetDeadline(time.Now().Add(10 * time.Second))
		io.WriteString(probe, hit)
		head, err := readHead(pr)
		if err != nil {
			t.Fatalf("request %d of the other client, while one floods the loop: %v", i, err)
		}
		m := regexp.MustCompile(`(?m)^Content-Length: (\d+)\r$`).FindSubmatch(head)
		n, _ := strconv.Atoi(string(m[1]))
		io.ReadFull(pr, make([]byte, n))
	}
	ask(0) // the loop holds the connection before the flood begins
	flood := e.dial(t)
	var wg sync.WaitGroup
	wg.Add(2)
	defer wg.Wait()
	defer flood.Close()
	// Large socket buffers and batches keep far more than one read of
	// requests waiting at the edge all along.
	flood.(*net.TCPConn).SetWriteBuffer(8 << 20)
	flood.(*net.TCPConn).SetReadBuffer(8 << 20)
	batch := []byte(strings.Repeat(req("HEAD", "/acme/fetch/en-us/item/42", "APIKey", fetchKey), 16384))
	go func() { // asks without pause
		defer wg.Done()
		for {
			if _, err := flood.Write(batch); err != nil {
				return
			}
		}
	}()
	go func() { // and reads its answers as fast as they come
		defer wg.Done()
		buf := make([]byte, 1<<20)
		for {
			if _, err := flood.Read(buf); err != nil {
				return
			}
		}
	}()
	time.Sleep(100 * time.Millisecond)
	for i := range 50 {
		ask(i + 1)
		time.Sleep(20 * time.Millisecond)
	}
}

// TestHitLoopForwardedFor checks that the origin sees the client's address
// for a request handed over, also when the client is gone by then.
func TestHitLoopForwardedFor(t *testing.T) {
	st, _ := site(t)
	org := newOrigin(t)
	e := startEdge(t, st, edge.Config{OriginURL: org.URL})
	get(t, e.url+"/acme/fetch/en-us/item/42", fetchKey)
	const n = 20
	for i := range n {
		c := e.dial(t)
		post := fmt.Sprintf("POST /api/login?n=%d HTTP/1.1\r\nHost: edge.test\r\nContent-Length: 2\r\n\r\n{}", i)
		io.WriteString(c, req("GET", "/acme/fetch/en-us/item/42", "APIKey", fetchKey)+post)
		c.Close() // before the edge hands the POST over
	}
	waitFor(t, 10*time.Second, "the origin gets every POST", func() bool {
		org.mu.Lock()
		defer org.mu.Unlock()
		posts := 0
		for _, r := range org.reqs {
			if r.method == "POST" {
				posts++
			}
		}
		return posts == n
	})
	org.mu.Lock()
	defer org.mu.Unlock()
	for _, r := range org.reqs {
		if got := r.header.Get("X-Forwarded-For"); r.method == "POST" && got != "127.0.0.1" {
			t.Errorf("%s: X-Forwarded-For %q, want 127.0.0.1", r.uri, got)
		}
	}
}
