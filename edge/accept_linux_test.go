//go:build linux

package edge_test

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"log/slog"
	"net"
	"os"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/edgecms/edgecms/edge"
)

// TestAcceptWithoutDescriptors checks that an edge that cannot accept for
// want of descriptors accepts again once it can (fasthttp alone would stop
// serving at the first failure). It lowers the process's descriptor limit,
// so it does not run in parallel with other tests.
func TestAcceptWithoutDescriptors(t *testing.T) {
	st, _ := site(t)
	failed := &logWatch{msg: "accept failed; retrying", seen: make(chan struct{})}
	failed.Handler = testLog(t).Handler()
	e := startEdgeLogging(t, st, edge.Config{OriginURL: deadURL(t)}, slog.New(failed))
	get(t, e.url+"/acme/fetch/en-us/item/42", fetchKey)

	// The client's socket is made first; it connects (into the listener's
	// backlog) once no descriptor is left for the edge to accept it with.
	var restore func()
	d := net.Dialer{Control: func(string, string, syscall.RawConn) error {
		restore = noDescriptorLeft(t)
		return nil
	}}
	c, err := d.Dial("tcp", e.addr())
	if restore != nil {
		defer restore()
	}
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := io.WriteString(c, "GET /acme/fetch/en-us/item/42 HTTP/1.1\r\nHost: edge.test\r\nAPIKey: "+fetchKey+"\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	select {
	case <-failed.seen:
	case <-time.After(10 * time.Second):
		t.Fatal("the edge has not tried to accept the connection after 10 s")
	}
	restore()

	c.SetDeadline(time.Now().Add(10 * time.Second))
	head, err := bufio.NewReader(c).ReadSlice('\n')
	if err != nil || !bytes.HasPrefix(head, []byte("HTTP/1.1 200")) {
		t.Errorf("a connection made while the edge had no descriptor: %q, %v; want it answered once there are", head, err)
	}
	if r := get(t, e.url+"/acme/fetch/en-us/item/42", fetchKey); r.status != 200 {
		t.Errorf("a new connection afterwards: %d", r.status)
	}
}

// logWatch passes records to Handler and closes seen at the first whose
// message is msg.
type logWatch struct {
	slog.Handler
	msg  string
	seen chan struct{}
	once sync.Once
}

func (w *logWatch) Handle(ctx context.Context, r slog.Record) error {
	if r.Message == w.msg {
		w.once.Do(func() { close(w.seen) })
	}
	return w.Handler.Handle(ctx, r)
}

func (w *logWatch) WithAttrs(as []slog.Attr) slog.Handler {
	return &logWatch{Handler: w.Handler.WithAttrs(as), msg: w.msg, seen: w.seen}
}

func (w *logWatch) WithGroup(name string) slog.Handler {
	return &logWatch{Handler: w.Handler.WithGroup(name), msg: w.msg, seen: w.seen}
}

// noDescriptorLeft lowers the process's descriptor limit to the lowest free
// descriptor number, so that none can be opened, and returns what restores
// it (also done when the test ends).
func noDescriptorLeft(t *testing.T) (restore func()) {
	t.Helper()
	free, err := syscall.Open(os.DevNull, syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	syscall.Close(free)
	var old syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &old); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &syscall.Rlimit{Cur: uint64(free), Max: old.Max}); err != nil {
		t.Fatalf("lower the descriptor limit: %v", err)
	}
	var once sync.Once
	restore = func() { once.Do(func() { syscall.Setrlimit(syscall.RLIMIT_NOFILE, &old) }) }
	t.Cleanup(restore)
	if f, err := os.Open(os.DevNull); err == nil {
		f.Close()
		restore()
		t.Fatal("a descriptor could still be opened")
	}
	return restore
}
