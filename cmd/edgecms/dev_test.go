package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/cookiejar"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/edgecms/edgecms/internal/pgtest"
)

// TestTaskDev runs what `go tool task dev` runs (scripts/dev.sh) on a fresh
// database and checks what it prints: the Studio's URL with the demo
// user's email and password, which sign in there, and a fetch key and a
// management token that work.
func TestTaskDev(t *testing.T) {
	t.Parallel()
	_, dbURL := pgtest.New(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("bash", "scripts/dev.sh")
	cmd.Dir = root
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "EDGECMS_") {
			env = append(env, kv)
		}
	}
	cmd.Env = append(env, "DATABASE_URL="+dbURL, "EDGECMS_ADDR="+addr, "EDGECMS_STORE="+filepath.Join(t.TempDir(), "objects"),
		"EDGECMS_SECRET_KEY="+strings.Repeat("ab", 32), "EDGECMS_ADMIN_ADDR=off")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// dev.sh ends by exec'ing edgecms serve, which stops on an interrupt.
	var once sync.Once
	stop := func() {
		once.Do(func() {
			cmd.Process.Signal(os.Interrupt)
			cmd.Wait()
		})
	}
	t.Cleanup(func() {
		stop()
		if t.Failed() {
			t.Logf("scripts/dev.sh stderr:\n%s", stderr.String())
		}
	})

	// What it prints, up to the curl lines.
	var printed strings.Builder
	lines := make(chan string)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			lines <- sc.Text()
		}
	}()
	deadline := time.After(5 * time.Minute) // a bound on the build, not a speed check
read:
	for {
		select {
		case line, ok := <-lines:
			if !ok {
				t.Fatalf("scripts/dev.sh ended early; it printed:\n%s", printed.String())
			}
			printed.WriteString(line + "\n")
			if strings.Contains(line, "/models") {
				break read
			}
		case <-deadline:
			t.Fatalf("scripts/dev.sh printed no curl lines in 5 minutes:\n%s", printed.String())
		}
	}
	go func() {
		for range lines {
		}
	}()
	out := printed.String()
	value := func(label string) string {
		m := regexp.MustCompile(`(?m)^\s*` + regexp.QuoteMeta(label) + `:\s+(\S+)\s*$`).FindStringSubmatch(out)
		if m == nil {
			t.Fatalf("scripts/dev.sh printed no %q line:\n%s", label, out)
		}
		return m[1]
	}
	studio, email, password := value("Studio"), value("email"), value("password")
	token, fetchKey := value("management token"), value("fetch key")
	base := "http://" + addr
	if studio != base+"/studio/" || email != "editor@demo.example" || len(password) < 12 {
		t.Fatalf("scripts/dev.sh printed Studio %q, email %q, password %q; want %s/studio/, the demo user and a password", studio, email, password, base)
	}

	jar, _ := cookiejar.New(nil)
	client := &http.Client{Jar: jar, Timeout: 30 * time.Second}
	get := func(url string, header ...string) (int, string) {
		t.Helper()
		req, _ := http.NewRequest("GET", url, nil)
		for i := 0; i+1 < len(header); i += 2 {
			req.Header.Set(header[i], header[i+1])
		}
		res, err := client.Do(req)
		if err != nil {
			t.Fatalf("GET %s: %v", url, err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return res.StatusCode, string(b)
	}
	// Serving once the Studio answers (the demo is filled before serve starts).
	for start := time.Now(); ; time.Sleep(100 * time.Millisecond) {
		if res, err := client.Get(studio); err == nil {
			res.Body.Close()
			if res.StatusCode == 200 {
				break
			}
		}
		if time.Since(start) > time.Minute {
			t.Fatalf("the Studio at %s did not answer in a minute", studio)
		}
	}
	if status, body := get(studio); status != 200 || !strings.Contains(body, "<html") {
		t.Errorf("GET %s = %d, want the Studio's page", studio, status)
	}

	login, _ := json.Marshal(map[string]string{"email": email, "password": password})
	res, err := client.Post(base+"/api/v1/auth/login", "application/json", bytes.NewReader(login))
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != 200 {
		t.Fatalf("signing in with the printed email and password = %d", res.StatusCode)
	}
	var instances []struct{ Guid, Role string }
	status, body := get(base + "/api/v1/instances")
	if err := json.Unmarshal([]byte(body), &instances); status != 200 || err != nil || len(instances) != 1 || instances[0].Guid != "demo" || instances[0].Role != "full" {
		t.Errorf("the demo user's instances = %d %s, want full control of demo", status, body)
	}
	if status, body := get(base+"/demo/fetch/en-us/sitemap/flat/website", "APIKey", fetchKey); status != 200 || !strings.Contains(body, "pageID") {
		t.Errorf("the printed fetch key reads the sitemap: %d %.200s", status, body)
	}
	if status, _ := get(base+"/api/v1/instance/demo/models", "Authorization", "Bearer "+token); status != 200 {
		t.Errorf("the printed management token reads the models: %d", status)
	}
}
