package edge_test

import (
	"io"
	"net"
	"os"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/edgecms/edgecms/edge"
	"github.com/edgecms/edgecms/internal/guard"
	"github.com/edgecms/edgecms/store"
)

// BenchmarkSlowReaders measures how much 2,000 connections that pipeline
// requests for a 64 KB object and never read the answers make the edge
// grow (issue 19 finding 4: at most 150 MB), beside 2,000 connections that
// send nothing. The growth is the process's resident memory (the clients'
// sockets hold no buffers of their own) once every connection has sent its
// requests and the edge has answered until the sockets were full.
//
//	go test ./edge -run X -bench SlowReaders -benchtime 1x
func BenchmarkSlowReaders(b *testing.B) {
	for _, tc := range []struct {
		name     string
		requests int
	}{{"idle", 0}, {"pipelining", 64}} {
		b.Run(tc.name, func(b *testing.B) {
			for b.Loop() {
				b.ReportMetric(slowReaders(b, 2000, tc.requests), "MB")
			}
		})
	}
}

// slowReaders opens n connections to a fresh edge, each sending requests
// pipelined GETs and never reading, and returns the growth of the
// process's resident memory in MB.
func slowReaders(b *testing.B, n, requests int) float64 {
	st := store.NewMemory(nil)
	putManifest(b, st, guid, key{secret: fetchKey, typ: "fetch"})
	put(b, st, itemKey, strings.Repeat("x", 64<<10), "acme.en-us.i:42")
	e := startEdge(b, st, edge.Config{OriginURL: deadURL(b), Conns: guard.Options{MaxConns: 2 * n, MaxConnsPerAddr: -1, WriteStall: time.Minute}})
	defer e.stop()
	req := "GET /acme/fetch/en-us/item/42 HTTP/1.1\r\nHost: edge.test\r\nAPIKey: " + fetchKey + "\r\n\r\n"
	batch := strings.Repeat(req, requests)
	runtime.GC()
	before := rss(b)
	conns := make([]net.Conn, 0, n)
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	for range n {
		c, err := net.Dial("tcp", e.addr())
		if err != nil {
			b.Fatal(err)
		}
		conns = append(conns, c)
		if requests > 0 {
			c.SetWriteDeadline(time.Now().Add(50 * time.Millisecond))
			// The edge stops reading once its answers fill the sockets;
			// what it did not read stays in the kernel.
			io.WriteString(c, batch)
		}
	}
	// Settled: the resident size no longer grows between two looks.
	after := rss(b)
	for {
		time.Sleep(500 * time.Millisecond)
		now := rss(b)
		if now-after < 1<<20 {
			after = max(now, after)
			break
		}
		after = now
	}
	return float64(after-before) / (1 << 20)
}

// rss is the process's resident set size in bytes.
func rss(b *testing.B) int64 {
	raw, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		b.Fatal(err)
	}
	f := strings.Fields(string(raw))
	pages, _ := strconv.ParseInt(f[1], 10, 64)
	return pages * int64(os.Getpagesize())
}
