package webhooks

import (
	"net"
	"strconv"
	"syscall"
	"testing"
	"time"
)

// unansweredConnects returns the address of a loopback listener whose
// connection attempts hang: it never accepts, and its accept queue is
// full, so that Linux drops the SYNs of further connects (the client
// retransmits, and waits, as it would for an address that drops packets).
func unansweredConnects(t *testing.T) string {
	t.Helper()
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { syscall.Close(fd) })
	if err := syscall.Bind(fd, &syscall.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Listen(fd, 0); err != nil {
		t.Fatal(err)
	}
	sa, err := syscall.Getsockname(fd)
	if err != nil {
		t.Fatal(err)
	}
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(sa.(*syscall.SockaddrInet4).Port))
	// Fill the accept queue until a connect no longer completes.
	for i := 0; ; i++ {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err != nil {
			if ne, ok := err.(net.Error); ok && ne.Timeout() {
				return addr
			}
			t.Fatalf("fill the accept queue: %v", err)
		}
		t.Cleanup(func() { c.Close() })
		if i == 16 {
			t.Fatal("the accept queue took 16 connections without filling up")
		}
	}
}

// TestConnectTimeout checks that connecting has its own, short, timeout:
// an endpoint whose connects hang fails after ConnectTimeout with a
// lastError that says so, not after the attempt timeout (a minute here).
// Today's main waits 10 s to connect, then reports an attempt timeout.
func TestConnectTimeout(t *testing.T) {
	t.Parallel()
	addr := unansweredConnects(t)
	e := newEnvOpts(t, DispatcherConfig{}, Options{Policy: loopback(), Timeout: time.Minute, ConnectTimeout: 200 * time.Millisecond})
	w := e.webhook("http://"+addr+"/hook", Input{})
	d, err := e.store.Test(e.ctx, e.inst, w.RowKey)
	if err != nil {
		t.Fatal(err)
	}
	if want := "timeout: could not connect within 200ms"; d.LastError != want || d.Success {
		t.Errorf("test delivery to an address that drops connects: lastError %q, success %v; want %q, false", d.LastError, d.Success, want)
	}
}
