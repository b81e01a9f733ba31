// Package miniotest starts a real MinIO server for tests of code that talks
// to S3, so that integration tests never mock the object store.
//
// The server binary is the one scripts/minio.sh installs (pinned version):
// $EDGECMS_MINIO_BIN, or ${EDGECMS_CACHE:-$HOME/.cache/edgecms}/bin/minio.
// When it is missing the test fails with a message naming the script; it is
// never skipped, so a green run always means S3 was really exercised.
//
// Start gives one server per test. A package with many S3 tests shares one
// server through a Shared value, started on first use and stopped in TestMain:
//
//	var minio miniotest.Shared
//
//	func TestMain(m *testing.M) {
//		code := m.Run()
//		minio.Stop()
//		os.Exit(code)
//	}
//
//	func TestSomething(t *testing.T) {
//		endpoint, accessKey, secretKey := minio.Start(t)
//		...
//	}
package miniotest

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"
)

// Server is a running MinIO server listening on 127.0.0.1.
type Server struct {
	// Endpoint is host:port of the S3 API (plain HTTP).
	Endpoint string
	// AccessKey and SecretKey are the root credentials, random per server.
	AccessKey, SecretKey string

	cmd     *exec.Cmd
	dir     string // data folder, removed by Stop when owned
	ownsDir bool
	log     *syncBuffer
	exited  chan struct{}
	stop    sync.Once
}

// Binary returns the path of the MinIO server binary, or an error naming
// scripts/minio.sh when it is not installed.
func Binary() (string, error) {
	path := os.Getenv("EDGECMS_MINIO_BIN")
	if path == "" {
		cache := os.Getenv("EDGECMS_CACHE")
		if cache == "" {
			home, err := os.UserHomeDir()
			if err != nil {
				return "", fmt.Errorf("miniotest: find the MinIO binary: %w", err)
			}
			cache = filepath.Join(home, ".cache", "edgecms")
		}
		path = filepath.Join(cache, "bin", "minio")
	}
	fi, err := os.Stat(path)
	if err != nil || fi.IsDir() || fi.Mode()&0o111 == 0 {
		return "", fmt.Errorf("miniotest: no MinIO server binary at %s: run scripts/minio.sh to install it (or set EDGECMS_MINIO_BIN)", path)
	}
	return path, nil
}

// Start starts a MinIO server for the test, with its data in t.TempDir(),
// and stops it when the test ends. It fails the test (never skips) when the
// binary is missing or the server does not come up.
func Start(t testing.TB) (endpoint, accessKey, secretKey string) {
	t.Helper()
	srv, err := StartServer(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Stop)
	return srv.Endpoint, srv.AccessKey, srv.SecretKey
}

// StartServer starts a MinIO server keeping its data in dir, or in a new
// temporary folder (removed by Stop) when dir is empty. The caller must call
// Stop. It is the building block of Start and Shared, for a TestMain that
// wants to manage the server itself.
func StartServer(dir string) (*Server, error) {
	bin, err := Binary()
	if err != nil {
		return nil, err
	}
	owns := false
	if dir == "" {
		if dir, err = os.MkdirTemp("", "edgecms-minio-"); err != nil {
			return nil, fmt.Errorf("miniotest: %w", err)
		}
		owns = true
	}
	// A free port found by listening can be taken by someone else before
	// MinIO binds it; try a few times.
	var lastErr error
	for range 3 {
		srv, err := launch(bin, dir)
		if err == nil {
			srv.dir, srv.ownsDir = dir, owns
			return srv, nil
		}
		lastErr = err
	}
	if owns {
		os.RemoveAll(dir)
	}
	return nil, lastErr
}

func launch(bin, dir string) (*Server, error) {
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	srv := &Server{
		Endpoint:  fmt.Sprintf("127.0.0.1:%d", port),
		AccessKey: "edgecms-" + randomHex(6),
		SecretKey: randomHex(20),
		log:       &syncBuffer{},
		exited:    make(chan struct{}),
	}
	srv.cmd = exec.Command(bin, "server", "--quiet", "--address", srv.Endpoint, dir)
	srv.cmd.Env = append(os.Environ(),
		"MINIO_ROOT_USER="+srv.AccessKey,
		"MINIO_ROOT_PASSWORD="+srv.SecretKey,
		"MINIO_BROWSER=off",
		"MINIO_UPDATE=off",
	)
	srv.cmd.Stdout = srv.log
	srv.cmd.Stderr = srv.log
	srv.cmd.SysProcAttr = sysProcAttr()
	if err := srv.cmd.Start(); err != nil {
		return nil, fmt.Errorf("miniotest: start %s: %w", bin, err)
	}
	go func() {
		srv.cmd.Wait()
		close(srv.exited)
	}()
	if err := srv.waitReady(60 * time.Second); err != nil {
		srv.kill()
		return nil, err
	}
	return srv, nil
}

// waitReady polls the health endpoints until the server is live with its
// object layer up (the liveness check answers 200 before that, with an
// "X-Minio-Server-Status: offline" header) and the cluster check, which
// also waits for bucket metadata and IAM, answers 200.
func (s *Server) waitReady(limit time.Duration) error {
	client := &http.Client{Timeout: 2 * time.Second}
	ready := func() bool {
		for _, path := range []string{"/minio/health/live", "/minio/health/cluster"} {
			resp, err := client.Get("http://" + s.Endpoint + path)
			if err != nil {
				return false
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK || resp.Header.Get("X-Minio-Server-Status") != "" {
				return false
			}
		}
		return true
	}
	deadline := time.Now().Add(limit)
	for time.Now().Before(deadline) {
		select {
		case <-s.exited:
			return fmt.Errorf("miniotest: minio server exited before it was ready: %s", s.log.String())
		default:
		}
		if ready() {
			return nil
		}
		time.Sleep(50 * time.Millisecond)
	}
	return fmt.Errorf("miniotest: minio server on %s not ready after %v: %s", s.Endpoint, limit, s.log.String())
}

// Stop stops the server (SIGTERM, then SIGKILL after a grace period) and
// removes its data folder if StartServer created it. It is safe to call more
// than once.
func (s *Server) Stop() {
	s.stop.Do(func() {
		s.kill()
		if s.ownsDir {
			os.RemoveAll(s.dir)
		}
	})
}

func (s *Server) kill() {
	s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-s.exited:
	case <-time.After(10 * time.Second):
		s.cmd.Process.Kill()
		<-s.exited
	}
}

// Shared is one MinIO server shared by the tests of a package: the first
// Start launches it, later ones reuse it, and Stop (from TestMain, after
// m.Run) ends it. The zero value is ready to use.
type Shared struct {
	mu  sync.Mutex
	srv *Server
	err error
}

// Start returns the shared server's endpoint and credentials, starting the
// server on first use. It fails the test when the server cannot start; a
// failed start is remembered so that later tests fail fast with the same
// error.
func (s *Shared) Start(t testing.TB) (endpoint, accessKey, secretKey string) {
	t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.srv == nil && s.err == nil {
		s.srv, s.err = StartServer("")
	}
	if s.err != nil {
		t.Fatal(s.err)
	}
	return s.srv.Endpoint, s.srv.AccessKey, s.srv.SecretKey
}

// Stop stops the shared server if it was started.
func (s *Shared) Stop() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.srv != nil {
		s.srv.Stop()
	}
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("miniotest: find a free port: %w", err)
	}
	defer l.Close()
	addr, ok := l.Addr().(*net.TCPAddr)
	if !ok {
		return 0, errors.New("miniotest: find a free port: not a TCP address")
	}
	return addr.Port, nil
}

func randomHex(n int) string {
	b := make([]byte, n)
	rand.Read(b)
	return hex.EncodeToString(b)
}

// syncBuffer collects the server's output for error messages, keeping the
// last few KiB.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.buf.Write(p)
	if b.buf.Len() > 64<<10 {
		tail := append([]byte(nil), b.buf.Bytes()[b.buf.Len()-16<<10:]...)
		b.buf.Reset()
		b.buf.Write(tail)
	}
	return len(p), nil
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	out := b.buf.Bytes()
	if len(out) > 4<<10 {
		out = out[len(out)-4<<10:]
	}
	return string(bytes.TrimSpace(out))
}
