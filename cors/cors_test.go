package cors

import (
	"testing"

	"github.com/valyala/fasthttp"
)

func TestParse(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		in      string
		want    string
		wantErr bool
	}{
		{"", "", false},
		{" , ", "", false},
		{"*", "*", false},
		{"https://www.example.com", "https://www.example.com", false},
		{"HTTPS://WWW.Example.com/", "https://www.example.com", false},
		{"www.example.com", "", true},
		{"https://example.com/path", "", true},
		{"https://user:pw@example.com", "", true},
		{"ftp://example.com", "", true},
	} {
		p, err := Parse(tt.in)
		if (err != nil) != tt.wantErr || err == nil && p.String() != tt.want {
			t.Errorf("Parse(%q) = %v, %v, want %q (error %v)", tt.in, p, err, tt.want, tt.wantErr)
		}
	}
}

func request(method, origin string, preflight bool) *fasthttp.RequestCtx {
	var c fasthttp.RequestCtx
	c.Request.Header.SetMethod(method)
	c.Request.SetRequestURI("/acme/fetch/en-us/item/1")
	if origin != "" {
		c.Request.Header.Set("Origin", origin)
	}
	if preflight {
		c.Request.Header.Set("Access-Control-Request-Method", "GET")
	}
	return &c
}

// TestAllowDeny checks preflights and answers for an allowed origin, a
// disallowed one, and a policy of any origin.
func TestAllowDeny(t *testing.T) {
	t.Parallel()
	list, _ := Parse("https://a.example, http://localhost:3000")
	anyOrigin, _ := Parse("*")
	for _, tt := range []struct {
		name      string
		p         *Policy
		origin    string
		wantAllow string
		wantVary  bool
	}{
		{"listed", list, "https://a.example", "https://a.example", true},
		{"listed, other case", list, "HTTPS://A.EXAMPLE", "HTTPS://A.EXAMPLE", true},
		{"listed port", list, "http://localhost:3000", "http://localhost:3000", true},
		{"not listed", list, "https://b.example", "", true},
		{"no Origin", list, "", "", true},
		{"any", anyOrigin, "https://b.example", "*", false},
		{"nil policy", nil, "https://a.example", "", false},
	} {
		if tt.p != nil {
			c := request("OPTIONS", tt.origin, true)
			if tt.origin != "" && !Preflight(c) {
				t.Errorf("%s: Preflight = false", tt.name)
			}
			tt.p.Answer(c)
			h := &c.Response.Header
			if c.Response.StatusCode() != 204 || string(h.Peek("Access-Control-Allow-Origin")) != tt.wantAllow {
				t.Errorf("%s: preflight = %d, Allow-Origin %q, want 204 %q", tt.name, c.Response.StatusCode(), h.Peek("Access-Control-Allow-Origin"), tt.wantAllow)
			}
			if allowed := tt.wantAllow != ""; allowed != (len(h.Peek("Access-Control-Allow-Methods")) > 0) || allowed != (len(h.Peek("Access-Control-Allow-Headers")) > 0) {
				t.Errorf("%s: preflight headers %s", tt.name, h.String())
			}
		}
		c := request("GET", tt.origin, false)
		tt.p.Decorate(c)
		h := &c.Response.Header
		if got := string(h.Peek("Access-Control-Allow-Origin")); got != tt.wantAllow {
			t.Errorf("%s: GET Allow-Origin = %q, want %q", tt.name, got, tt.wantAllow)
		}
		if got := string(h.Peek("Vary")) == "Origin"; got != tt.wantVary {
			t.Errorf("%s: GET Vary = %q, want Origin: %v", tt.name, h.Peek("Vary"), tt.wantVary)
		}
	}
	if Preflight(request("OPTIONS", "https://a.example", false)) {
		t.Error("an OPTIONS without Access-Control-Request-Method is a preflight")
	}
}

func TestApplies(t *testing.T) {
	t.Parallel()
	for path, want := range map[string]bool{
		"/acme/fetch/en-us/item/1": true, "/acme/assets/ab.png": true, "/api": false, "/api/v1/instance/x": false,
		"/studio": false, "/studio/x": false, "/apix": true,
	} {
		if got := Applies([]byte(path)); got != want {
			t.Errorf("Applies(%q) = %v, want %v", path, got, want)
		}
	}
}
