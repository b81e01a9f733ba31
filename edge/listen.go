package edge

import (
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"sync"
	"time"
)

// Listen serves the edge on addr (on the app's network, tcp4 unless
// configured) until Shutdown. Serve the edge with Listen, ListenTLS or
// Serve rather than on App() directly: their listeners retry an accept
// that fails (see retryListener).
func (s *Server) Listen(addr string) error {
	ln, err := net.Listen(s.app.Config().Network, addr)
	if err != nil {
		return fmt.Errorf("edge: listen: %w", err)
	}
	return s.Serve(ln)
}

// ListenTLS serves the edge over TLS on addr, with the certificate and key
// in the PEM files certFile and keyFile (TLS 1.2 at least, as Fiber's
// ListenTLS).
func (s *Server) ListenTLS(addr, certFile, keyFile string) error {
	cert, err := tls.LoadX509KeyPair(certFile, keyFile)
	if err != nil {
		return fmt.Errorf("edge: load TLS key pair from %q and %q: %w", certFile, keyFile, err)
	}
	ln, err := net.Listen(s.app.Config().Network, addr)
	if err != nil {
		return fmt.Errorf("edge: listen: %w", err)
	}
	cfg := &tls.Config{MinVersion: tls.VersionTLS12, Certificates: []tls.Certificate{cert}}
	return s.app.Listener(tls.NewListener(newRetryListener(ln, s.log), cfg))
}

// Serve serves the edge on the connections ln accepts until Shutdown,
// which closes ln.
func (s *Server) Serve(ln net.Listener) error {
	return s.app.Listener(newRetryListener(ln, s.log))
}

// retryListener retries an accept that fails other than by the listener
// being closed: out of descriptors or memory, mostly. fasthttp stops
// serving for good at the first error Accept returns, so a moment without
// a free descriptor would end the edge.
type retryListener struct {
	net.Listener
	log  *slog.Logger
	done chan struct{}
	once sync.Once
}

func newRetryListener(ln net.Listener, log *slog.Logger) *retryListener {
	return &retryListener{Listener: ln, log: log, done: make(chan struct{})}
}

// Accept waits for the next connection. It retries what fails other than
// a closed listener, waiting 5 ms and doubling up to 1 s, as net/http
// does.
func (l *retryListener) Accept() (net.Conn, error) {
	for wait := time.Duration(0); ; {
		c, err := l.Listener.Accept()
		if err == nil {
			return c, nil
		}
		if errors.Is(err, net.ErrClosed) {
			return nil, err
		}
		if wait == 0 {
			wait = 5 * time.Millisecond
			l.log.Warn("edge: accept failed; retrying", "err", err)
		} else {
			wait = min(2*wait, time.Second)
		}
		select {
		case <-l.done:
			return nil, net.ErrClosed
		case <-time.After(wait):
		}
	}
}

// Close stops accepting, also an Accept waiting to retry.
func (l *retryListener) Close() error {
	l.once.Do(func() { close(l.done) })
	return l.Listener.Close()
}
