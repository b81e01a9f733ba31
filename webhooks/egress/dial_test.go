package egress

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"strings"
	"testing"

	"github.com/edgecms/edgecms/problem"
)

// receiver starts a real HTTP server on 127.0.0.1 and returns its port.
func receiver(t *testing.T) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "received")
	}))
	t.Cleanup(srv.Close)
	u, err := url.Parse(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	return u.Port()
}

// post sends a delivery through the Policy's transport.
func post(p *Policy, target string) (string, error) {
	client := &http.Client{Transport: p.Transport()}
	defer client.CloseIdleConnections()
	resp, err := client.Post(target, "application/json", strings.NewReader(`{"type":"ping"}`))
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	return string(body), err
}

func TestTransportRefuses(t *testing.T) {
	port := receiver(t)
	tests := []struct {
		target   string
		wantHost string
	}{
		{"http://localhost:" + port + "/hook", "localhost"},
		{"http://127.0.0.1:" + port + "/hook", "127.0.0.1"},
		{"http://[::ffff:127.0.0.1]:" + port + "/hook", "::ffff:127.0.0.1"},
	}
	for _, tt := range tests {
		_, err := post(NewPolicy(), tt.target)
		var refused *RefusedError
		if !errors.As(err, &refused) {
			t.Errorf("POST %s = %v, want a *RefusedError", tt.target, err)
			continue
		}
		if refused.Host != tt.wantHost || refused.Reason != "loopback address" {
			t.Errorf("POST %s refused with host %q, reason %q, want %q, %q", tt.target, refused.Host, refused.Reason, tt.wantHost, "loopback address")
		}
		if !strings.Contains(err.Error(), "(set EDGECMS_WEBHOOK_ALLOW_NETS to allow)") {
			t.Errorf("POST %s error = %q, want it to say how to allow", tt.target, err)
		}
	}
}

func TestTransportAllowListed(t *testing.T) {
	port := receiver(t)
	nets, err := ParseAllowNets("127.0.0.0/8")
	if err != nil {
		t.Fatal(err)
	}
	// localhost may resolve to ::1 first; that address stays refused and the
	// dialer falls back to 127.0.0.1.
	for _, target := range []string{
		"http://localhost:" + port + "/hook",
		"http://127.0.0.1:" + port + "/hook",
	} {
		got, err := post(NewPolicy(nets...), target)
		if err != nil || got != "received" {
			t.Errorf("POST %s with 127.0.0.0/8 allowed = %q, %v, want %q, nil", target, got, err, "received")
		}
	}
}

func TestDialer(t *testing.T) {
	port := receiver(t)
	ctx := context.Background()

	conn, err := NewPolicy().Dialer().DialContext(ctx, "tcp", net.JoinHostPort("localhost", port))
	var refused *RefusedError
	if !errors.As(err, &refused) {
		t.Errorf("Dialer().DialContext(localhost) = %v, want a *RefusedError", err)
	}
	if conn != nil {
		conn.Close()
	}

	_, err = NewPolicy().DialContext(ctx, "tcp", net.JoinHostPort("localhost", port))
	if !errors.As(err, &refused) || refused.Host != "localhost" {
		t.Errorf("DialContext(localhost) = %v, want a *RefusedError naming localhost", err)
	}

	conn, err = NewPolicy(mustParse(t, "127.0.0.1")...).DialContext(ctx, "tcp4", net.JoinHostPort("localhost", port))
	if err != nil {
		t.Fatalf("DialContext(localhost) with 127.0.0.1 allowed = %v", err)
	}
	conn.Close()
}

func mustParse(t *testing.T, s string) []netip.Prefix {
	t.Helper()
	nets, err := ParseAllowNets(s)
	if err != nil {
		t.Fatal(err)
	}
	return nets
}

func TestTransportIgnoresProxyEnvironment(t *testing.T) {
	t.Setenv("HTTP_PROXY", "http://proxy.invalid:3128")
	t.Setenv("HTTPS_PROXY", "http://proxy.invalid:3128")
	if tr := NewPolicy().Transport(); tr.Proxy != nil {
		t.Error("Transport().Proxy is set, want nil: a proxy would hide the endpoint's address from the Policy")
	}
}

func TestCheckURL(t *testing.T) {
	tests := []struct {
		url  string
		want string // a part of the detail; "" means valid
	}{
		{"https://hooks.example.com/edgecms", ""},
		{"http://hooks.example.com:8080/edgecms?x=1", ""},
		{"HTTPS://Hooks.Example.com/", ""},
		{"https://93.184.215.14/hook", ""},
		{"https://[2606:4700:4700::1111]/hook", ""},
		{"https://my-localhost.example/", ""},
		{"https://10.example/", ""},

		{"ftp://hooks.example.com/", "scheme must be http or https"},
		{"javascript:alert(1)", "scheme must be http or https"},
		{"hooks.example.com/edgecms", "scheme must be http or https"},
		{"", "scheme must be http or https"},
		{"http://user:pass@hooks.example.com/", "must not contain a user name or password"},
		{"http://user@hooks.example.com/", "must not contain a user name or password"},
		{"http:///path", "must name a host"},
		{"http:hooks.example.com", "must name a host"},
		{"http://:8080/", "must name a host"},
		{"http://hooks.example.com:0/", "not between 1 and 65535"},
		{"http://hooks.example.com:65536/", "not between 1 and 65535"},
		{"http://hooks.example.com:port/", "not a valid URL"},
		{"http://[::1/", "not a valid URL"},
		{"http://127.0.0.1/", "refused to connect to 127.0.0.1: loopback address (set EDGECMS_WEBHOOK_ALLOW_NETS to allow)"},
		{"http://[::1]:8080/", "loopback address"},
		{"http://[::ffff:127.0.0.1]/", "loopback address"},
		{"http://169.254.169.254/latest/meta-data/", "cloud metadata service"},
		{"http://10.0.0.1/", "private address"},
		{"http://0.0.0.0/", "unspecified address"},
		{"http://[fe80::1%25eth0]/", "link-local address"},
		{"http://localhost:3000/", "refused to connect to localhost (127.0.0.1): loopback address"},
		{"http://LOCALHOST./", "loopback address"},
		{"http://api.localhost/", "loopback address"},
		{"http://2130706433/", "neither a host name nor a dotted-decimal IP address"},
		{"http://0x7f.1/", "neither a host name nor a dotted-decimal IP address"},
		{"http://017700000001/", "neither a host name nor a dotted-decimal IP address"},
		{"http://127.1/", "neither a host name nor a dotted-decimal IP address"},
		{"http://hooks.example.0x/", "neither a host name nor a dotted-decimal IP address"},
	}
	var p Policy
	for _, tt := range tests {
		err := p.CheckURL(tt.url)
		switch {
		case tt.want == "" && err != nil:
			t.Errorf("CheckURL(%q) = %v, want nil", tt.url, err)
		case tt.want == "":
		case err == nil:
			t.Errorf("CheckURL(%q) = nil, want an error containing %q", tt.url, tt.want)
		case !problem.Is(err, problem.Invalid) || !strings.Contains(err.Error(), tt.want):
			t.Errorf("CheckURL(%q) = %v (kind %v), want an Invalid error containing %q", tt.url, err, problem.KindOf(err), tt.want)
		}
	}
}

func TestCheckURLAllowListed(t *testing.T) {
	tests := []struct {
		allow string
		url   string
		ok    bool
	}{
		{"127.0.0.0/8", "http://127.0.0.1:8080/", true},
		{"127.0.0.0/8", "http://localhost:8080/", true},
		{"::1", "http://localhost:8080/", true},
		{"::1", "http://[::1]:8080/", true},
		{"::1", "http://127.0.0.1:8080/", false},
		{"10.0.0.0/8", "http://10.1.2.3/", true},
		{"10.0.0.0/8", "http://localhost/", false},
	}
	for _, tt := range tests {
		err := NewPolicy(mustParse(t, tt.allow)...).CheckURL(tt.url)
		if (err == nil) != tt.ok {
			t.Errorf("CheckURL(%q) with %s allowed = %v, want ok %v", tt.url, tt.allow, err, tt.ok)
		}
	}
}
