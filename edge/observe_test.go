package edge_test

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"strings"
	"sync"
	"testing"

	"github.com/edgecms/edgecms/edge"
	"github.com/edgecms/edgecms/logging"
)

// lockedBuffer collects log output written from the server's goroutines.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) lines(msg string) []map[string]any {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []map[string]any
	for _, line := range strings.Split(l.b.String(), "\n") {
		var m map[string]any
		if json.Unmarshal([]byte(line), &m) == nil && m["msg"] == msg {
			out = append(out, m)
		}
	}
	return out
}

// TestAccessLog checks that an edge writes no access line by default, and
// one per request when EDGECMS_EDGE_ACCESS_LOG samples all of them.
func TestAccessLog(t *testing.T) {
	t.Parallel()
	st, _ := site(t)
	for _, tt := range []struct {
		setting string
		want    int
	}{{"off", 0}, {"all", 3}} {
		sampler, err := logging.ParseSampler(tt.setting)
		if err != nil {
			t.Fatal(err)
		}
		var buf lockedBuffer
		e := startEdgeLogging(t, st, edge.Config{OriginURL: deadURL(t), AccessLog: sampler}, slog.New(slog.NewJSONHandler(&buf, nil)))
		for range 2 {
			if r := get(t, e.url+"/acme/fetch/en-us/item/42", fetchKey); r.status != 200 {
				t.Fatalf("GET item = %d", r.status)
			}
		}
		get(t, e.url+"/healthz", "")
		e.stop()
		lines := buf.lines("request")
		if len(lines) != tt.want {
			t.Errorf("EDGECMS_EDGE_ACCESS_LOG=%s: %d access lines, want %d: %v", tt.setting, len(lines), tt.want, lines)
			continue
		}
		if tt.want > 0 {
			if l := lines[1]; l["route"] != "fetch" || l["status"] != 200.0 || l["cache"] != "HIT" || l["method"] != "GET" || l["duration"] == nil {
				t.Errorf("second read's access line = %v, want a fetch HIT with status and duration", l)
			}
		}
	}
}
