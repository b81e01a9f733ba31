package egress

import (
	"errors"
	"net/netip"
	"reflect"
	"strings"
	"testing"
)

func TestCheck(t *testing.T) {
	tests := []struct {
		addr   string
		reason string // "" means allowed
	}{
		{"127.0.0.1", "loopback address"},
		{"127.1.2.3", "loopback address"},
		{"::1", "loopback address"},
		{"::ffff:127.0.0.1", "loopback address"},
		{"169.254.169.254", "link-local address (cloud metadata service)"},
		{"::ffff:169.254.169.254", "link-local address (cloud metadata service)"},
		{"169.254.1.1", "link-local address"},
		{"fe80::1", "link-local address"},
		{"fe80::1%eth0", "link-local address"},
		{"10.0.0.1", "private address"},
		{"::ffff:10.0.0.1", "private address"},
		{"172.16.0.1", "private address"},
		{"172.31.255.255", "private address"},
		{"192.168.1.1", "private address"},
		{"fd00::1", "unique-local address"},
		{"fc00::1", "unique-local address"},
		{"fd00:ec2::254", "unique-local address (cloud metadata service)"},
		{"100.64.0.1", "shared (CGNAT) address"},
		{"100.127.255.255", "shared (CGNAT) address"},
		{"0.0.0.0", "unspecified address"},
		{"::", "unspecified address"},
		{"::ffff:0.0.0.0", "unspecified address"},
		{"0.1.2.3", `"this network" address`},
		{"224.0.0.1", "multicast address"},
		{"239.255.255.250", "multicast address"},
		{"ff02::1", "multicast address"},
		{"255.255.255.255", "broadcast address"},
		{"240.0.0.1", "reserved address"},
		{"192.0.0.170", "IETF protocol assignment address"},
		{"198.18.0.1", "benchmarking address"},
		{"::127.0.0.1", "IPv4-compatible address (deprecated)"},
		{"fec0::1", "site-local address (deprecated)"},
		{"64:ff9b:1::1", "local-use NAT64 address"},
		{"64:ff9b::7f00:1", "NAT64 address of 127.0.0.1 (loopback address)"},
		{"64:ff9b::a9fe:a9fe", "NAT64 address of 169.254.169.254 (link-local address (cloud metadata service))"},
		{"2002:c0a8:101::1", "6to4 address of 192.168.1.1 (private address)"},

		{"93.184.215.14", ""},
		{"8.8.8.8", ""},
		{"::ffff:8.8.8.8", ""},
		{"2606:4700:4700::1111", ""},
		{"172.15.255.255", ""},
		{"172.32.0.1", ""},
		{"100.63.255.255", ""},
		{"100.128.0.1", ""},
		{"169.253.255.255", ""},
		{"64:ff9b::808:808", ""},
		{"2002:808:808::1", ""},
	}
	var p Policy
	for _, tt := range tests {
		err := p.Check(netip.MustParseAddr(tt.addr))
		got := ""
		if err != nil {
			var refused *RefusedError
			if !errors.As(err, &refused) {
				t.Errorf("Check(%s) = %v, want a *RefusedError", tt.addr, err)
				continue
			}
			got = refused.Reason
		}
		if got != tt.reason {
			t.Errorf("Check(%s) reason = %q, want %q", tt.addr, got, tt.reason)
		}
	}
}

func TestCheckErrorText(t *testing.T) {
	tests := []struct {
		err  error
		want string
	}{
		{NewPolicy().Check(netip.MustParseAddr("127.0.0.1")),
			"refused to connect to 127.0.0.1: loopback address (set EDGECMS_WEBHOOK_ALLOW_NETS to allow)"},
		{NewPolicy().Check(netip.MustParseAddr("::ffff:169.254.169.254")),
			"refused to connect to ::ffff:169.254.169.254: link-local address (cloud metadata service) (set EDGECMS_WEBHOOK_ALLOW_NETS to allow)"},
		{&RefusedError{Host: "localhost", Addr: netip.MustParseAddr("::1"), Reason: "loopback address"},
			"refused to connect to localhost (::1): loopback address (set EDGECMS_WEBHOOK_ALLOW_NETS to allow)"},
		{NewPolicy().Check(netip.Addr{}),
			"refused to connect to invalid IP: invalid address (set EDGECMS_WEBHOOK_ALLOW_NETS to allow)"},
	}
	for _, tt := range tests {
		if tt.err == nil || tt.err.Error() != tt.want {
			t.Errorf("error = %v, want %q", tt.err, tt.want)
		}
	}
}

func TestCheckAllowed(t *testing.T) {
	nets, err := ParseAllowNets("127.0.0.0/8, 10.0.0.0/8 fd00::/8,::ffff:192.168.1.0/120")
	if err != nil {
		t.Fatal(err)
	}
	p := NewPolicy(nets...)
	tests := []struct {
		addr    string
		allowed bool
	}{
		{"127.0.0.1", true},
		{"::ffff:127.0.0.1", true},
		{"64:ff9b::7f00:1", true},
		{"10.2.3.4", true},
		{"fd12::1", true},
		{"192.168.1.7", true},
		{"::ffff:192.168.1.7", true},
		{"192.168.2.7", false},
		{"::1", false},
		{"fc00::1", false},
		{"169.254.169.254", false},
		{"172.16.0.1", false},
		{"8.8.8.8", true},
	}
	for _, tt := range tests {
		err := p.Check(netip.MustParseAddr(tt.addr))
		if got := err == nil; got != tt.allowed {
			t.Errorf("Check(%s) with %v = %v, want allowed %v", tt.addr, nets, err, tt.allowed)
		}
	}
}

func TestNilPolicy(t *testing.T) {
	var p *Policy
	if err := p.Check(netip.MustParseAddr("127.0.0.1")); err == nil {
		t.Error("nil Policy allowed 127.0.0.1")
	}
	if err := p.Check(netip.MustParseAddr("8.8.8.8")); err != nil {
		t.Errorf("nil Policy refused 8.8.8.8: %v", err)
	}
	if got := p.Allowed(); got != nil {
		t.Errorf("nil Policy Allowed() = %v, want nil", got)
	}
}

func TestParseAllowNets(t *testing.T) {
	tests := []struct {
		in      string
		want    []string
		wantErr bool
	}{
		{"", nil, false},
		{"  , ", nil, false},
		{"10.0.0.0/8, 127.0.0.1/32", []string{"10.0.0.0/8", "127.0.0.1/32"}, false},
		{"10.0.0.0/8,127.0.0.1/32", []string{"10.0.0.0/8", "127.0.0.1/32"}, false},
		{"10.0.0.0/8 127.0.0.1/32\tfd00::/8", []string{"10.0.0.0/8", "127.0.0.1/32", "fd00::/8"}, false},
		{"10.1.2.3/8", []string{"10.0.0.0/8"}, false},
		{"127.0.0.1", []string{"127.0.0.1/32"}, false},
		{"::1", []string{"::1/128"}, false},
		{"::ffff:127.0.0.0/104", []string{"127.0.0.0/8"}, false},
		{"10.0.0/8", nil, true},
		{"10.0.0.0/33", nil, true},
		{"10.0.0.0/", nil, true},
		{"10.0.0.0/8;", nil, true},
		{"localhost", nil, true},
		{"fe80::1%eth0", nil, true},
		{"10.0.0.0/8, nonsense", nil, true},
	}
	for _, tt := range tests {
		nets, err := ParseAllowNets(tt.in)
		var got []string
		for _, n := range nets {
			got = append(got, n.String())
		}
		if (err != nil) != tt.wantErr || !reflect.DeepEqual(got, tt.want) {
			t.Errorf("ParseAllowNets(%q) = %v, %v, want %v, error %v", tt.in, got, err, tt.want, tt.wantErr)
		}
		if err != nil && !strings.Contains(err.Error(), AllowNetsEnv) {
			t.Errorf("ParseAllowNets(%q) error %q does not name %s", tt.in, err, AllowNetsEnv)
		}
	}
}

func TestAllowed(t *testing.T) {
	p := NewPolicy(netip.MustParsePrefix("10.9.8.7/8"), netip.Prefix{})
	got := p.Allowed()
	if want := []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8")}; !reflect.DeepEqual(got, want) {
		t.Errorf("Allowed() = %v, want %v", got, want)
	}
	got[0] = netip.MustParsePrefix("0.0.0.0/0")
	if err := p.Check(netip.MustParseAddr("127.0.0.1")); err == nil {
		t.Error("changing the slice Allowed returned changed the Policy")
	}
}
