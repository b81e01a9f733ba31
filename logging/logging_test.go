package logging

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"
)

func TestRequestID(t *testing.T) {
	t.Parallel()
	for _, given := range []string{"abc-123", "Root=1-5759e988-bd862e3fe1be46a994272793", "f81d4fae-7dec-11d0-a765-00a0c91e6bf6"} {
		if got := RequestID([]byte(given)); got != given {
			t.Errorf("RequestID(%q) = %q, want it kept", given, got)
		}
	}
	for _, bad := range []string{"", "two words", "a\nlevel=ERROR", `"quoted"`, strings.Repeat("x", 129)} {
		got := RequestID([]byte(bad))
		if got == bad || len(got) != 16 {
			t.Errorf("RequestID(%q) = %q, want a new 16-digit id", bad, got)
		}
	}
	if a, b := NewRequestID(), NewRequestID(); a == b {
		t.Errorf("two new ids are equal: %s", a)
	}
}

func TestNew(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	log, err := New(&buf, JSON, "warn")
	if err != nil {
		t.Fatal(err)
	}
	log.Info("hidden")
	log.Warn("shown", "k", "v")
	var line map[string]any
	if err := json.Unmarshal(buf.Bytes(), &line); err != nil || line["msg"] != "shown" || line["level"] != "WARN" || line["k"] != "v" {
		t.Errorf("JSON warn logger wrote %q", buf.String())
	}
	for _, c := range [][2]string{{"xml", "info"}, {"text", "loud"}} {
		if _, err := New(&buf, c[0], c[1]); err == nil {
			t.Errorf("New(%q, %q) succeeded", c[0], c[1])
		}
	}
}

func TestSampler(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{"": "off", "off": "off", "0": "off", "all": "all", "1": "all", "0.25": "0.25"} {
		s, err := ParseSampler(in)
		if err != nil || s.String() != want {
			t.Errorf("ParseSampler(%q) = %v, %v, want %s", in, s, err, want)
		}
	}
	for _, bad := range []string{"2", "-0.1", "some"} {
		if _, err := ParseSampler(bad); err == nil {
			t.Errorf("ParseSampler(%q) succeeded", bad)
		}
	}
	off, _ := ParseSampler("off")
	all, _ := ParseSampler("all")
	quarter, _ := ParseSampler("0.25")
	n := 0
	for range 10000 {
		if off.Take() {
			t.Fatal("off took a request")
		}
		if !all.Take() {
			t.Fatal("all skipped a request")
		}
		if quarter.Take() {
			n++
		}
	}
	if n < 2000 || n > 3000 {
		t.Errorf("0.25 took %d of 10000", n)
	}
}

func TestEvery(t *testing.T) {
	t.Parallel()
	now := time.Unix(1000, 0)
	e := NewEvery(10 * time.Second)
	e.now = func() time.Time { return now }
	if ok, n := e.Allow(); !ok || n != 0 {
		t.Errorf("first Allow = %v, %d, want true, 0", ok, n)
	}
	for range 5 {
		now = now.Add(time.Second)
		if ok, _ := e.Allow(); ok {
			t.Fatal("Allow within the interval = true")
		}
	}
	now = now.Add(6 * time.Second)
	if ok, n := e.Allow(); !ok || n != 5 {
		t.Errorf("Allow after the interval = %v, %d, want true, 5", ok, n)
	}
}
