// Package egress keeps webhook delivery from being turned against the
// network it runs in (server-side request forgery): a webhook URL is chosen by
// a user, so without a check it could reach the loopback interface, the
// private network, or a cloud metadata service at 169.254.169.254.
//
// A Policy refuses such addresses unless an operator allow-lists them (the
// EDGECMS_WEBHOOK_ALLOW_NETS setting, parsed by ParseAllowNets), and checks
// them where it matters: in the dialer, on the address actually connected to
// after DNS resolution, so that a host name resolving (or re-binding) to a
// private address is refused just as a literal one is. CheckURL gives early,
// save-time feedback on the URL text; it is a convenience, not the guard.
package egress

import (
	"fmt"
	"net/netip"
	"strings"
)

// AllowNetsEnv is the setting that allow-lists networks, named in refusals
// so that an operator knows what to change.
const AllowNetsEnv = "EDGECMS_WEBHOOK_ALLOW_NETS"

// A Policy decides which addresses webhook delivery may connect to: every
// public unicast address, plus any address inside one of its allowed
// networks. The zero Policy, and a nil *Policy, allow no special networks.
// A Policy is safe for concurrent use.
type Policy struct {
	allow []netip.Prefix
}

// NewPolicy returns a Policy that also allows the given networks, typically
// the result of ParseAllowNets.
func NewPolicy(allow ...netip.Prefix) *Policy {
	p := &Policy{allow: make([]netip.Prefix, 0, len(allow))}
	for _, n := range allow {
		if n.IsValid() {
			p.allow = append(p.allow, normalize(n))
		}
	}
	return p
}

// Allowed returns the networks the Policy allows beyond the public ones.
func (p *Policy) Allowed() []netip.Prefix {
	if p == nil {
		return nil
	}
	return append([]netip.Prefix(nil), p.allow...)
}

// ParseAllowNets parses the EDGECMS_WEBHOOK_ALLOW_NETS format: CIDR prefixes
// separated by commas and/or white space, such as "10.0.0.0/8, 127.0.0.1/32".
// A bare address stands for itself alone (/32 or /128). An empty string gives
// no networks. Host bits are cleared (10.1.2.3/8 is 10.0.0.0/8), and an
// IPv4-mapped IPv6 prefix is read as the IPv4 prefix it maps.
func ParseAllowNets(s string) ([]netip.Prefix, error) {
	fields := strings.FieldsFunc(s, func(r rune) bool {
		return r == ',' || r == ' ' || r == '\t' || r == '\n' || r == '\r'
	})
	var nets []netip.Prefix
	for _, f := range fields {
		var n netip.Prefix
		if strings.Contains(f, "/") {
			var err error
			n, err = netip.ParsePrefix(f)
			if err != nil {
				return nil, fmt.Errorf("%s: %q is not a CIDR prefix such as 10.0.0.0/8 or fd00::/8", AllowNetsEnv, f)
			}
		} else {
			a, err := netip.ParseAddr(f)
			if err != nil || a.Zone() != "" {
				return nil, fmt.Errorf("%s: %q is not a CIDR prefix such as 10.0.0.0/8 or fd00::/8", AllowNetsEnv, f)
			}
			n = netip.PrefixFrom(a, a.BitLen())
		}
		nets = append(nets, normalize(n))
	}
	return nets, nil
}

// normalize clears the host bits of n and turns an IPv4-mapped IPv6 prefix
// into the IPv4 one, since addresses are unmapped before they are checked.
func normalize(n netip.Prefix) netip.Prefix {
	if a := n.Addr(); a.Is4In6() && n.Bits() >= 96 {
		n = netip.PrefixFrom(a.Unmap(), n.Bits()-96)
	}
	return n.Masked()
}

// RefusedError is the error of a connection refused by a Policy. Its text is
// short enough to record as a delivery's lastError, for example
// "refused to connect to 127.0.0.1: loopback address (set
// EDGECMS_WEBHOOK_ALLOW_NETS to allow)".
type RefusedError struct {
	// Host is the host name that resolved to Addr, when known.
	Host string
	// Addr is the address refused, as given (it may be IPv4-mapped).
	Addr netip.Addr
	// Reason names the kind of address, such as "loopback address".
	Reason string
}

func (e *RefusedError) Error() string {
	to := e.Addr.String()
	if e.Host != "" && e.Host != to {
		to = e.Host + " (" + to + ")"
	}
	return fmt.Sprintf("refused to connect to %s: %s (set %s to allow)", to, e.Reason, AllowNetsEnv)
}

// special lists the networks refused unless allowed, most specific first;
// the first match names the reason. Addresses are unmapped before the lookup,
// so ::ffff:127.0.0.1 is found as 127.0.0.1.
var special = []struct {
	net    netip.Prefix
	reason string
}{
	{netip.MustParsePrefix("0.0.0.0/32"), "unspecified address"},
	{netip.MustParsePrefix("0.0.0.0/8"), `"this network" address`},
	{netip.MustParsePrefix("127.0.0.0/8"), "loopback address"},
	{netip.MustParsePrefix("10.0.0.0/8"), "private address"},
	{netip.MustParsePrefix("172.16.0.0/12"), "private address"},
	{netip.MustParsePrefix("192.168.0.0/16"), "private address"},
	{netip.MustParsePrefix("100.64.0.0/10"), "shared (CGNAT) address"},
	{netip.MustParsePrefix("169.254.169.254/32"), "link-local address (cloud metadata service)"},
	{netip.MustParsePrefix("169.254.0.0/16"), "link-local address"},
	{netip.MustParsePrefix("192.0.0.0/24"), "IETF protocol assignment address"},
	{netip.MustParsePrefix("198.18.0.0/15"), "benchmarking address"},
	{netip.MustParsePrefix("224.0.0.0/4"), "multicast address"},
	{netip.MustParsePrefix("255.255.255.255/32"), "broadcast address"},
	{netip.MustParsePrefix("240.0.0.0/4"), "reserved address"},

	{netip.MustParsePrefix("::/128"), "unspecified address"},
	{netip.MustParsePrefix("::1/128"), "loopback address"},
	{netip.MustParsePrefix("::/96"), "IPv4-compatible address (deprecated)"},
	{netip.MustParsePrefix("100::/64"), "discard-only address"},
	{netip.MustParsePrefix("64:ff9b:1::/48"), "local-use NAT64 address"},
	{netip.MustParsePrefix("fe80::/10"), "link-local address"},
	{netip.MustParsePrefix("fec0::/10"), "site-local address (deprecated)"},
	{netip.MustParsePrefix("fd00:ec2::254/128"), "unique-local address (cloud metadata service)"},
	{netip.MustParsePrefix("fc00::/7"), "unique-local address"},
	{netip.MustParsePrefix("ff00::/8"), "multicast address"},
}

// Prefixes of IPv6 addresses that carry an IPv4 address a gateway may
// connect to: the NAT64 well-known prefix (RFC 6052, the IPv4 address in the
// last 32 bits) and 6to4 (RFC 3056, in bits 16 to 47).
var (
	nat64  = netip.MustParsePrefix("64:ff9b::/96")
	sixTo4 = netip.MustParsePrefix("2002::/16")
)

// Check returns nil if the Policy allows connecting to ip, and a
// *RefusedError otherwise: for loopback, private, shared (CGNAT), link-local
// (including cloud metadata), unique-local, unspecified, multicast, broadcast
// and reserved addresses, for their IPv4-mapped IPv6 forms, and for NAT64 and
// 6to4 addresses that embed one of them, unless ip is inside an allowed
// network.
func (p *Policy) Check(ip netip.Addr) error {
	if !ip.IsValid() {
		return &RefusedError{Addr: ip, Reason: "invalid address"}
	}
	if reason := p.refusal(ip.WithZone("").Unmap()); reason != "" {
		return &RefusedError{Addr: ip, Reason: reason}
	}
	return nil
}

// refusal returns why ip (unmapped, without zone) is refused, or "".
func (p *Policy) refusal(ip netip.Addr) string {
	if p != nil {
		for _, n := range p.allow {
			if n.Contains(ip) {
				return ""
			}
		}
	}
	for _, s := range special {
		if s.net.Contains(ip) {
			return s.reason
		}
	}
	var v4 [4]byte
	var kind string
	b := ip.As16()
	switch {
	case nat64.Contains(ip):
		copy(v4[:], b[12:16])
		kind = "NAT64"
	case sixTo4.Contains(ip):
		copy(v4[:], b[2:6])
		kind = "6to4"
	default:
		return ""
	}
	embedded := netip.AddrFrom4(v4)
	if reason := p.refusal(embedded); reason != "" {
		return fmt.Sprintf("%s address of %s (%s)", kind, embedded, reason)
	}
	return ""
}
