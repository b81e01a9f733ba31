package edge

import (
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"sync"
	"sync/atomic"
	"time"
)

// Listen serves the edge on addr (on the app's network, tcp4 unless
// configured) until Shutdown. Serve the edge with Listen, ListenTLS or
// Serve rather than on App() directly: their connections keep the read,
// write and idle timeouts without arming a timer per request (see
// coarseListener).
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
	return s.app.Listener(tls.NewListener(newCoarseListener(ln, sweepEvery, s.log), cfg))
}

// Serve serves the edge on the connections ln accepts (a plain TCP
// listener: ListenTLS serves TLS) until Shutdown, which closes ln. On
// Linux, event loops answer the cache hits of a TCP listener and hand the
// rest to the fasthttp server (see hitLoops), unless Config.NoHitLoops;
// they accept on a duplicate of ln's socket, so closing ln does not stop
// them: Shutdown does.
func (s *Server) Serve(ln net.Listener) error {
	if !s.cfg.NoHitLoops {
		hl, err := newHitLoops(s, ln)
		if err != nil {
			ln.Close()
			return err
		}
		if hl != nil {
			defer hl.Close() // should the server end other than by Shutdown
			ln = hl
		}
	}
	return s.app.Listener(newCoarseListener(ln, sweepEvery, s.log))
}

// sweepEvery is how often a coarseListener applies the deadlines that have
// passed: how late, at most, a timeout takes effect.
const sweepEvery = 500 * time.Millisecond

// coarseListener hands out connections whose deadlines cost no timer.
//
// fasthttp sets three socket deadlines per request (idle, read, write):
// each one modifies a runtime timer under the connection's poll lock, a
// few percent of the CPU time of a cache hit. The connections of a
// coarseListener only record the deadlines they are asked for, and a
// sweeper applies to the socket, every sweepEvery, those that have passed,
// so that the blocked read or write fails with a timeout as it would have.
// A deadline thus takes effect at most sweepEvery late, which for the
// edge's timeouts (30 s read, 60 s write, 120 s idle) changes nothing; one
// due within two sweeps (or already past) is applied to the socket at once.
// Once the listener is closed (Shutdown), the connections still open get
// their deadlines applied and pass later ones straight to the socket.
type coarseListener struct {
	net.Listener
	every time.Duration
	log   *slog.Logger
	// now is the time of the last sweep (Unix nanoseconds): a clock that
	// connections read without a system call.
	now  atomic.Int64
	done chan struct{}
	once sync.Once

	mu     sync.Mutex
	conns  map[*coarseConn]struct{}
	closed bool
}

func newCoarseListener(ln net.Listener, every time.Duration, log *slog.Logger) *coarseListener {
	l := &coarseListener{Listener: ln, every: every, log: log, done: make(chan struct{}), conns: map[*coarseConn]struct{}{}}
	l.now.Store(time.Now().UnixNano())
	go l.sweep()
	return l
}

// Accept waits for the next connection. It retries what fails other than
// a closed listener (out of descriptors or memory, mostly), waiting 5 ms
// and doubling up to 1 s, as net/http does: fasthttp would stop serving
// for good at the first such error.
func (l *coarseListener) Accept() (net.Conn, error) {
	var nc net.Conn
	for wait := time.Duration(0); ; {
		var err error
		if nc, err = l.Listener.Accept(); err == nil {
			break
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
	c := &coarseConn{Conn: nc, l: l, io: newSockIO(nc)}
	l.mu.Lock()
	if l.closed {
		c.direct = true
	} else {
		l.conns[c] = struct{}{}
	}
	l.mu.Unlock()
	return c, nil
}

// Close stops accepting, stops the sweeper and hands the deadlines of the
// open connections to their sockets.
func (l *coarseListener) Close() error {
	err := l.Listener.Close()
	l.once.Do(func() {
		close(l.done)
		l.mu.Lock()
		l.closed = true
		conns := l.conns
		l.conns = nil
		l.mu.Unlock()
		for c := range conns {
			c.goDirect()
		}
	})
	return err
}

// sweep applies the deadlines that have passed, every l.every, until the
// listener is closed.
func (l *coarseListener) sweep() {
	t := time.NewTicker(l.every)
	defer t.Stop()
	var conns []*coarseConn
	for {
		select {
		case <-l.done:
			return
		case <-t.C:
		}
		now := time.Now()
		l.now.Store(now.UnixNano())
		l.mu.Lock()
		for c := range l.conns {
			conns = append(conns, c)
		}
		l.mu.Unlock()
		for _, c := range conns {
			c.expire(now)
		}
		clear(conns) // hold no closed connection until the next sweep
		conns = conns[:0]
	}
}

func (l *coarseListener) forget(c *coarseConn) {
	l.mu.Lock()
	delete(l.conns, c)
	l.mu.Unlock()
}

// coarseConn is a connection of a coarseListener. Its reads and writes go
// through sockIO when it is a TCP connection.
type coarseConn struct {
	net.Conn
	l  *coarseListener
	io *sockIO // nil: reads and writes go to Conn

	mu sync.Mutex
	// read and write are the deadlines asked for (zero: none).
	read, write time.Time
	// readSet and writeSet record that the socket holds a deadline (read
	// or write), which the next deadline asked for must then replace.
	readSet, writeSet bool
	// direct sends deadlines straight to the socket: the listener is
	// closed and sweeps no more.
	direct bool
}

// Read reads from the connection.
func (c *coarseConn) Read(b []byte) (int, error) {
	if c.io == nil || len(b) == 0 {
		return c.Conn.Read(b)
	}
	return c.io.read(b)
}

// Write writes to the connection.
func (c *coarseConn) Write(b []byte) (int, error) {
	if c.io == nil || len(b) == 0 {
		return c.Conn.Write(b)
	}
	return c.io.write(b)
}

// SetDeadline sets the read and write deadlines.
func (c *coarseConn) SetDeadline(t time.Time) error { return c.set(t, true, true) }

// SetReadDeadline sets the read deadline.
func (c *coarseConn) SetReadDeadline(t time.Time) error { return c.set(t, true, false) }

// SetWriteDeadline sets the write deadline.
func (c *coarseConn) SetWriteDeadline(t time.Time) error { return c.set(t, false, true) }

func (c *coarseConn) set(t time.Time, read, write bool) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	apply := c.direct || (!t.IsZero() && t.UnixNano() < c.l.now.Load()+2*int64(c.l.every))
	var err error
	if read {
		c.read = t
		if apply || c.readSet {
			err = c.Conn.SetReadDeadline(t)
			c.readSet = !t.IsZero()
		}
	}
	if write {
		c.write = t
		if apply || c.writeSet {
			if werr := c.Conn.SetWriteDeadline(t); err == nil {
				err = werr
			}
			c.writeSet = !t.IsZero()
		}
	}
	return err
}

// expire applies to the socket the deadlines that have passed at now.
func (c *coarseConn) expire(now time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.direct {
		c.applyLocked(now)
	}
}

// goDirect applies the deadlines asked for to the socket and passes later
// ones straight to it.
func (c *coarseConn) goDirect() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.direct = true
	c.applyLocked(time.Time{})
}

// applyLocked applies to the socket the deadlines asked for that have
// passed at now (all of them when now is zero). c.mu is held.
func (c *coarseConn) applyLocked(now time.Time) {
	if !c.readSet && !c.read.IsZero() && (now.IsZero() || !now.Before(c.read)) {
		c.Conn.SetReadDeadline(c.read) // an error means the connection is closed
		c.readSet = true
	}
	if !c.writeSet && !c.write.IsZero() && (now.IsZero() || !now.Before(c.write)) {
		c.Conn.SetWriteDeadline(c.write)
		c.writeSet = true
	}
}

// Close closes the connection.
func (c *coarseConn) Close() error {
	c.l.forget(c)
	return c.Conn.Close()
}
