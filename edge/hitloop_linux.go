//go:build linux && !386

package edge

import (
	"bytes"
	"errors"
	"fmt"
	"net"
	"os"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"

	"github.com/valyala/fasthttp"
)

// hitLoops answers the cache hits of a plain TCP listener from event
// loops, and hands every other request, with its connection, to the
// fasthttp server.
//
// Served a goroutine per connection, a cache hit costs besides its own
// work a read that finds nothing (Go always tries once before it waits), a
// park and a wake-up through Go's network poller, and fasthttp's
// per-request bookkeeping: on 1 KiB objects, together about as much CPU
// time as the kernel's work for the request. The loops work as nginx does:
// each waits on many connections at once (epoll, level-triggered), reads
// a ready connection (once a turn), answers every request in what it read
// that is a cache hit straight from memory (Server.hit) and sends the
// answers with one sendmsg (bodies are sent from the cache, not copied,
// past 4 KiB).
//
// Only hits. The first request of a connection that is anything else (a
// miss, preview, an error, a key not checked yet, the management API, a
// request outside the strict subset of HTTP/1.1 that parseHitHead reads)
// hands the connection over once the answers before it are sent: it
// leaves the loop, on its own descriptor and with the client's address
// and the bytes read and not answered, and the fasthttp
// server serves it from then on, as it serves every connection of
// ListenTLS. Answers are the same bytes either way
// (TestHitLoopAnswersAsFasthttp).
//
// A connection holds at most maxPending bytes of answers not sent: past
// that, and while the socket has no room for them, its loop reads none of
// its requests. Timeouts follow fasthttp's: a request must arrive whole
// within the read timeout of its first byte (of the connection, for the
// first request), each answer waiting for room must be sent within the
// write timeout, and a kept-alive connection may wait for its next request
// up to the idle timeout; a sweep applies them every sweepEvery.
//
// There is one loop per GOMAXPROCS, each with the listening socket in its
// epoll set: a new connection wakes them all, and the first to accept it
// gives it to the loop holding fewest connections (itself on a tie),
// through that loop's inbox and eventfd. Without that, the loop awake when
// a client opens many connections at once keeps them all while the others
// idle (with wrk's 64, one loop of two held all 64). A loop waits on its
// epoll descriptor through Go's own poller (an epoll descriptor is itself
// pollable), so a loop with nothing to do parks as a goroutine does,
// without holding a thread.
//
// hitLoops is the net.Listener that the fasthttp server serves: Accept
// returns the connections handed over. Close stops accepting (the loops
// leave the listening socket, which is then closed) and returns; each loop
// then closes its connections as soon as their answers are sent (or the
// write timeout passes) and ends. Server.Shutdown waits for that.
type hitLoops struct {
	s     *Server
	ln    net.Listener
	lfd   int // the listening socket: a duplicate of ln's, the loops' own
	loops []*hitLoop
	// listening counts the loops still accepting, running the loops still
	// running; woken is closed once Close has woken every loop and none
	// accepts, drained once, besides, no loop runs and their eventfds are
	// closed.
	listening sync.WaitGroup
	running   sync.WaitGroup
	woken     chan struct{}
	drained   chan struct{}
	once      sync.Once

	mu     sync.Mutex
	handed []net.Conn    // handed over, not accepted yet
	ready  chan struct{} // holds a token while handed may not be empty; closed by Close
	closed bool
}

// maxPending is the most bytes of answers a connection holds before its
// loop stops answering its requests until some are sent (bodies larger
// than inlineBody count, though they are not copied: they keep objects
// the cache may have let go in memory). One answer always goes.
const (
	maxPending = 256 << 10
	inlineBody = 4 << 10
)

// newHitLoops starts the event loops on ln. It returns nil when ln is not
// a TCP listener.
func newHitLoops(s *Server, ln net.Listener) (net.Listener, error) {
	tl, ok := ln.(*net.TCPListener)
	if !ok {
		return nil, nil
	}
	raw, err := tl.SyscallConn()
	if err != nil {
		return nil, fmt.Errorf("edge: listener: %w", err)
	}
	lfd := -1
	var dupErr error
	if err := raw.Control(func(fd uintptr) { lfd, dupErr = dupCloexec(int(fd)) }); err != nil {
		return nil, fmt.Errorf("edge: listener: %w", err)
	}
	if dupErr != nil {
		return nil, fmt.Errorf("edge: listener: %w", dupErr)
	}
	hl := &hitLoops{s: s, ln: ln, lfd: lfd, woken: make(chan struct{}), drained: make(chan struct{}), ready: make(chan struct{}, 1)}
	for range runtime.GOMAXPROCS(0) {
		l, err := newHitLoop(hl)
		if err != nil {
			for _, l := range hl.loops {
				l.release()
			}
			syscall.Close(lfd)
			return nil, err
		}
		hl.loops = append(hl.loops, l)
	}
	hl.listening.Add(len(hl.loops))
	hl.running.Add(len(hl.loops))
	for _, l := range hl.loops {
		go l.run()
	}
	go func() {
		// A loop reads its eventfd until it ends, and Close writes to
		// every loop's, whether it has ended or not.
		hl.running.Wait()
		<-hl.woken
		for _, l := range hl.loops {
			syscall.Close(l.efd)
		}
		close(hl.drained)
	}()
	s.addDrain(hl.drained)
	return hl, nil
}

// dupCloexec duplicates fd, close-on-exec.
func dupCloexec(fd int) (int, error) {
	r, _, errno := syscall.Syscall(syscall.SYS_FCNTL, uintptr(fd), syscall.F_DUPFD_CLOEXEC, 0)
	if errno != 0 {
		return -1, os.NewSyscallError("fcntl", errno)
	}
	return int(r), nil
}

// Accept returns the next connection handed over by a loop.
func (hl *hitLoops) Accept() (net.Conn, error) {
	for {
		hl.mu.Lock()
		if len(hl.handed) > 0 {
			c := hl.handed[0]
			hl.handed[0] = nil
			hl.handed = hl.handed[1:]
			if len(hl.handed) > 0 {
				hl.signal()
			}
			hl.mu.Unlock()
			return c, nil
		}
		closed := hl.closed
		hl.mu.Unlock()
		if closed {
			return nil, net.ErrClosed
		}
		<-hl.ready
	}
}

// signal leaves a token in ready (hl.mu held).
func (hl *hitLoops) signal() {
	select {
	case hl.ready <- struct{}{}:
	default:
	}
}

// hand passes c to Accept, or closes it once the listener is closed.
func (hl *hitLoops) hand(c net.Conn) {
	hl.mu.Lock()
	if hl.closed {
		hl.mu.Unlock()
		c.Close()
		return
	}
	hl.handed = append(hl.handed, c)
	hl.signal()
	hl.mu.Unlock()
}

// Close stops accepting and closes the listener; the loops go on until the
// answers they hold are sent.
func (hl *hitLoops) Close() error {
	var err error
	hl.once.Do(func() {
		hl.mu.Lock()
		hl.closed = true
		conns := hl.handed
		hl.handed = nil
		close(hl.ready)
		hl.mu.Unlock()
		for _, c := range conns {
			c.Close()
		}
		for _, l := range hl.loops {
			l.wake()
		}
		hl.listening.Wait() // no loop uses lfd or offers connections any more
		close(hl.woken)
		syscall.Close(hl.lfd)
		err = hl.ln.Close()
	})
	return err
}

// isClosed reports whether Close was called.
func (hl *hitLoops) isClosed() bool {
	hl.mu.Lock()
	defer hl.mu.Unlock()
	return hl.closed
}

// Addr is the listener's address.
func (hl *hitLoops) Addr() net.Addr { return hl.ln.Addr() }

// hitLoop is one event loop and the connections it holds. Only its own
// goroutine touches its fields after newHitLoop, but for efd, which other
// loops and Close write to (it is closed once every loop has ended and
// Close has woken them all), and held and the inbox, which other loops
// give connections through.
type hitLoop struct {
	hl   *hitLoops
	epfd int
	epf  *os.File // epfd, in Go's poller; closed by the loop as it ends
	raw  syscall.RawConn
	// pollFn is wait's RawConn callback, made once; it leaves in ready the
	// number of events in events.
	pollFn func(fd uintptr) bool
	ready  int
	// efd is an eventfd in the epoll set: other loops wake the loop with
	// it when they put a connection in its inbox, Close when it is called.
	efd int
	// held counts the connections the loop holds, with those in its inbox:
	// what accepting loops balance.
	held atomic.Int64
	// inbox holds the connections other loops accepted for this one, until
	// it adopts them; once inboxClosed (the loop stopped accepting), they
	// keep them.
	inboxMu     sync.Mutex
	inbox       []accepted
	inboxClosed bool

	events []syscall.EpollEvent
	conns  map[int32]*hitConn
	buf    []byte // what one recv reads
	iov    []syscall.Iovec
	// wall and now are the time of the round of events (now in Unix
	// nanoseconds, for timeouts), reqTime the requests' time (Config.Now
	// when set: key expiry, Age).
	wall    time.Time
	now     int64
	reqTime time.Time
	// dateBuf is the Date header's value for the second dateSec.
	dateBuf []byte
	dateSec int64
	// nextSweep is when the next sweep of timeouts is due, deadline the
	// poller's wake-up time set for it (Unix nanoseconds).
	nextSweep, deadline int64
	acceptPaused        bool
	stopping            bool // Close was called: no more accepting
	readTimeout         int64
	writeTimeout        int64
	idleTimeout         int64
}

// accepted is a connection accepted and not adopted by a loop yet.
type accepted struct {
	fd   int
	peer syscall.Sockaddr
}

// hitConn is a connection a loop holds.
type hitConn struct {
	fd int
	// in holds the bytes read and not answered: the start of a request
	// head or, when more or handOver is set, whole requests.
	in  []byte
	out outQueue // answers not sent yet
	// watching is the events the loop waits for on the connection.
	watching uint32
	// more: in holds requests not answered yet, for want of room (out
	// reached maxPending). handOver: in starts with a request that is not
	// a hit; the connection goes to fasthttp once out is sent. eof: the
	// client sends no more; the connection closes once out is sent.
	more, handOver, eof bool
	// peer is the client's address, as accept gave it.
	peer syscall.Sockaddr
	// active is the last time a request was read or an answer sent; since
	// when the request in in began (0: none); blocked when out found no
	// room (0: it did not). Unix nanoseconds.
	active, since, blocked int64
}

const (
	watchIn  = syscall.EPOLLIN | syscall.EPOLLRDHUP
	watchOut = syscall.EPOLLOUT
)

func newHitLoop(hl *hitLoops) (*hitLoop, error) {
	epfd, err := syscall.EpollCreate1(syscall.EPOLL_CLOEXEC)
	if err != nil {
		return nil, os.NewSyscallError("epoll_create1", err)
	}
	r, _, errno := syscall.RawSyscall(syscall.SYS_EVENTFD2, 0, syscall.O_NONBLOCK|syscall.O_CLOEXEC, 0)
	if errno != 0 {
		syscall.Close(epfd)
		return nil, os.NewSyscallError("eventfd2", errno)
	}
	l := &hitLoop{hl: hl, epfd: epfd, efd: int(r)}
	for _, fd := range []int{hl.lfd, l.efd} {
		if err := syscall.EpollCtl(epfd, syscall.EPOLL_CTL_ADD, fd, &syscall.EpollEvent{Events: syscall.EPOLLIN, Fd: int32(fd)}); err != nil {
			l.release()
			return nil, os.NewSyscallError("epoll_ctl", err)
		}
	}
	if err := syscall.SetNonblock(epfd, true); err != nil {
		l.release()
		return nil, os.NewSyscallError("fcntl", err)
	}
	l.epf = os.NewFile(uintptr(epfd), "edge-epoll")
	if l.raw, err = l.epf.SyscallConn(); err != nil {
		l.release()
		return nil, err
	}
	cfg := hl.s.app.Config()
	l.events = make([]syscall.EpollEvent, 256)
	l.conns = map[int32]*hitConn{}
	l.pollFn = l.poll
	l.buf = make([]byte, 16<<10)
	l.readTimeout, l.writeTimeout, l.idleTimeout = int64(cfg.ReadTimeout), int64(cfg.WriteTimeout), int64(cfg.IdleTimeout)
	return l, nil
}

// release closes what newHitLoop opened, for a loop that never ran.
func (l *hitLoop) release() {
	if l.epf != nil {
		l.epf.Close()
	} else {
		syscall.Close(l.epfd)
	}
	syscall.Close(l.efd)
}

// wake tells the loop that Close was called or its inbox has connections.
func (l *hitLoop) wake() {
	one := [8]byte{1}
	syscall.Write(l.efd, one[:])
}

// run waits for events and handles them until, once Close was called, it
// holds no connection.
func (l *hitLoop) run() {
	defer l.hl.running.Done()
	defer l.epf.Close()
	defer l.stop() // also when the poller fails, so that Close does not wait
	for !(l.stopping && len(l.conns) == 0) {
		n, err := l.wait()
		if err != nil {
			l.hl.s.log.Error("edge: event loop failed; closing its connections", "err", err)
			for _, c := range l.conns {
				l.close(c)
			}
			return
		}
		l.tick()
		for _, ev := range l.events[:n] {
			switch fd := int(ev.Fd); fd {
			case l.hl.lfd:
				if !l.stopping {
					l.accept()
				}
			case l.efd:
				var b [8]byte
				syscall.Read(l.efd, b[:])
				l.adoptInbox()
				if l.hl.isClosed() {
					l.stop()
				}
			default:
				if c := l.conns[ev.Fd]; c != nil {
					l.serve(c)
				}
			}
		}
		if l.now >= l.nextSweep {
			l.sweep()
		}
	}
}

// tick reads the clocks for a round of events.
func (l *hitLoop) tick() {
	l.wall = time.Now()
	l.now = l.wall.UnixNano()
	l.reqTime = l.wall
	if l.hl.s.cfg.Now != nil {
		l.reqTime = l.hl.s.cfg.Now()
	}
}

// wait returns the number of events in l.events, waiting, parked in Go's
// poller, while there are none, but not past the next sweep (then 0). It
// does not poll on before it parks: where the loops share their CPUs with
// other processes (the client, in scripts/bench unpinned), a loop polling
// on for even 10 µs held the CPU the client needed and took the edge's p99
// from 4–6 ms to 9–14 ms, and on CPUs of its own it gained nothing.
func (l *hitLoop) wait() (int, error) {
	l.ready = 0
	if l.deadline != l.nextSweep {
		l.epf.SetReadDeadline(time.Unix(0, l.nextSweep))
		l.deadline = l.nextSweep
	}
	err := l.raw.Read(l.pollFn)
	if errors.Is(err, os.ErrDeadlineExceeded) {
		return 0, nil
	}
	return l.ready, err
}

// poll is wait's callback: epoll_pwait without waiting.
func (l *hitLoop) poll(fd uintptr) bool {
	r, _, errno := syscall.RawSyscall6(syscall.SYS_EPOLL_PWAIT, fd, uintptr(unsafe.Pointer(&l.events[0])), uintptr(len(l.events)), 0, 0, 0)
	if errno != 0 { // EINTR: nothing yet
		r = 0
	}
	l.ready = int(r)
	return l.ready > 0
}

// accept takes the connections waiting on the listening socket.
func (l *hitLoop) accept() {
	for {
		fd, peer, err := syscall.Accept4(l.hl.lfd, syscall.SOCK_NONBLOCK|syscall.SOCK_CLOEXEC)
		switch {
		case err == nil:
		case errors.Is(err, syscall.EAGAIN):
			return
		case errors.Is(err, syscall.EINTR), errors.Is(err, syscall.ECONNABORTED):
			continue
		default: // out of descriptors or memory: accept again after the next sweep
			l.hl.s.log.Warn("edge: accept failed; retrying shortly", "err", os.NewSyscallError("accept4", err))
			syscall.EpollCtl(l.epfd, syscall.EPOLL_CTL_DEL, l.hl.lfd, nil)
			l.acceptPaused = true
			return
		}
		// As net.Listen's connections: no Nagle delay, TCP keep-alive
		// probes after 15 s of silence.
		syscall.SetsockoptInt(fd, syscall.IPPROTO_TCP, syscall.TCP_NODELAY, 1)
		syscall.SetsockoptInt(fd, syscall.SOL_SOCKET, syscall.SO_KEEPALIVE, 1)
		syscall.SetsockoptInt(fd, syscall.IPPROTO_TCP, syscall.TCP_KEEPIDLE, 15)
		syscall.SetsockoptInt(fd, syscall.IPPROTO_TCP, syscall.TCP_KEEPINTVL, 15)
		l.give(accepted{fd: fd, peer: peer})
	}
}

// give passes a connection l accepted to the loop holding fewest
// connections, l itself on a tie or when that loop has stopped.
func (l *hitLoop) give(a accepted) {
	to := l
	for _, o := range l.hl.loops {
		if o.held.Load() < to.held.Load() {
			to = o
		}
	}
	if to != l && to.offer(a) {
		return
	}
	l.held.Add(1)
	l.adopt(a)
}

// offer puts a in l's inbox and wakes l. It reports false, keeping nothing,
// when l no longer takes connections.
func (l *hitLoop) offer(a accepted) bool {
	l.inboxMu.Lock()
	if l.inboxClosed {
		l.inboxMu.Unlock()
		return false
	}
	l.inbox = append(l.inbox, a)
	l.held.Add(1)
	l.inboxMu.Unlock()
	l.wake()
	return true
}

// adoptInbox adopts the connections other loops gave l.
func (l *hitLoop) adoptInbox() {
	l.inboxMu.Lock()
	in := l.inbox
	l.inbox = nil
	l.inboxMu.Unlock()
	for _, a := range in {
		l.adopt(a)
	}
}

// adopt makes a one of l's connections (held already counts it).
func (l *hitLoop) adopt(a accepted) {
	if err := syscall.EpollCtl(l.epfd, syscall.EPOLL_CTL_ADD, a.fd, &syscall.EpollEvent{Events: watchIn, Fd: int32(a.fd)}); err != nil {
		syscall.Close(a.fd)
		l.held.Add(-1)
		return
	}
	// The first request must come within the read timeout.
	l.conns[int32(a.fd)] = &hitConn{fd: a.fd, peer: a.peer, watching: watchIn, active: l.now, since: l.now}
	l.hl.s.loopConns.Add(1)
}

// stop leaves the listening socket (once) and closes the connections that
// wait for nothing to be sent; the others close once it is.
func (l *hitLoop) stop() {
	if l.stopping {
		return
	}
	l.stopping = true
	if !l.acceptPaused {
		syscall.EpollCtl(l.epfd, syscall.EPOLL_CTL_DEL, l.hl.lfd, nil)
	}
	l.hl.listening.Done()
	l.inboxMu.Lock()
	l.inboxClosed = true
	l.inboxMu.Unlock()
	l.adoptInbox()
	for _, c := range l.conns {
		if c.out.empty() {
			l.close(c)
		} else {
			c.eof = true
		}
	}
}

// serve moves c along: it sends the answers waiting, then answers what it
// holds or reads, until it has read once, c has no room for answers, is
// handed over or closed.
//
// It reads once a turn: what a client has sent beyond one read waits for
// the next round of events, after the loop's other connections, so that a
// client pipelining without pause cannot hold the loop.
func (l *hitLoop) serve(c *hitConn) {
	read := false
	for {
		if !c.out.empty() {
			if !l.send(c) {
				return // closed
			}
			if !c.out.empty() {
				l.watch(c, watchOut)
				return
			}
		}
		switch {
		case c.handOver:
			l.handOver(c)
			return
		case c.more:
			l.take(c, nil)
			continue
		case c.eof || l.stopping:
			l.close(c)
			return
		case read:
			l.watch(c, watchIn)
			return
		}
		n, _, errno := sockcall(syscall.SYS_RECVFROM, uintptr(c.fd), l.buf, 0)
		switch {
		case errno == syscall.EINTR:
			continue
		case errno == syscall.EAGAIN:
			l.watch(c, watchIn)
			return
		case errno != 0:
			l.close(c)
			return
		case n == 0: // the client sends no more: answer what it sent, then close
			c.eof = true
			l.take(c, nil)
			continue
		}
		read = true
		c.active = l.now
		l.take(c, l.buf[:n])
	}
}

// take answers the requests in c.in followed by data, as long as they are
// hits and out has room, and keeps in c.in what is left.
func (l *hitLoop) take(c *hitConn, data []byte) {
	if len(c.in) > 0 {
		c.in = append(c.in, data...)
		data = c.in
	}
	c.more = false
	rest, answered := l.answer(c, data)
	switch {
	case len(rest) == 0:
		c.in, c.since = c.in[:0], 0
		if cap(c.in) > 2*len(l.buf) {
			c.in = nil
		}
	default:
		c.in = append(c.in[:0], rest...) // rest may be the end of c.in: append moves overlapping bytes correctly
		if answered > 0 || c.since == 0 {
			c.since = l.now // the first request left began in this read
		}
	}
	if c.eof && !c.handOver && !c.more && len(c.in) > 0 {
		c.handOver = true // a request cut short by the client's end: fasthttp's to answer
	}
}

// answer appends to c.out the answers of the complete requests at the
// start of data, while they are cache hits and c.out has room. It returns
// what is left: the start of a request head, the requests there was no
// room for (c.more), or the request that is not a hit and what follows it
// (c.handOver).
func (l *hitLoop) answer(c *hitConn, data []byte) (rest []byte, answered int) {
	s := l.hl.s
	for len(data) > 0 {
		if c.out.size >= maxPending {
			c.more = true
			return data, answered
		}
		r, n, ok := parseHitHead(data)
		if ok && n == 0 {
			return data, answered // not all there yet
		}
		var e *entry
		if ok {
			if t, plain := plainTarget(r.host, r.uri); plain && !originPath(t.cleanPath) {
				e = s.hit(t, r.guid, r.apiKey, l.reqTime)
			}
		}
		if e == nil {
			c.handOver = true
			return data, answered
		}
		c.out.add(&r, e, l.date(), l.reqTime.Unix())
		data = data[n:]
		answered++
	}
	return nil, answered
}

// date returns the Date header's value for the round: the real time,
// as fasthttp's Date, whatever Config.Now says.
func (l *hitLoop) date() []byte {
	if sec := l.wall.Unix(); sec != l.dateSec || l.dateBuf == nil {
		l.dateBuf, l.dateSec = fasthttp.AppendHTTPDate(l.dateBuf[:0], l.wall), sec
	}
	return l.dateBuf
}

// send sends what c.out holds, as far as the socket has room. It reports
// false when c failed and was closed.
func (l *hitLoop) send(c *hitConn) bool {
	for !c.out.empty() {
		iov, total := c.out.iovecs(l.iov[:0])
		l.iov = iov
		n, errno := sendmsg(c.fd, iov, total)
		clear(l.iov) // hold no body past the call
		switch errno {
		case 0:
			// The write timeout is per answer, as fasthttp's: one sent
			// whole restarts it.
			if c.out.consume(int(n)) > 0 && c.blocked != 0 {
				c.blocked = l.now
			}
			c.active = l.now
		case syscall.EINTR:
		case syscall.EAGAIN:
			if c.blocked == 0 {
				c.blocked = l.now
			}
			return true
		default:
			l.close(c)
			return false
		}
	}
	c.out.reset()
	if c.blocked != 0 && c.since != 0 {
		c.since = l.now // the read timeout of a request begun counts from now, as fasthttp's after its write
	}
	c.blocked = 0
	return true
}

// sendmsg sends iov (total bytes) on the non-blocking socket fd, as a raw
// system call up to rawMax bytes (see sockcall).
func sendmsg(fd int, iov []syscall.Iovec, total int) (uintptr, syscall.Errno) {
	msg := syscall.Msghdr{Iov: &iov[0]}
	setLen(&msg.Iovlen, len(iov))
	call := syscall.Syscall
	if total <= rawMax {
		call = syscall.RawSyscall
	}
	n, _, errno := call(syscall.SYS_SENDMSG, uintptr(fd), uintptr(unsafe.Pointer(&msg)), syscall.MSG_NOSIGNAL)
	return n, errno
}

// setLen sets a length field whose type varies with the architecture.
func setLen[T uint32 | uint64](p *T, n int) { *p = T(n) }

// watch sets the events the loop waits for on c.
func (l *hitLoop) watch(c *hitConn, events uint32) {
	if c.watching == events {
		return
	}
	if err := syscall.EpollCtl(l.epfd, syscall.EPOLL_CTL_MOD, c.fd, &syscall.EpollEvent{Events: events, Fd: int32(c.fd)}); err != nil {
		l.close(c)
		return
	}
	c.watching = events
}

// handOver gives c, whose answers are all sent, to the fasthttp server,
// with c.in (the bytes read and not answered) to read first. The socket
// keeps its descriptor (no duplicate, which a process out of descriptors
// could not make) and goes into Go's poller as an *os.File.
func (l *hitLoop) handOver(c *hitConn) {
	syscall.EpollCtl(l.epfd, syscall.EPOLL_CTL_DEL, c.fd, nil)
	delete(l.conns, int32(c.fd))
	l.held.Add(-1)
	l.hl.s.loopConns.Add(-1)
	f := os.NewFile(uintptr(c.fd), "tcp")
	raw, err := f.SyscallConn()
	if err != nil {
		l.hl.s.log.Warn("edge: hand over a connection", "err", err)
		f.Close()
		return
	}
	var laddr net.Addr = l.hl.ln.Addr()
	if sa, err := syscall.Getsockname(c.fd); err == nil {
		laddr = tcpAddr(sa)
	}
	l.hl.hand(&handedConn{f: f, io: newRawSockIO(raw, laddr, tcpAddr(c.peer)), in: bytes.Clone(c.in)})
}

// tcpAddr is sa as a *net.TCPAddr.
func tcpAddr(sa syscall.Sockaddr) net.Addr {
	switch a := sa.(type) {
	case *syscall.SockaddrInet4:
		return &net.TCPAddr{IP: net.IPv4(a.Addr[0], a.Addr[1], a.Addr[2], a.Addr[3]), Port: a.Port}
	case *syscall.SockaddrInet6:
		zone := ""
		if a.ZoneId != 0 {
			zone = strconv.Itoa(int(a.ZoneId))
			if ifi, err := net.InterfaceByIndex(int(a.ZoneId)); err == nil {
				zone = ifi.Name
			}
		}
		return &net.TCPAddr{IP: append(net.IP(nil), a.Addr[:]...), Port: a.Port, Zone: zone}
	}
	return &net.TCPAddr{}
}

// close closes c.
func (l *hitLoop) close(c *hitConn) {
	delete(l.conns, int32(c.fd))
	l.held.Add(-1)
	l.hl.s.loopConns.Add(-1)
	syscall.Close(c.fd) // also leaves the epoll: the descriptor is the socket's only one
}

// sweep closes the connections past a timeout and accepts again after a
// pause.
func (l *hitLoop) sweep() {
	now := l.now
	for _, c := range l.conns {
		switch {
		case c.blocked != 0:
			if l.writeTimeout > 0 && now-c.blocked > l.writeTimeout {
				l.close(c)
			}
		case c.since != 0:
			if l.readTimeout > 0 && now-c.since > l.readTimeout {
				l.close(c)
			}
		default:
			if l.idleTimeout > 0 && now-c.active > l.idleTimeout {
				l.close(c)
			}
		}
	}
	if l.acceptPaused && !l.stopping {
		err := syscall.EpollCtl(l.epfd, syscall.EPOLL_CTL_ADD, l.hl.lfd, &syscall.EpollEvent{Events: syscall.EPOLLIN, Fd: int32(l.hl.lfd)})
		l.acceptPaused = err != nil
	}
	l.nextSweep = now + int64(sweepEvery)
}

// outQueue holds a connection's answers not sent yet, in order: heads and
// small bodies copied into buf, larger bodies by reference (cached bodies
// are never written).
type outQueue struct {
	buf   []byte
	parts []outPart
	// sent is how much of the first part has been sent; size counts the
	// bytes of the parts not wholly sent.
	sent, size int
}

// outPart is n bytes of buf, then body.
type outPart struct {
	n    int
	body []byte
}

func (q *outQueue) empty() bool { return len(q.parts) == 0 }

// add appends the answer to r from e.
func (q *outQueue) add(r *hitRequest, e *entry, date []byte, now int64) {
	start := len(q.buf)
	var body bool
	q.buf, body = appendHitHead(q.buf, r, e, date, now)
	var ref []byte
	if body {
		if len(e.body) <= inlineBody {
			q.buf = append(q.buf, e.body...)
		} else {
			ref = e.body
		}
	}
	n := len(q.buf) - start
	q.size += n + len(ref)
	if k := len(q.parts) - 1; k >= 0 && q.parts[k].body == nil {
		q.parts[k].n += n
		q.parts[k].body = ref
		return
	}
	q.parts = append(q.parts, outPart{n: n, body: ref})
}

// maxIovecs bounds the pieces of one sendmsg (the kernel's limit is 1024).
const maxIovecs = 64

// iovecs appends to iov the pieces not sent yet and returns them with
// their total length.
func (q *outQueue) iovecs(iov []syscall.Iovec) ([]syscall.Iovec, int) {
	total, off, skip := 0, 0, q.sent
	piece := func(b []byte) {
		if skip >= len(b) {
			skip -= len(b)
			return
		}
		b = b[skip:]
		skip = 0
		v := syscall.Iovec{Base: &b[0]}
		v.SetLen(len(b))
		iov = append(iov, v)
		total += len(b)
	}
	for _, p := range q.parts {
		if len(iov)+2 > maxIovecs {
			break
		}
		piece(q.buf[off : off+p.n])
		off += p.n
		piece(p.body)
	}
	return iov, total
}

// consume drops the first n bytes not sent and returns how many parts it
// finished.
func (q *outQueue) consume(n int) (done int) {
	q.sent += n
	off := 0
	for len(q.parts) > 0 {
		p := q.parts[0]
		if q.sent < p.n+len(p.body) {
			break
		}
		q.sent -= p.n + len(p.body)
		off += p.n
		q.size -= p.n + len(p.body)
		done++
		q.parts[0] = outPart{}
		q.parts = q.parts[1:]
	}
	if off > 0 {
		q.buf = append(q.buf[:0], q.buf[off:]...)
	}
	return done
}

// reset empties q, keeping a small buffer.
func (q *outQueue) reset() {
	q.buf, q.parts, q.sent, q.size = q.buf[:0], q.parts[:0], 0, 0
	if cap(q.buf) > 64<<10 {
		q.buf = nil
	}
}

// handedConn is a connection handed over by a loop: it reads in, the
// bytes the loop read and did not answer, before the socket, and reads and
// writes the socket as the server's other connections do (sockIO).
type handedConn struct {
	f  *os.File
	io *sockIO
	in []byte
}

// Read reads in, then the connection.
func (c *handedConn) Read(b []byte) (int, error) {
	if len(c.in) > 0 {
		n := copy(b, c.in)
		c.in = c.in[n:]
		return n, nil
	}
	if len(b) == 0 {
		return 0, nil
	}
	return c.io.read(b)
}

// Write writes b.
func (c *handedConn) Write(b []byte) (int, error) {
	if len(b) == 0 {
		return 0, nil
	}
	return c.io.write(b)
}

func (c *handedConn) Close() error                       { return c.f.Close() }
func (c *handedConn) LocalAddr() net.Addr                { return c.io.laddr }
func (c *handedConn) RemoteAddr() net.Addr               { return c.io.raddr }
func (c *handedConn) SetDeadline(t time.Time) error      { return c.f.SetDeadline(t) }
func (c *handedConn) SetReadDeadline(t time.Time) error  { return c.f.SetReadDeadline(t) }
func (c *handedConn) SetWriteDeadline(t time.Time) error { return c.f.SetWriteDeadline(t) }
