// Package guard protects edgecms's public HTTP ports from what a socket
// alone can do to them: floods of connections, clients that stop reading,
// malformed or ambiguous request framing.
//
// Listener wraps a net.Listener: it retries accepts that fail for want of a
// descriptor (fasthttp stops serving at the first error that is not a
// timeout), caps the open connections in all and per client address,
// closing idle connections first, and closes a connection whose writes
// make no progress (a reader that fell behind). Harden sets up a
// fasthttp.Server to go with it: answers to unreadable requests (400, 408,
// 413, 431) that are logged at debug level, and the framing rules of
// Framing. Both the origin (Fiber) and the edge serve through them.
package guard

import (
	"crypto/tls"
	"errors"
	"io"
	"log/slog"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/valyala/fasthttp"
)

// Options bounds the connections of a Listener. Zero values take the
// defaults.
type Options struct {
	// MaxConns caps the open connections (default DefaultMaxConns).
	MaxConns int
	// MaxConnsPerAddr caps the open connections of one client IP address
	// (default MaxConns/4, at least 64; negative: no cap, for a listener
	// only the process's own edge reaches).
	MaxConnsPerAddr int
	// WriteStall closes a connection when one write makes no progress for
	// this long: the client stopped reading (default 10 s).
	WriteStall time.Duration
}

// DefaultWriteStall is the default of Options.WriteStall.
const DefaultWriteStall = 10 * time.Second

// withDefaults fills in the zero fields of o.
func (o Options) withDefaults() Options {
	if o.MaxConns <= 0 {
		o.MaxConns = DefaultMaxConns()
	}
	if o.MaxConnsPerAddr == 0 {
		o.MaxConnsPerAddr = max(o.MaxConns/4, 64)
	}
	if o.WriteStall <= 0 {
		o.WriteStall = DefaultWriteStall
	}
	return o
}

// Listener is a net.Listener that survives failing accepts and bounds its
// connections (see the package comment). Serve it with a server whose
// ConnState is ConnState (Harden sets it), so that it knows which
// connections are idle.
type Listener struct {
	net.Listener
	log  *slog.Logger
	opts Options
	done chan struct{}
	once sync.Once

	mu     sync.Mutex
	conns  map[*conn]struct{}
	byAddr map[string]int
	// lastRefusal is when a refused connection was last logged, so that a
	// flood logs once a second.
	lastRefusal time.Time
}

// NewListener wraps ln.
func NewListener(ln net.Listener, opts Options, log *slog.Logger) *Listener {
	return &Listener{Listener: ln, log: log, opts: opts.withDefaults(), done: make(chan struct{}),
		conns: map[*conn]struct{}{}, byAddr: map[string]int{}}
}

// NewTLSListener wraps ln in TLS with cfg, then in a Listener: the caps
// count connections before their handshake, and a stalled writer is
// detected below TLS's records.
func NewTLSListener(ln net.Listener, cfg *tls.Config, opts Options, log *slog.Logger) *Listener {
	return NewListener(tls.NewListener(ln, cfg), opts, log)
}

// Accept waits for the next connection. It retries what fails other than
// a closed listener, waiting 5 ms and doubling up to 1 s as net/http does,
// and first closes an idle connection to free its descriptor. A
// connection over a cap, when no idle one can make room, is closed at
// once.
func (l *Listener) Accept() (net.Conn, error) {
	for wait := time.Duration(0); ; {
		nc, err := l.Listener.Accept()
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return nil, err
			}
			l.mu.Lock()
			l.evictIdle("")
			l.mu.Unlock()
			if wait == 0 {
				wait = 5 * time.Millisecond
				l.log.Warn("accept failed; retrying", "addr", l.Addr().String(), "err", err)
			} else {
				wait = min(2*wait, time.Second)
			}
			select {
			case <-l.done:
				return nil, net.ErrClosed
			case <-time.After(wait):
			}
			continue
		}
		wait = 0
		if c := l.admit(nc); c != nil {
			if _, ok := nc.(*tls.Conn); ok {
				return &tlsConn{c}, nil
			}
			return c, nil
		}
	}
}

// admit registers nc, making room under the caps by closing an idle
// connection, or closes nc and returns nil when there is none.
func (l *Listener) admit(nc net.Conn) *conn {
	addr := remoteIP(nc)
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.opts.MaxConnsPerAddr > 0 && l.byAddr[addr] >= l.opts.MaxConnsPerAddr && !l.evictIdle(addr) ||
		len(l.conns) >= l.opts.MaxConns && !l.evictIdle("") {
		nc.Close()
		if now := time.Now(); now.Sub(l.lastRefusal) >= time.Second {
			l.lastRefusal = now
			l.log.Warn("connection refused: too many open connections", "addr", l.Addr().String(), "client", addr,
				"open", len(l.conns), "fromClient", l.byAddr[addr], "max", l.opts.MaxConns, "maxPerAddr", l.opts.MaxConnsPerAddr)
		}
		return nil
	}
	c := &conn{Conn: nc, l: l, addr: addr, stall: l.opts.WriteStall, idleSince: time.Now()}
	l.conns[c] = struct{}{}
	l.byAddr[addr]++
	return c
}

// evictIdle closes the connection idle the longest, of client address addr
// when not empty. It reports whether there was one. l.mu is held.
func (l *Listener) evictIdle(addr string) bool {
	var oldest *conn
	for c := range l.conns {
		if c.busy || (addr != "" && c.addr != addr) {
			continue
		}
		if oldest == nil || c.idleSince.Before(oldest.idleSince) {
			oldest = c
		}
	}
	if oldest == nil {
		return false
	}
	l.forget(oldest)
	// Closing makes the server's read fail, which ends the connection's
	// goroutine.
	oldest.Conn.Close()
	return true
}

// forget removes c from the counts. l.mu is held.
func (l *Listener) forget(c *conn) {
	if _, ok := l.conns[c]; !ok {
		return
	}
	delete(l.conns, c)
	if l.byAddr[c.addr]--; l.byAddr[c.addr] <= 0 {
		delete(l.byAddr, c.addr)
	}
}

// Open returns the number of open connections.
func (l *Listener) Open() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.conns)
}

// Close stops accepting, also an Accept waiting to retry.
func (l *Listener) Close() error {
	l.once.Do(func() { close(l.done) })
	return l.Listener.Close()
}

// ConnState is the fasthttp.Server.ConnState hook that tells a Listener
// which of its connections are idle (waiting for a request), and so may be
// closed to make room.
func ConnState(nc net.Conn, st fasthttp.ConnState) {
	var c *conn
	switch v := nc.(type) {
	case *conn:
		c = v
	case *tlsConn:
		c = v.conn
	default:
		return
	}
	l := c.l
	l.mu.Lock()
	defer l.mu.Unlock()
	switch st {
	case fasthttp.StateActive:
		c.busy = true
	case fasthttp.StateIdle:
		c.busy, c.idleSince = false, time.Now()
	case fasthttp.StateClosed, fasthttp.StateHijacked:
		l.forget(c)
	}
}

// remoteIP is the IP address of nc's peer, without the port.
func remoteIP(nc net.Conn) string {
	a := nc.RemoteAddr()
	if ta, ok := a.(*net.TCPAddr); ok {
		return ta.IP.String()
	}
	host, _, err := net.SplitHostPort(a.String())
	if err != nil {
		return a.String()
	}
	return host
}

// conn is a connection of a Listener.
type conn struct {
	net.Conn
	l     *Listener
	addr  string
	stall time.Duration
	// busy and idleSince are guarded by l.mu.
	busy      bool
	idleSince time.Time
	// linger is set when the connection is closed after an error answer to
	// a request not read to its end (see lingerClose).
	linger atomic.Bool
}

// maxWriteChunk bounds one write to the socket, so that progress is
// checked at least every 64 KiB of a large answer.
const maxWriteChunk = 64 << 10

// Write writes p in chunks, each of which must be taken by the peer within
// the stall time: a client that stops reading is cut off once its socket
// buffers are full, rather than holding the answers queued for it.
func (c *conn) Write(p []byte) (int, error) {
	n := 0
	for len(p) > 0 {
		chunk := p[:min(len(p), maxWriteChunk)]
		if err := c.Conn.SetWriteDeadline(time.Now().Add(c.stall)); err != nil {
			return n, err
		}
		m, err := c.Conn.Write(chunk)
		n += m
		if err != nil {
			return n, err
		}
		p = p[m:]
	}
	return n, nil
}

// SetWriteDeadline is a no-op: Write sets its own deadline per chunk, and
// the server's whole-answer write timeout would cut off a large download
// to a slow but steady client.
func (c *conn) SetWriteDeadline(time.Time) error { return nil }

// SetDeadline sets the read deadline only, as SetWriteDeadline explains.
func (c *conn) SetDeadline(t time.Time) error { return c.Conn.SetReadDeadline(t) }

// Close closes the connection and frees its place under the caps.
func (c *conn) Close() error {
	c.l.mu.Lock()
	c.l.forget(c)
	c.l.mu.Unlock()
	if c.linger.Load() {
		go lingerClose(c.Conn)
		return nil
	}
	return c.Conn.Close()
}

// lingerClose closes nc gently after an error answer: closing a socket
// that holds unread bytes (the rest of an oversized head, a body left
// unread) resets the connection, and the reset can destroy the answer
// before the client reads it. So it ends the sending side first, then
// reads and drops what the client still sends, for up to a second and
// 1 MiB, as net/http does.
func lingerClose(nc net.Conn) {
	if cw, ok := nc.(interface{ CloseWrite() error }); ok {
		cw.CloseWrite()
	}
	nc.SetReadDeadline(time.Now().Add(time.Second))
	io.Copy(io.Discard, io.LimitReader(nc, 1<<20))
	nc.Close()
}

// lingerOnClose makes the connection of c close gently (lingerClose).
func lingerOnClose(nc net.Conn) {
	switch v := nc.(type) {
	case *conn:
		v.linger.Store(true)
	case *tlsConn:
		v.linger.Store(true)
	}
}

// tlsConn is a conn over TLS. It keeps the methods fasthttp asks a TLS
// connection for (RequestCtx.IsTLS, TLSConnectionState), which the origin
// uses for X-Forwarded-Proto and the session cookie's Secure flag.
type tlsConn struct{ *conn }

// Handshake runs the TLS handshake if it has not run yet.
func (c *tlsConn) Handshake() error { return c.Conn.(*tls.Conn).Handshake() }

// ConnectionState is the TLS connection's state.
func (c *tlsConn) ConnectionState() tls.ConnectionState { return c.Conn.(*tls.Conn).ConnectionState() }
