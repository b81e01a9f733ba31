//go:build linux && !386

package edge_test

import (
	"bufio"
	"bytes"
	"io"
	"net"
	"os"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/edgecms/edgecms/edge"
)

// TestHitLoopHandsOverWithoutDescriptors checks that a connection is handed
// over, and its request answered, when the process has no descriptor to
// spare (handing over takes none).
func TestHitLoopHandsOverWithoutDescriptors(t *testing.T) {
	st, _ := site(t)
	e := startEdge(t, st, edge.Config{OriginURL: deadURL(t)})
	get(t, e.url+"/acme/fetch/en-us/item/42", fetchKey)
	c := e.dial(t)
	r := bufio.NewReader(c)
	io.WriteString(c, req("GET", "/acme/fetch/en-us/item/42", "APIKey", fetchKey))
	if _, err := readHead(r); err != nil {
		t.Fatal(err)
	}
	r.Discard(r.Buffered())
	time.Sleep(50 * time.Millisecond) // the body is read, the connection idle

	restore := noDescriptorLeft(t)
	defer restore()

	c.SetDeadline(time.Now().Add(10 * time.Second))
	io.WriteString(c, req("GET", "/acme/fetch/en-us/item/42", "APIKey", "nope"))
	head, err := readHead(r)
	if err != nil || !bytes.HasPrefix(head, []byte("HTTP/1.1 401")) {
		t.Fatalf("a request to hand over, with no descriptor to spare: %q, %v; want 401", head, err)
	}
}

// TestAcceptWithoutDescriptors checks that an edge that cannot accept for
// want of descriptors accepts again once it can, with the event loops and
// without (where fasthttp alone would stop serving at the first failure).
func TestAcceptWithoutDescriptors(t *testing.T) {
	st, _ := site(t)
	for _, noLoops := range []bool{false, true} {
		e := startEdge(t, st, edge.Config{OriginURL: deadURL(t), NoHitLoops: noLoops})
		get(t, e.url+"/acme/fetch/en-us/item/42", fetchKey)
		addr, err := net.ResolveTCPAddr("tcp", e.addr())
		if err != nil {
			t.Fatal(err)
		}

		// The client's socket is made first; it connects (into the
		// listener's backlog) and sends its request once no descriptor is
		// left for the edge to accept it with.
		fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
		if err != nil {
			t.Fatal(err)
		}
		restore := noDescriptorLeft(t)
		sa := &syscall.SockaddrInet4{Port: addr.Port}
		copy(sa.Addr[:], addr.IP.To4())
		err = syscall.Connect(fd, sa)
		if err == nil {
			_, err = syscall.Write(fd, []byte(req("GET", "/acme/fetch/en-us/item/42", "APIKey", fetchKey)))
		}
		time.Sleep(300 * time.Millisecond) // the edge tries to accept, and fails
		restore()
		if err != nil {
			syscall.Close(fd)
			t.Fatal(err)
		}
		// FileConn takes a duplicate. Close the *os.File, not fd: its
		// finalizer would close fd's number again later, by then another
		// test's socket.
		f := os.NewFile(uintptr(fd), "client")
		c, err := net.FileConn(f)
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		c.SetDeadline(time.Now().Add(10 * time.Second))
		head, err := readHead(bufio.NewReader(c))
		if err != nil || !bytes.HasPrefix(head, []byte("HTTP/1.1 200")) {
			t.Errorf("NoHitLoops %v: a connection made while the edge had no descriptor: %q, %v; want it answered once there are", noLoops, head, err)
		}
		if r := get(t, e.url+"/acme/fetch/en-us/item/42", fetchKey); r.status != 200 {
			t.Errorf("NoHitLoops %v: a new connection afterwards: %d", noLoops, r.status)
		}
	}
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
