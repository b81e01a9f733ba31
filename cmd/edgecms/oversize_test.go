package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/edgecms/edgecms/internal/cmdtest"
	"github.com/edgecms/edgecms/internal/pgtest"
)

// nodeOversize runs testdata/oversize.mjs: tries POSTs of an oversize body
// of kind to url with Node's fetch, and returns each try's status or error.
func nodeOversize(t *testing.T, url string, size int, kind string, tries int, token string) []any {
	t.Helper()
	script, _ := filepath.Abs("testdata/oversize.mjs")
	out, err := exec.Command("node", script, url, strconv.Itoa(size), kind, strconv.Itoa(tries), token).Output()
	if err != nil {
		t.Fatalf("node oversize.mjs: %v", err)
	}
	var got []any
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("node oversize.mjs printed %q: %v", out, err)
	}
	return got
}

// peakRSS is the peak resident memory of process pid, in bytes (VmHWM).
func peakRSS(t *testing.T, pid int) int64 {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return kb << 10
		}
	}
	t.Fatal("no VmHWM")
	return 0
}

// TestOversizeBodiesNodeFetch sends oversize bodies with Node's fetch, which
// writes the whole body before it reads the answer: to the origin and to an
// edge in front of it, a JSON body over the 2 MiB body limit (with a length,
// and chunked) and an upload over EDGECMS_UPLOAD_MAX_BYTES. Every one of 20
// tries must read the 413, never a connection reset, and the origin's
// memory must stay flat while it drains the uploads.
func TestOversizeBodiesNodeFetch(t *testing.T) {
	t.Parallel()
	_, dsn := pgtest.New(t)
	objects := filepath.Join(t.TempDir(), "objects")
	env := []string{"DATABASE_URL=" + dsn, "EDGECMS_STORE=" + objects, "EDGECMS_UPLOAD_MAX_BYTES=1048576"}
	created := cmdtest.Run(t, env, "instance", "create", "--guid", "big")
	if created.Code != 0 {
		t.Fatalf("instance create: %s", created.Stderr)
	}
	var creds struct{ ManagementToken string }
	json.Unmarshal([]byte(created.Stdout), &creds)
	const originAddr, edgeAddr = "127.0.0.1:25241", "127.0.0.1:25242"
	origin := cmdtest.Start(t, append(env, "EDGECMS_ADDR="+originAddr, "EDGECMS_ADMIN_ADDR=127.0.0.1:25141",
		"EDGECMS_SECRET_KEY="+strings.Repeat("ef", 32)), "origin")
	origin.WaitFor(t, 60*time.Second, "origin ready", func() bool { return cmdtest.Status("http://127.0.0.1:25141/readyz") == 200 })
	edge := cmdtest.Start(t, append(env, "EDGECMS_ADDR="+edgeAddr, "EDGECMS_ADMIN_ADDR=127.0.0.1:25142",
		"EDGECMS_ORIGIN_URL=http://"+originAddr), "edge")
	edge.WaitFor(t, 60*time.Second, "edge ready", func() bool { return cmdtest.Status("http://127.0.0.1:25142/readyz") == 200 })

	// Warm the origin up (a first upload and JSON body) before its peak
	// memory is taken.
	nodeOversize(t, "http://"+originAddr+"/api/v1/instance/big/assets", 3<<20, "multipart", 2, creds.ManagementToken)
	before := peakRSS(t, origin.Pid())

	const tries = 20
	for _, c := range []struct {
		name, base, path, kind string
		size                   int
	}{
		{"origin, JSON", originAddr, "/api/v1/instance/big/models", "json", 8 << 20},
		{"origin, chunked JSON", originAddr, "/api/v1/instance/big/models", "chunked", 8 << 20},
		{"origin, upload", originAddr, "/api/v1/instance/big/assets", "multipart", 8 << 20},
		{"edge, JSON", edgeAddr, "/api/v1/instance/big/models", "json", 8 << 20},
		{"edge, chunked JSON", edgeAddr, "/api/v1/instance/big/models", "chunked", 8 << 20},
		{"edge, upload", edgeAddr, "/api/v1/instance/big/assets", "multipart", 8 << 20},
	} {
		got := nodeOversize(t, "http://"+c.base+c.path, c.size, c.kind, tries, creds.ManagementToken)
		n := 0
		for _, r := range got {
			if r == 413.0 {
				n++
			}
		}
		if n != tries {
			t.Errorf("%s: %d of %d tries read the 413; outcomes %v", c.name, n, tries, got)
		}
	}
	// 40 uploads of 8 MiB went to the origin (20 through the edge).
	if grew := peakRSS(t, origin.Pid()) - before; grew > 24<<20 {
		t.Errorf("the origin's peak memory grew by %d MiB while it refused 320 MiB of uploads, want it flat (< 24 MiB)", grew>>20)
	}
}
