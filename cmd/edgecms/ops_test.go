package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/edgecms/edgecms/internal/cmdtest"
	"github.com/edgecms/edgecms/internal/pgtest"
	"github.com/edgecms/edgecms/problem"
	"github.com/edgecms/edgecms/store/miniotest"
)

// Ports of the tests that need fixed addresses (this package's range is
// 25000-25499): Postgres clusters 250xx, admin addresses 251xx, public
// addresses 252xx.

// secretEnv sets every secret the service reads, each a string that must
// never appear in an output.
var secretEnv = []string{
	"DATABASE_URL=postgres://edgecms:DbPassw0rdSecret@127.0.0.1:1/edgecms?sslmode=disable",
	"EDGECMS_SECRET_KEY=SecretKeyValue0123456789abcdef0123456789abcdef",
	"EDGECMS_PURGE_URL=https://cdn.example.com/purge?token=PurgeUrlTokenSecret",
	"EDGECMS_PURGE_HEADERS=Authorization: Bearer PurgeBearerSecret",
	"EDGECMS_PURGE_BODY={\"key\":\"PurgeBodySecret\",\"tags\":{{tags_json}}}",
	"AWS_ACCESS_KEY_ID=AwsAccessKeySecret",
	"AWS_SECRET_ACCESS_KEY=AwsSecretAccessKeySecret",
	"EDGECMS_USER_PASSWORD=UserPasswordSecret",
}

var secrets = []string{"DbPassw0rdSecret", "SecretKeyValue0123456789", "PurgeUrlTokenSecret", "PurgeBearerSecret",
	"PurgeBodySecret", "AwsAccessKeySecret", "AwsSecretAccessKeySecret", "UserPasswordSecret"}

// TestNoSecretPrinted runs --help and a bad flag for every command with
// every secret set in the environment: none may be printed. It also checks
// that a bad flag fails every command, version included.
func TestNoSecretPrinted(t *testing.T) {
	t.Parallel()
	check := func(t *testing.T, what string, r cmdtest.Result) {
		t.Helper()
		for _, s := range secrets {
			if strings.Contains(r.Stdout+r.Stderr, s) {
				t.Errorf("%s printed the secret %q:\n%s%s", what, s, r.Stdout, r.Stderr)
			}
		}
	}
	r := cmdtest.Run(t, secretEnv, "--help")
	check(t, "edgecms --help", r)
	if r.Code != 0 || !strings.Contains(r.Stderr, "version") {
		t.Errorf("edgecms --help = exit %d, %q", r.Code, r.Stderr)
	}
	for _, c := range commands {
		args := strings.Fields(c.name)
		t.Run(strings.ReplaceAll(c.name, " ", "_"), func(t *testing.T) {
			t.Parallel()
			help := cmdtest.Run(t, secretEnv, append(args, "--help")...)
			check(t, c.name+" --help", help)
			if help.Code != 0 || !strings.Contains(help.Stderr, "usage: edgecms "+c.name) {
				t.Errorf("%s --help = exit %d, %q, want 0 and the usage", c.name, help.Code, help.Stderr)
			}
			bad := cmdtest.Run(t, secretEnv, append(args, "--no-such-flag")...)
			check(t, c.name+" --no-such-flag", bad)
			if bad.Code == 0 || !strings.Contains(bad.Stderr, "no-such-flag") {
				t.Errorf("%s --no-such-flag = exit %d, %q, want a failure naming the flag", c.name, bad.Code, bad.Stderr)
			}
			if !c.positional {
				stray := cmdtest.Run(t, secretEnv, append(args, "stray")...)
				check(t, c.name+" stray", stray)
				if stray.Code == 0 {
					t.Errorf("%s stray = exit 0, want a failure", c.name)
				}
			}
		})
	}
	// Bad values of settings that hold secrets: the error names the
	// setting, never the value.
	for _, env := range [][]string{
		{"DATABASE_URL=mysql://root:DbPassw0rdSecret@db/x"},
		{"EDGECMS_PURGE_URL=ftp://user:PurgeUrlTokenSecret@cdn.example.com/purge"},
		{"EDGECMS_PURGE_URL=https://cdn.example.com/purge", "EDGECMS_PURGE_HEADERS=PurgeBearerSecret"},
		{"EDGECMS_ORIGIN_URL=http://user:PurgeUrlTokenSecret@origin.example.com/path"},
	} {
		r := cmdtest.Run(t, env, "edge")
		check(t, fmt.Sprint("edge with ", env), r)
		if r.Code == 0 {
			t.Errorf("edge with %v = exit 0, want a failure", env)
		}
	}
}

// TestVersion checks edgecms version and --version: the version and Go's.
func TestVersion(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{{"version"}, {"--version"}} {
		r := cmdtest.Run(t, nil, args...)
		if r.Code != 0 || !strings.HasPrefix(r.Stdout, "edgecms ") || !strings.Contains(r.Stdout, "go1.") {
			t.Errorf("edgecms %s = exit %d, %q %q, want the version and the Go version", args[0], r.Code, r.Stdout, r.Stderr)
		}
	}
}

// get fetches url with headers (name, value pairs).
func get(t *testing.T, url string, headers ...string) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(res.Body)
	return res, body
}

// wantUnavailable checks that res is a 503 problem document, not stored.
func wantUnavailable(t *testing.T, what string, res *http.Response, body []byte) {
	t.Helper()
	var doc struct {
		Status int    `json:"status"`
		Title  string `json:"title"`
		Detail string `json:"detail"`
	}
	if res.StatusCode != http.StatusServiceUnavailable || res.Header.Get("Content-Type") != problem.ContentType ||
		res.Header.Get("Cache-Control") != "no-store" || json.Unmarshal(body, &doc) != nil || doc.Status != 503 || doc.Title == "" {
		t.Errorf("%s = %d %s (Content-Type %q, Cache-Control %q), want a 503 problem document, no-store",
			what, res.StatusCode, body, res.Header.Get("Content-Type"), res.Header.Get("Cache-Control"))
	}
}

// TestReadinessWithPostgresStopped runs origin, publisher and dispatcher on
// a Postgres cluster of the test's own and stops it: each stays live, its
// /readyz turns 503 (a problem document), edgecms health --ready fails
// while edgecms health passes, the origin's routes answer 503 rather than
// 500, and all are ready again once Postgres is back.
func TestReadinessWithPostgresStopped(t *testing.T) {
	t.Parallel()
	cluster := pgtest.StartCluster(t, 25001)
	dsn := cluster.URL("edgecms")
	if r := cmdtest.Run(t, []string{"DATABASE_URL=" + dsn}, "migrate"); r.Code != 0 {
		t.Fatalf("migrate: %s", r.Stderr)
	}
	roles := []struct {
		name, admin, public string
		args                []string
	}{
		{"origin", "127.0.0.1:25101", "127.0.0.1:25201", []string{"origin"}},
		{"publisher", "127.0.0.1:25102", "", []string{"publisher"}},
		{"dispatcher", "127.0.0.1:25103", "", []string{"dispatcher"}},
	}
	procs := make([]*cmdtest.Proc, len(roles))
	for i, r := range roles {
		env := []string{"DATABASE_URL=" + dsn, "EDGECMS_ADMIN_ADDR=" + r.admin, "EDGECMS_SECRET_KEY=" + strings.Repeat("ab", 32)}
		if r.public != "" {
			env = append(env, "EDGECMS_ADDR="+r.public)
		}
		procs[i] = cmdtest.Start(t, env, r.args...)
	}
	for i, r := range roles {
		procs[i].WaitFor(t, 60*time.Second, r.name+" ready", func() bool { return cmdtest.Status("http://"+r.admin+"/readyz") == 200 })
		if h := cmdtest.Run(t, []string{"EDGECMS_ADMIN_ADDR=" + r.admin}, "health", "--ready"); h.Code != 0 {
			t.Errorf("%s: health --ready = exit %d %s, want 0", r.name, h.Code, h.Stderr)
		}
	}
	api := "http://127.0.0.1:25201/api/v1/instance/acme/models"
	if res, body := get(t, api, "Authorization", "Bearer mt_nope"); res.StatusCode != 401 {
		t.Errorf("origin with Postgres up: GET models with a bad token = %d %s, want 401", res.StatusCode, body)
	}

	cluster.Stop()
	for i, r := range roles {
		admin := "http://" + r.admin
		procs[i].WaitFor(t, 30*time.Second, r.name+" not ready", func() bool { return cmdtest.Status(admin+"/readyz") == 503 })
		res, body := get(t, admin+"/readyz")
		wantUnavailable(t, r.name+" /readyz", res, body)
		if !strings.Contains(string(body), "postgres") {
			t.Errorf("%s /readyz = %s, want the failing check named", r.name, body)
		}
		if s := cmdtest.Status(admin + "/livez"); s != 200 {
			t.Errorf("%s /livez with Postgres down = %d, want 200", r.name, s)
		}
		if h := cmdtest.Run(t, []string{"EDGECMS_ADMIN_ADDR=" + r.admin}, "health", "--ready"); h.Code == 0 || !strings.Contains(h.Stderr, "503") {
			t.Errorf("%s: health --ready with Postgres down = exit %d %q, want a failure with the status", r.name, h.Code, h.Stderr)
		}
		if h := cmdtest.Run(t, []string{"EDGECMS_ADMIN_ADDR=" + r.admin}, "health"); h.Code != 0 {
			t.Errorf("%s: health (liveness) with Postgres down = exit %d %s, want 0", r.name, h.Code, h.Stderr)
		}
	}
	res, body := get(t, api, "Authorization", "Bearer mt_nope")
	wantUnavailable(t, "origin route with Postgres down", res, body)
	if s := cmdtest.Status("http://127.0.0.1:25201/healthz"); s != 200 {
		t.Errorf("origin /healthz (liveness) with Postgres down = %d, want 200", s)
	}

	cluster.Start()
	for i, r := range roles {
		procs[i].WaitFor(t, 60*time.Second, r.name+" ready again", func() bool { return cmdtest.Status("http://"+r.admin+"/readyz") == 200 })
	}
}

// TestEdgeReadiness runs an edge on MinIO with no origin at all: it is
// ready (its origin's state does not matter) and answers its health check;
// once MinIO stops, it is live but not ready.
func TestEdgeReadiness(t *testing.T) {
	t.Parallel()
	srv, err := miniotest.StartServer("")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Stop)
	const adminAddr, public = "127.0.0.1:25111", "127.0.0.1:25211"
	p := cmdtest.Start(t, []string{
		"EDGECMS_STORE=s3://edge-ready?endpoint=" + srv.Endpoint + "&secure=false&create=true",
		"AWS_ACCESS_KEY_ID=" + srv.AccessKey, "AWS_SECRET_ACCESS_KEY=" + srv.SecretKey,
		"EDGECMS_ORIGIN_URL=http://127.0.0.1:25299", // nothing listens there
		"EDGECMS_ADDR=" + public, "EDGECMS_ADMIN_ADDR=" + adminAddr,
	}, "edge")
	p.WaitFor(t, 60*time.Second, "edge ready", func() bool { return cmdtest.Status("http://"+adminAddr+"/readyz") == 200 })
	if s := cmdtest.Status("http://" + public + "/healthz"); s != 200 {
		t.Errorf("edge /healthz with no origin = %d, want 200", s)
	}
	if s := cmdtest.Status("http://" + public + "/readyz"); s == 200 {
		t.Errorf("edge /readyz on the public port = %d, want it on the admin address only", s)
	}
	if s := cmdtest.Status("http://" + public + "/metrics"); s == 200 {
		t.Errorf("edge /metrics on the public port = %d, want it on the admin address only", s)
	}
	srv.Stop()
	p.WaitFor(t, 30*time.Second, "edge not ready", func() bool { return cmdtest.Status("http://"+adminAddr+"/readyz") == 503 })
	res, body := get(t, "http://"+adminAddr+"/readyz")
	wantUnavailable(t, "edge /readyz with the store down", res, body)
	if s := cmdtest.Status("http://" + adminAddr + "/livez"); s != 200 {
		t.Errorf("edge /livez with the store down = %d, want 200", s)
	}
}

// TestAdminAddrTaken checks that a configured admin address that cannot be
// listened on stops the role at start, with the setting named.
func TestAdminAddrTaken(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:25150")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	r := cmdtest.Run(t, []string{"EDGECMS_ADMIN_ADDR=127.0.0.1:25150", "EDGECMS_ADDR=127.0.0.1:25250",
		"EDGECMS_ORIGIN_URL=http://127.0.0.1:25299", "EDGECMS_STORE=" + t.TempDir()}, "edge")
	if r.Code == 0 || !strings.Contains(r.Stderr, "EDGECMS_ADMIN_ADDR") {
		t.Errorf("edge on a taken admin address = exit %d %q, want a failure naming EDGECMS_ADMIN_ADDR", r.Code, r.Stderr)
	}
}
