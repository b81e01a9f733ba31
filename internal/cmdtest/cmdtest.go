// Package cmdtest runs the edgecms binary in tests, as an operator would:
// built once per test binary, started with an environment of the test's
// choosing (never the developer's DATABASE_URL or EDGECMS_* settings), its
// output kept for assertions, and interrupted when the test ends.
package cmdtest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

var (
	dir   string
	build = sync.OnceValues(func() (string, error) {
		d, err := os.MkdirTemp("", "edgecms-cmdtest-")
		if err != nil {
			return "", err
		}
		dir = d
		bin := filepath.Join(d, "edgecms")
		out, err := exec.Command("go", "build", "-o", bin, "github.com/edgecms/edgecms/cmd/edgecms").CombinedOutput()
		if err != nil {
			return "", fmt.Errorf("go build: %v\n%s", err, out)
		}
		return bin, nil
	})
)

// Binary returns the path of the edgecms binary, building it on first use.
func Binary(t testing.TB) string {
	t.Helper()
	bin, err := build()
	if err != nil {
		t.Fatal(err)
	}
	return bin
}

// Cleanup removes the binary; call it from TestMain after m.Run.
func Cleanup() {
	if dir != "" {
		os.RemoveAll(dir)
	}
}

// Env is this process's environment without DATABASE_URL, AWS_* and
// EDGECMS_* variables, plus extra ("NAME=value").
func Env(extra ...string) []string {
	var env []string
	for _, kv := range os.Environ() {
		if strings.HasPrefix(kv, "DATABASE_URL=") || strings.HasPrefix(kv, "EDGECMS_") || strings.HasPrefix(kv, "AWS_") {
			continue
		}
		env = append(env, kv)
	}
	return append(env, extra...)
}

// Result is what a finished command gave.
type Result struct {
	Stdout, Stderr string
	Code           int
}

// Run runs edgecms with args in the environment Env(env...) and a scratch
// working folder, and waits for it (at most a minute).
func Run(t testing.TB, env []string, args ...string) Result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, Binary(t), args...)
	cmd.Env = Env(env...)
	cmd.Dir = t.TempDir()
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	r := Result{Stdout: out.String(), Stderr: errb.String()}
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		r.Code = ee.ExitCode()
	case err != nil:
		t.Fatalf("edgecms %s: %v", strings.Join(args, " "), err)
	}
	return r
}

// Proc is a running edgecms command.
type Proc struct {
	cmd  *exec.Cmd
	out  syncBuffer
	done chan struct{}
	err  error
}

// Start starts edgecms with args in the environment Env(env...) and a
// scratch working folder. It is interrupted (then killed, after 15 s) when
// the test ends.
func Start(t testing.TB, env []string, args ...string) *Proc {
	t.Helper()
	p := &Proc{cmd: exec.Command(Binary(t), args...), done: make(chan struct{})}
	p.cmd.Env = Env(env...)
	p.cmd.Dir = t.TempDir()
	p.cmd.Stdout, p.cmd.Stderr = &p.out, &p.out
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { p.err = p.cmd.Wait(); close(p.done) }()
	t.Cleanup(func() {
		p.Stop()
		if t.Failed() {
			t.Logf("edgecms %s output:\n%s", strings.Join(args, " "), p.Output())
		}
	})
	return p
}

// Stop interrupts the command and waits for it to end (killing it after
// 15 s).
func (p *Proc) Stop() {
	select {
	case <-p.done:
		return
	default:
	}
	p.cmd.Process.Signal(os.Interrupt)
	select {
	case <-p.done:
	case <-time.After(15 * time.Second):
		p.cmd.Process.Kill()
		<-p.done
	}
}

// Exited reports whether the command has ended.
func (p *Proc) Exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// Output is everything the command wrote so far, stdout and stderr.
func (p *Proc) Output() string { return p.out.String() }

// WaitFor waits until cond holds, checking every 50 ms, and fails the test
// after timeout or when the command ends first.
func (p *Proc) WaitFor(t testing.TB, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if p.Exited() {
			t.Fatalf("waiting for %s: edgecms ended: %v\n%s", what, p.err, p.Output())
		}
		if time.Now().After(deadline) {
			t.Fatalf("waiting for %s: not after %s\n%s", what, timeout, p.Output())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// Status is the status of a GET of url, 0 when nothing answered.
func Status(url string) int {
	res, err := http.Get(url)
	if err != nil {
		return 0
	}
	res.Body.Close()
	return res.StatusCode
}

// syncBuffer is a bytes.Buffer safe for the command's writes and the
// test's reads.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// Pid is the command's process id.
func (p *Proc) Pid() int { return p.cmd.Process.Pid }
