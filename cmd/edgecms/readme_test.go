package main

import (
	"bytes"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/edgecms/edgecms/internal/cmdtest"
	"github.com/edgecms/edgecms/internal/pgtest"
)

// TestReadmeWalkthrough runs the curl walkthrough of the README (every sh
// block of "The management API, with curl") with bash against a real
// `edgecms serve`, on a database that already holds the demo, and then a
// second time on the same database: it holds no id that only a fresh
// database would give, since it takes every id from an answer. Only the
// address (127.0.0.1:8080) and, on the second run, the guid are changed.
// Every request must answer 2xx, but those the walkthrough marks "# 412".
func TestReadmeWalkthrough(t *testing.T) {
	t.Parallel()
	readme, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	script := walkthrough(t, string(readme))
	_, dbURL := pgtest.New(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	env := []string{"DATABASE_URL=" + dbURL, "EDGECMS_ADDR=" + addr, "EDGECMS_STORE=" + filepath.Join(t.TempDir(), "objects"),
		"EDGECMS_SECRET_KEY=" + strings.Repeat("cd", 32), "EDGECMS_ADMIN_ADDR=off"}
	if r := cmdtest.Run(t, env, "migrate"); r.Code != 0 {
		t.Fatalf("edgecms migrate: %d %s", r.Code, r.Stderr)
	}
	if r := cmdtest.Run(t, env, "demo", "--guid", "demo"); r.Code != 0 {
		t.Fatalf("edgecms demo: %d %s", r.Code, r.Stderr)
	}
	p := cmdtest.Start(t, env, "serve")
	p.WaitFor(t, 2*time.Minute, "edgecms serve", func() bool { return cmdtest.Status("http://"+addr+"/api/openapi.json") == 200 })

	// The walkthrough runs from a checkout, with bin/edgecms; curl goes
	// through a wrapper that writes each answer's status to stderr.
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "bin"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(cmdtest.Binary(t), filepath.Join(dir, "bin", "edgecms")); err != nil {
		t.Fatal(err)
	}
	realCurl, err := exec.LookPath("curl")
	if err != nil {
		t.Fatal(err)
	}
	wrappers := filepath.Join(dir, "wrappers")
	if err := os.Mkdir(wrappers, 0o755); err != nil {
		t.Fatal(err)
	}
	wrapper := "#!/bin/sh\nexec " + realCurl + " -w '%{stderr}HTTP %{http_code} %{url_effective}\\n' \"$@\"\n"
	if err := os.WriteFile(filepath.Join(wrappers, "curl"), []byte(wrapper), 0o755); err != nil {
		t.Fatal(err)
	}
	want412 := strings.Count(script, "# 412")
	for _, guid := range []string{"acme", "acme-again"} {
		s := strings.ReplaceAll(script, "127.0.0.1:8080", addr)
		s = strings.Replace(s, "G=acme;", "G="+guid+";", 1)
		cmd := exec.Command("bash", "-eu", "-c", s)
		cmd.Dir = dir
		cmd.Env = cmdtest.Env("DATABASE_URL="+dbURL, "PATH="+wrappers+":"+os.Getenv("PATH"))
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		if err != nil {
			t.Fatalf("walkthrough (guid %s): %v\nstdout:\n%s\nstderr:\n%s", guid, err, stdout.String(), stderr.String())
		}
		var requests, got412 int
		for _, line := range strings.Split(stderr.String(), "\n") {
			f := strings.Fields(line)
			if len(f) != 3 || f[0] != "HTTP" {
				continue
			}
			requests++
			switch {
			case f[1] == "412":
				got412++
			case f[1] < "200" || f[1] >= "300":
				t.Errorf("walkthrough (guid %s): %s answered %s", guid, f[2], f[1])
			}
		}
		if requests < 30 || got412 != want412 {
			t.Errorf("walkthrough (guid %s): %d requests, %d answered 412 (want %d)\nstdout:\n%s\nstderr:\n%s",
				guid, requests, got412, want412, stdout.String(), stderr.String())
		}
	}
}

// walkthrough returns the sh blocks of the README's section "The
// management API, with curl" (its subsections included), in order.
func walkthrough(t *testing.T, readme string) string {
	t.Helper()
	start := strings.Index(readme, "\n## The management API, with curl\n")
	if start < 0 {
		t.Fatal("the README has no section \"The management API, with curl\"")
	}
	section := readme[start+1:]
	if end := strings.Index(section[3:], "\n## "); end >= 0 {
		section = section[:end+3]
	}
	var blocks []string
	for _, m := range regexp.MustCompile("(?s)```sh\n(.*?)```").FindAllStringSubmatch(section, -1) {
		blocks = append(blocks, m[1])
	}
	if len(blocks) < 2 {
		t.Fatalf("the walkthrough has %d sh blocks, want the first steps and the second edition", len(blocks))
	}
	return strings.Join(blocks, "\n")
}
