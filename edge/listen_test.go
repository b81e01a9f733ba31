package edge

import (
	"errors"
	"io"
	"log/slog"
	"net"
	"os"
	"syscall"
	"testing"
	"time"
)

// coarsePair returns a connection accepted by a coarseListener sweeping
// every 5 ms, and the client's end of it.
func coarsePair(t *testing.T) (*coarseListener, *coarseConn, net.Conn) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	l := newCoarseListener(ln, 5*time.Millisecond, slog.New(slog.DiscardHandler))
	t.Cleanup(func() { l.Close() })
	client, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { client.Close() })
	c, err := l.Accept()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return l, c.(*coarseConn), client
}

// readWithin reads one byte from c, failing the test if the read has not
// returned after a generous bound (a guard against hanging, not a timing
// assertion).
func readWithin(t *testing.T, c net.Conn) error {
	t.Helper()
	errc := make(chan error, 1)
	go func() {
		var b [1]byte
		_, err := c.Read(b[:])
		errc <- err
	}()
	select {
	case err := <-errc:
		return err
	case <-time.After(10 * time.Second):
		t.Fatal("read still blocked after 10 s")
		return nil
	}
}

func TestCoarseDeadlines(t *testing.T) {
	t.Run("a passed read deadline fails the blocked read", func(t *testing.T) {
		_, c, client := coarsePair(t)
		if err := c.SetReadDeadline(time.Now().Add(50 * time.Millisecond)); err != nil {
			t.Fatal(err)
		}
		if c.readSet {
			t.Fatal("a deadline 10 sweeps away was applied to the socket at once")
		}
		if err := readWithin(t, c); !errors.Is(err, os.ErrDeadlineExceeded) {
			t.Fatalf("read = %v, want a deadline error", err)
		}
		// A new deadline replaces the one the sweeper set on the socket.
		if err := c.SetReadDeadline(time.Time{}); err != nil {
			t.Fatal(err)
		}
		client.Write([]byte("x"))
		if err := readWithin(t, c); err != nil {
			t.Fatalf("read after the deadline was cleared = %v", err)
		}
	})

	t.Run("a deadline replaced in time never fires", func(t *testing.T) {
		_, c, client := coarsePair(t)
		c.SetReadDeadline(time.Now().Add(30 * time.Millisecond))
		c.SetReadDeadline(time.Now().Add(time.Hour))
		time.Sleep(60 * time.Millisecond) // several sweeps past the first deadline
		client.Write([]byte("x"))
		if err := readWithin(t, c); err != nil {
			t.Fatalf("read = %v, want the byte", err)
		}
	})

	t.Run("a deadline in the past applies at once", func(t *testing.T) {
		_, c, _ := coarsePair(t)
		c.SetReadDeadline(time.Now().Add(-time.Second))
		if !c.readSet {
			t.Fatal("a past deadline was not applied to the socket")
		}
		if err := readWithin(t, c); !errors.Is(err, os.ErrDeadlineExceeded) {
			t.Fatalf("read = %v, want a deadline error", err)
		}
	})

	t.Run("a passed write deadline fails the blocked write", func(t *testing.T) {
		_, c, _ := coarsePair(t) // the client never reads
		c.SetWriteDeadline(time.Now().Add(50 * time.Millisecond))
		errc := make(chan error, 1)
		go func() {
			buf := make([]byte, 1<<20)
			for {
				if _, err := c.Write(buf); err != nil {
					errc <- err
					return
				}
			}
		}()
		select {
		case err := <-errc:
			if !errors.Is(err, os.ErrDeadlineExceeded) {
				t.Fatalf("write = %v, want a deadline error", err)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("write still blocked after 10 s")
		}
	})

	t.Run("closing the listener hands the deadlines to the socket", func(t *testing.T) {
		l, c, client := coarsePair(t)
		c.SetReadDeadline(time.Now().Add(time.Hour))
		c.SetWriteDeadline(time.Now().Add(time.Hour))
		l.Close()
		if !c.readSet || !c.writeSet {
			t.Fatal("the deadlines asked for were not applied at close")
		}
		c.SetReadDeadline(time.Now().Add(50 * time.Millisecond))
		if err := readWithin(t, c); !errors.Is(err, os.ErrDeadlineExceeded) {
			t.Fatalf("read = %v, want a deadline error", err)
		}
		c.SetReadDeadline(time.Time{})
		client.Write([]byte("x"))
		if err := readWithin(t, c); err != nil {
			t.Fatalf("read = %v, want the byte", err)
		}
	})

	t.Run("closed connections are forgotten", func(t *testing.T) {
		l, c, client := coarsePair(t)
		c.Close()
		if _, err := client.Read(make([]byte, 1)); err != io.EOF {
			t.Errorf("client read after close = %v, want EOF", err)
		}
		l.mu.Lock()
		n := len(l.conns)
		l.mu.Unlock()
		if n != 0 {
			t.Errorf("listener tracks %d connections after close, want 0", n)
		}
	})
}

// failingListener fails its first accepts with fail, then accepts.
type failingListener struct {
	net.Listener
	fail  []error
	tries int
}

func (l *failingListener) Accept() (net.Conn, error) {
	l.tries++
	if len(l.fail) > 0 {
		err := l.fail[0]
		l.fail = l.fail[1:]
		return nil, err
	}
	return l.Listener.Accept()
}

// TestCoarseListenerRetriesAccept checks that an accept that fails for
// want of descriptors is retried (fasthttp stops serving at the first
// error it is given), and that a closed listener is not.
func TestCoarseListenerRetriesAccept(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	emfile := &net.OpError{Op: "accept", Net: "tcp", Err: os.NewSyscallError("accept4", syscall.EMFILE)}
	fl := &failingListener{Listener: ln, fail: []error{emfile, emfile, emfile}}
	l := newCoarseListener(fl, time.Hour, slog.New(slog.DiscardHandler))
	defer l.Close()
	go func() {
		if c, err := net.Dial("tcp", ln.Addr().String()); err == nil {
			defer c.Close()
			time.Sleep(time.Second)
		}
	}()
	c, err := l.Accept()
	if err != nil {
		t.Fatalf("Accept after three EMFILE: %v", err)
	}
	c.Close()
	if fl.tries != 4 {
		t.Errorf("%d tries, want 4", fl.tries)
	}
	l.Close()
	if _, err := l.Accept(); !errors.Is(err, net.ErrClosed) {
		t.Errorf("Accept on a closed listener: %v, want net.ErrClosed", err)
	}
}
