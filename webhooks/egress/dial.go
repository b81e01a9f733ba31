package egress

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/edgecms/edgecms/problem"
)

// DefaultConnectTimeout bounds establishing a connection to an endpoint:
// the TCP connect (DNS resolution included), and then the TLS handshake.
// It is short, and separate from the time a delivery may wait for its
// answer, so that an address that drops connection attempts costs a worker
// seconds rather than the whole attempt timeout.
const DefaultConnectTimeout = 3 * time.Second

// Timeouts of the connections a Policy makes. The dispatcher bounds a whole
// delivery with its own, shorter, request deadline; these only keep a
// misbehaving endpoint from holding a connection when it does not.
const (
	responseHeaderTimeout = 30 * time.Second
	idleConnTimeout       = 90 * time.Second
)

// Dialer returns a dialer whose Control function checks every address it is
// about to connect to, after DNS resolution, against the Policy. A host name
// that resolves, or re-binds between two lookups, to a refused address is
// therefore refused as a literal address would be. The error of a refused
// dial wraps a *RefusedError. It gives up connecting after
// DefaultConnectTimeout.
func (p *Policy) Dialer() *net.Dialer { return p.dialer(DefaultConnectTimeout) }

func (p *Policy) dialer(connect time.Duration) *net.Dialer {
	return &net.Dialer{
		Timeout:   connect,
		KeepAlive: 30 * time.Second,
		Control:   p.control,
	}
}

// control is the net.Dialer Control function: address is the "ip:port"
// actually being connected to.
func (p *Policy) control(network, address string, _ syscall.RawConn) error {
	host, _, err := net.SplitHostPort(address)
	if err != nil {
		return &RefusedError{Host: address, Reason: "not an IP address and port"}
	}
	ip, err := netip.ParseAddr(host)
	if err != nil {
		return &RefusedError{Host: host, Reason: "not an IP address"}
	}
	return p.Check(ip)
}

// DialContext connects to address on the named network as the Dialer does,
// and names the host of address in a *RefusedError, so that a refusal reads
// "refused to connect to localhost (127.0.0.1): loopback address ...".
func (p *Policy) DialContext(ctx context.Context, network, address string) (net.Conn, error) {
	return p.dial(p.Dialer(), ctx, network, address)
}

func (p *Policy) dial(d *net.Dialer, ctx context.Context, network, address string) (net.Conn, error) {
	conn, err := d.DialContext(ctx, network, address)
	var refused *RefusedError
	if err != nil && errors.As(err, &refused) && refused.Host == "" {
		if host, _, serr := net.SplitHostPort(address); serr == nil {
			refused.Host = host
		}
	}
	return conn, err
}

// Transport returns an HTTP transport for webhook delivery that connects
// only through DialContext. It never uses a proxy (HTTP_PROXY and the like
// are ignored): through a proxy, the address dialled would be the proxy's
// and the Policy could not see the endpoint's.
func (p *Policy) Transport() *http.Transport { return p.TransportWith(DefaultConnectTimeout) }

// TransportWith returns Transport with connect, rather than
// DefaultConnectTimeout, bounding the TCP connect and the TLS handshake
// (each).
func (p *Policy) TransportWith(connect time.Duration) *http.Transport {
	if connect <= 0 {
		connect = DefaultConnectTimeout
	}
	d := p.dialer(connect)
	return &http.Transport{
		Proxy: nil,
		DialContext: func(ctx context.Context, network, address string) (net.Conn, error) {
			return p.dial(d, ctx, network, address)
		},
		ForceAttemptHTTP2:      true,
		TLSHandshakeTimeout:    connect,
		ResponseHeaderTimeout:  responseHeaderTimeout,
		ExpectContinueTimeout:  time.Second,
		IdleConnTimeout:        idleConnTimeout,
		MaxIdleConns:           100,
		MaxIdleConnsPerHost:    8,
		MaxResponseHeaderBytes: 64 << 10,
	}
}

// CheckURL validates a webhook URL when it is saved: it must be absolute
// http or https, name a host, and carry no user name or password. A literal
// IP address host, and "localhost" or a name under ".localhost" (which
// always mean loopback), are checked against the Policy at once; other host
// names are checked when dialled, since what they resolve to can change. The
// error is a problem.Invalid error about the field "url".
func (p *Policy) CheckURL(raw string) error {
	u, err := url.Parse(raw)
	if err != nil {
		return problem.Field("url", "not a valid URL")
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return problem.Field("url", "scheme must be http or https")
	}
	if u.User != nil {
		return problem.Field("url", "must not contain a user name or password")
	}
	host := u.Hostname()
	if host == "" {
		return problem.Field("url", "must name a host")
	}
	if port := u.Port(); port != "" {
		if n, err := strconv.ParseUint(port, 10, 16); err != nil || n == 0 {
			return problem.Field("url", "port %q is not between 1 and 65535", port)
		}
	}

	var refused error
	if ip, err := netip.ParseAddr(host); err == nil {
		refused = p.Check(ip)
	} else if endsInNumber(host) {
		return problem.Field("url", "host %q is neither a host name nor a dotted-decimal IP address", host)
	} else if name := strings.ToLower(strings.TrimSuffix(host, ".")); name == "localhost" || strings.HasSuffix(name, ".localhost") {
		// Refused unless one of its loopback addresses is allowed.
		refused = p.Check(netip.AddrFrom4([4]byte{127, 0, 0, 1}))
		if p.Check(netip.IPv6Loopback()) == nil {
			refused = nil
		}
		if e, ok := refused.(*RefusedError); ok {
			e.Host = host
		}
	}
	if refused != nil {
		return problem.Field("url", "%s", refused)
	}
	return nil
}

// endsInNumber reports whether the last label of host is a number, as the
// WHATWG URL standard puts it: decimal digits, or 0x and hexadecimal digits.
// Such a host is no DNS name, and resolvers read forms like 2130706433,
// 0x7f.1 or 017700000001 as IPv4 addresses in ways netip does not.
func endsInNumber(host string) bool {
	host = strings.TrimSuffix(host, ".")
	last := host[strings.LastIndexByte(host, '.')+1:]
	if last == "" {
		return false
	}
	digits := "0123456789"
	if len(last) >= 2 && (last[:2] == "0x" || last[:2] == "0X") {
		last, digits = last[2:], "0123456789abcdefABCDEF"
	}
	for _, r := range last {
		if !strings.ContainsRune(digits, r) {
			return false
		}
	}
	return true
}
