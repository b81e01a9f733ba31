package main

import (
	"bufio"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/edgecms/edgecms/internal/cmdtest"
	"github.com/edgecms/edgecms/internal/pgtest"
	"github.com/edgecms/edgecms/internal/testcert"
)

// process is an edgecms command running for a test.
type process struct {
	addr string
	tls  bool
	done chan struct{} // closed when it exits
	err  error         // its exit status, once done
}

// startProcess runs "edgecms <command>" on addr (a port of this helper's
// range, 26500-26999), through prlimit when nofile is not 0, with env
// added, and waits until its health check answers.
func startProcess(t *testing.T, command, addr string, nofile int, useTLS bool, env ...string) *process {
	t.Helper()
	args := []string{cmdtest.Binary(t), command}
	if nofile > 0 {
		args = append([]string{"prlimit", fmt.Sprintf("--nofile=%d:%d", nofile, nofile)}, args...)
	}
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Dir = t.TempDir()
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "DATABASE_URL=") && !strings.HasPrefix(kv, "EDGECMS_") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env, "EDGECMS_ADDR="+addr, "EDGECMS_STORE="+filepath.Join(cmd.Dir, "objects"))
	if useTLS {
		cert, key := testcert.Files(t)
		cmd.Env = append(cmd.Env, "EDGECMS_TLS_CERT="+cert, "EDGECMS_TLS_KEY="+key)
	}
	cmd.Env = append(cmd.Env, env...)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &process{addr: addr, tls: useTLS, done: make(chan struct{})}
	logged := make(chan struct{})
	go func() {
		defer close(logged)
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			t.Log(command + ": " + sc.Text())
		}
	}()
	go func() { <-logged; p.err = cmd.Wait(); close(p.done) }()
	t.Cleanup(func() {
		cmd.Process.Signal(os.Interrupt)
		<-p.done
	})
	deadline := time.Now().Add(90 * time.Second)
	for p.status(t, "GET /healthz HTTP/1.1\r\nHost: a\r\n\r\n") != 200 {
		select {
		case <-p.done:
			t.Fatalf("edgecms %s exited: %v", command, p.err)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("edgecms %s: no answer on %s", command, addr)
		}
		time.Sleep(50 * time.Millisecond)
	}
	return p
}

// dial opens a connection to p, over TLS when p serves TLS.
func (p *process) dial() (net.Conn, error) {
	if p.tls {
		return tls.Dial("tcp", p.addr, &tls.Config{InsecureSkipVerify: true})
	}
	return net.Dial("tcp", p.addr)
}

// status sends raw on a new connection and returns the answer's status, or
// 0 when there is none (refused, or closed without one).
func (p *process) status(t *testing.T, raw string) int {
	c, err := p.dial()
	if err != nil {
		return 0
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(60 * time.Second))
	if _, err := io.WriteString(c, raw); err != nil {
		return 0
	}
	res, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		return 0
	}
	res.Body.Close()
	return res.StatusCode
}

// TestPublicPorts checks the framing rules and the answers to unreadable
// requests on every public port: serve (with TLS), the origin and the edge
// (issue 19, findings 8, 9 and 10).
func TestPublicPorts(t *testing.T) {
	t.Parallel()
	_, dsn := pgtest.New(t)
	origin := startProcess(t, "origin", "127.0.0.1:26511", 0, false, "DATABASE_URL="+dsn)
	serve := startProcess(t, "serve", "127.0.0.1:26512", 0, true, "DATABASE_URL="+dsn)
	edge := startProcess(t, "edge", "127.0.0.1:26513", 0, false, "EDGECMS_ORIGIN_URL=http://"+origin.addr)
	cases := []struct {
		name, raw string
		want      []int // any of; 0 is a close without an answer
	}{
		{"two different Content-Length", "POST /api/v1/instance/x/models HTTP/1.1\r\nHost: a\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\nabc", []int{400, 0}},
		{"Content-Length and chunked", "POST /api/v1/instance/x/models HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n", []int{400, 0}},
		{"HTTP/1.1 without Host", "GET /healthz HTTP/1.1\r\n\r\n", []int{400, 0}},
		{"oversized head", "GET /healthz HTTP/1.1\r\nHost: a\r\nX-Big: " + strings.Repeat("b", 20000) + "\r\n\r\n", []int{431}},
		{"HTTP/1.0 without Host, management", "GET /api/v1/instance/x/models HTTP/1.0\r\n\r\n", []int{401}},
		{"HTTP/1.0 without Host, preview", "GET /x/preview/en-us/item/1 HTTP/1.0\r\n\r\n", []int{401}},
		{"stalled partial head", "GET /healthz HTTP/1.1\r\nHost: a\r\nX-Partial", []int{408, 0}},
	}
	for _, p := range []struct {
		name string
		p    *process
	}{{"serve", serve}, {"origin", origin}, {"edge", edge}} {
		for _, tc := range cases {
			t.Run(p.name+"/"+tc.name, func(t *testing.T) {
				t.Parallel()
				got := p.p.status(t, tc.raw)
				for _, w := range tc.want {
					if got == w {
						return
					}
				}
				t.Errorf("status %d, want one of %v", got, tc.want)
			})
		}
	}
}

// TestConnectionFlood floods serve and the origin, each under an open-file
// limit of 256, with more idle connections than that, and checks that they
// keep running and serving: accept failures are retried, and idle
// connections are closed to make room (issue 19, finding 1).
func TestConnectionFlood(t *testing.T) {
	t.Parallel()
	_, dsn := pgtest.New(t)
	for _, tc := range []struct {
		command, addr string
		env           []string
	}{
		{"serve", "127.0.0.1:26521", nil},
		// No cap per address: the cap in all must hold by itself.
		{"origin", "127.0.0.1:26522", []string{"EDGECMS_MAX_CONNS_PER_ADDR=0"}},
	} {
		t.Run(tc.command, func(t *testing.T) {
			t.Parallel()
			p := startProcess(t, tc.command, tc.addr, 256, false, append(tc.env, "DATABASE_URL="+dsn)...)
			var flood []net.Conn
			defer func() {
				for _, c := range flood {
					c.Close()
				}
			}()
			for range 400 {
				c, err := p.dial()
				if err != nil {
					t.Fatalf("dial: %v", err)
				}
				flood = append(flood, c)
			}
			// Each served request below needs the process to have accepted
			// the flood before it, in order.
			for i := range 5 {
				if got := p.status(t, "GET /healthz HTTP/1.1\r\nHost: a\r\n\r\n"); got != 200 {
					select {
					case <-p.done:
						t.Fatalf("edgecms %s exited under the flood: %v", tc.command, p.err)
					default:
					}
					t.Fatalf("health check %d under the flood: status %d, want 200", i, got)
				}
			}
			select {
			case <-p.done:
				t.Fatalf("edgecms %s exited under the flood: %v", tc.command, p.err)
			default:
			}
		})
	}
}
