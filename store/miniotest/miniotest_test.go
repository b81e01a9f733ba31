package miniotest

import (
	"fmt"
	"net/http"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// recorder is a testing.TB that records Fatal and Skip instead of ending
// the real test.
type recorder struct {
	testing.TB
	fatal, skip string
}

func (r *recorder) Helper() {}

func (r *recorder) Fatal(args ...any) {
	r.fatal = fmt.Sprint(args...)
	runtime.Goexit()
}

func (r *recorder) Skip(args ...any) {
	r.skip = fmt.Sprint(args...)
	runtime.Goexit()
}

func TestStartFailsWithoutBinary(t *testing.T) {
	t.Setenv("EDGECMS_MINIO_BIN", filepath.Join(t.TempDir(), "no-minio"))
	r := &recorder{TB: t}
	done := make(chan struct{})
	go func() {
		defer close(done)
		Start(r)
	}()
	<-done
	if r.skip != "" || !strings.Contains(r.fatal, "scripts/minio.sh") {
		t.Errorf("Start without a binary: fatal %q, skip %q; want a failure naming scripts/minio.sh", r.fatal, r.skip)
	}
}

func TestStart(t *testing.T) {
	endpoint, accessKey, secretKey := Start(t)
	if accessKey == "" || len(secretKey) < 8 {
		t.Errorf("credentials %q %q", accessKey, secretKey)
	}
	resp, err := http.Get("http://" + endpoint + "/minio/health/live")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("health: %s", resp.Status)
	}
}

func TestSharedStartsOnce(t *testing.T) {
	var s Shared
	defer s.Stop()
	e1, _, _ := s.Start(t)
	e2, _, _ := s.Start(t)
	if e1 != e2 {
		t.Errorf("two Starts gave %s and %s, want one server", e1, e2)
	}
	s.Stop()
	s.Stop() // twice is fine
	if _, err := http.Get("http://" + e1 + "/minio/health/live"); err == nil {
		t.Errorf("server still answers after Stop")
	}
}
