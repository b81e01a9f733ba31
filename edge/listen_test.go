package edge

import (
	"errors"
	"log/slog"
	"net"
	"os"
	"syscall"
	"testing"
)

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

// TestRetryListener checks that an accept that fails for want of
// descriptors is retried (fasthttp stops serving at the first error it is
// given), and that a closed listener is not.
func TestRetryListener(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	emfile := &net.OpError{Op: "accept", Net: "tcp", Err: os.NewSyscallError("accept4", syscall.EMFILE)}
	fl := &failingListener{Listener: ln, fail: []error{emfile, emfile, emfile}}
	l := newRetryListener(fl, slog.New(slog.DiscardHandler))
	defer l.Close()
	// The connection waits in the listener's backlog until accepted.
	client, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
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
