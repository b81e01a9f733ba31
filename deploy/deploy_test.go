package deploy_test

import (
	"bytes"
	"debug/elf"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

// The tools these tests run: scripts/test.sh installs them from Debian
// (varnish, docker-compose) when they are missing. A missing tool fails
// the test; it is never skipped.
func need(t *testing.T, tool string) string {
	t.Helper()
	p, err := exec.LookPath(tool)
	if err != nil {
		t.Fatalf("%s is not installed (scripts/test.sh installs it: apt-get install -y varnish docker-compose): %v", tool, err)
	}
	return p
}

// dockerBuildCommand returns the RUN instruction of deploy/Dockerfile that
// builds the binary, with its line continuations joined.
func dockerBuildCommand(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile("Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	text := strings.ReplaceAll(string(b), "\\\n", " ")
	for _, line := range strings.Split(text, "\n") {
		if cmd, ok := strings.CutPrefix(strings.TrimSpace(line), "RUN "); ok && strings.Contains(cmd, "go build") {
			return cmd
		}
	}
	t.Fatal("no RUN ... go build in deploy/Dockerfile")
	return ""
}

// TestDockerfileBuild runs the Dockerfile's build command as it is written
// (only its output path moved to a temporary folder), with the VERSION
// build argument, from the repository root as the build context is, and
// checks the binary: static (no ELF interpreter, CGO_ENABLED=0), the
// version linked in, and it runs.
func TestDockerfileBuild(t *testing.T) {
	t.Parallel()
	cmd := dockerBuildCommand(t)
	for _, want := range []string{"CGO_ENABLED=0", "-X github.com/edgecms/edgecms/internal/buildinfo.Version=${VERSION}", "./cmd/edgecms"} {
		if !strings.Contains(cmd, want) {
			t.Errorf("the Dockerfile's build command %q lacks %q", cmd, want)
		}
	}
	out := filepath.Join(t.TempDir(), "edgecms")
	re := regexp.MustCompile(`-o \S+`)
	if !re.MatchString(cmd) {
		t.Fatalf("no -o in %q", cmd)
	}
	cmd = re.ReplaceAllLiteralString(cmd, "-o "+out)
	sh := exec.Command("sh", "-c", cmd)
	sh.Dir = ".."
	sh.Env = append(os.Environ(), "VERSION=v9.8.7-test")
	if b, err := sh.CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", cmd, err, b)
	}
	f, err := elf.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			t.Errorf("the binary has an ELF interpreter: it is not static")
		}
	}
	info, err := exec.Command("go", "version", "-m", out).CombinedOutput()
	if err != nil {
		t.Fatalf("go version -m: %v\n%s", err, info)
	}
	for _, want := range []string{"CGO_ENABLED=0", "-trimpath=true"} {
		if !bytes.Contains(info, []byte(want)) {
			t.Errorf("go version -m lacks %q:\n%s", want, info)
		}
	}
	// The -X value is in the binary (go version -m does not record
	// -ldflags of a -trimpath build), once package buildinfo, which holds
	// the variable, is part of the binary: until then the linker ignores
	// the -X.
	if _, err := os.Stat("../internal/buildinfo"); err == nil {
		if bin, err := os.ReadFile(out); err != nil || !bytes.Contains(bin, []byte("v9.8.7-test")) {
			t.Errorf("the VERSION build argument is not linked into the binary (%v)", err)
		}
	} else {
		t.Log("internal/buildinfo is not in this tree yet: the -X of VERSION has no variable to set")
	}
	if b, err := exec.Command(out, "--help").CombinedOutput(); err != nil || !bytes.Contains(b, []byte("serve")) {
		t.Errorf("%s --help: %v\n%s", out, err, b)
	}
}

// TestDockerfile checks what the image promises: distroless, a non-root
// user, the health check through edgecms health, the VERSION argument.
func TestDockerfile(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile("Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	text := string(b)
	for _, want := range []*regexp.Regexp{
		regexp.MustCompile(`(?m)^FROM golang:\S+ AS build$`),
		regexp.MustCompile(`(?m)^FROM gcr\.io/distroless/static-debian12:nonroot$`),
		regexp.MustCompile(`(?m)^USER 65532:65532$`),
		regexp.MustCompile(`(?m)^ARG VERSION=`),
		regexp.MustCompile(`(?m)^HEALTHCHECK .*CMD \["/usr/local/bin/edgecms", "health"\]$`),
		regexp.MustCompile(`(?m)^ENTRYPOINT \["/usr/local/bin/edgecms"\]$`),
	} {
		if !want.MatchString(text) {
			t.Errorf("deploy/Dockerfile does not match %s", want)
		}
	}
}

// composeConfig is what the tests read of docker-compose config.
type composeConfig struct {
	Services map[string]struct {
		Image       string            `yaml:"image"`
		Command     []string          `yaml:"command"`
		Environment map[string]string `yaml:"environment"`
		Volumes     []any             `yaml:"volumes"`
		Ports       []any             `yaml:"ports"`
	} `yaml:"services"`
}

// TestCompose parses compose.yaml with docker-compose config (which checks
// it against the Compose schema and interpolates it) and checks the
// deployment it describes.
func TestCompose(t *testing.T) {
	t.Parallel()
	dc := need(t, "docker-compose")
	cmd := exec.Command(dc, "-f", "compose.yaml", "config")
	cmd.Env = append(os.Environ(), "POSTGRES_PASSWORD=pg-secret", "MINIO_ROOT_PASSWORD=minio-secret", "EDGECMS_SECRET_KEY="+strings.Repeat("ab", 32))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("docker-compose config: %v\n%s", err, stderr.String())
	}
	var c composeConfig
	if err := yaml.Unmarshal(out, &c); err != nil {
		t.Fatalf("docker-compose config printed YAML that does not parse: %v\n%s", err, out)
	}
	var names []string
	for n := range c.Services {
		names = append(names, n)
	}
	slices.Sort(names)
	want := []string{"bucket", "dispatcher", "edge1", "edge2", "minio", "origin", "postgres", "publisher", "varnish"}
	if !slices.Equal(names, want) {
		t.Errorf("services %v, want %v", names, want)
	}
	for role, n := range map[string]string{"origin": "origin", "publisher": "publisher", "dispatcher": "dispatcher", "edge1": "edge", "edge2": "edge"} {
		s := c.Services[role]
		if !slices.Equal(s.Command, []string{n}) || !strings.HasPrefix(s.Image, "edgecms:") {
			t.Errorf("%s runs %s %v, want edgecms %s", role, s.Image, s.Command, n)
		}
		if !strings.HasPrefix(s.Environment["EDGECMS_STORE"], "s3://edgecms?endpoint=minio:9000") || s.Environment["EDGECMS_PUBLIC_URL"] == "" {
			t.Errorf("%s: store %q, public URL %q", role, s.Environment["EDGECMS_STORE"], s.Environment["EDGECMS_PUBLIC_URL"])
		}
		_, hasDB := s.Environment["DATABASE_URL"]
		if hasDB == (n == "edge") {
			t.Errorf("%s: DATABASE_URL set %v; edges need none, the other roles do", role, hasDB)
		}
	}
	for _, edge := range []string{"edge1", "edge2"} {
		if got := c.Services[edge].Environment["EDGECMS_ORIGIN_URL"]; got != "http://origin:8080" {
			t.Errorf("%s: EDGECMS_ORIGIN_URL %q", edge, got)
		}
	}
	pub := c.Services["publisher"].Environment
	if pub["EDGECMS_PURGE_URL"] != "http://varnish/" || pub["EDGECMS_PURGE_METHOD"] != "PURGE" || pub["EDGECMS_PURGE_HEADERS"] != "Surrogate-Key: {{tags}}" {
		t.Errorf("the publisher does not purge Varnish by Surrogate-Key: %v", pub)
	}
	if v := c.Services["varnish"]; len(v.Volumes) == 0 || !strings.Contains(strings.ReplaceAll(toString(v.Volumes), " ", ""), "/etc/varnish") {
		t.Errorf("varnish does not mount deploy/varnish: %v", v.Volumes)
	}
	if c.Services["postgres"].Environment["POSTGRES_PASSWORD"] != "pg-secret" {
		t.Errorf("POSTGRES_PASSWORD is not taken from the environment")
	}

	// Without the secrets, compose refuses to start rather than run with
	// empty passwords.
	bare := exec.Command(dc, "-f", "compose.yaml", "config", "-q")
	bare.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir()}
	if b, err := bare.CombinedOutput(); err == nil || !bytes.Contains(b, []byte("deploy/.env")) {
		t.Errorf("compose config without passwords: %v\n%s", err, b)
	}
}

func toString(v any) string {
	b, _ := yaml.Marshal(v)
	return string(b)
}

// TestSystemdUnit checks the unit with systemd-analyze verify, its binary
// path pointed at a file that exists.
func TestSystemdUnit(t *testing.T) {
	t.Parallel()
	sa := need(t, "systemd-analyze")
	b, err := os.ReadFile("edgecms@.service")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "edgecms")
	if err := os.WriteFile(bin, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	unit := filepath.Join(dir, "edgecms@origin.service")
	if err := os.WriteFile(unit, bytes.ReplaceAll(b, []byte("/usr/local/bin/edgecms"), []byte(bin)), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(sa, "verify", "--man=no", unit).CombinedOutput()
	if err != nil || len(bytes.TrimSpace(out)) > 0 {
		t.Errorf("systemd-analyze verify: %v\n%s", err, out)
	}
	for _, want := range []string{"ExecStart=/usr/local/bin/edgecms %i", "DynamicUser=yes", "KillSignal=SIGTERM", "EnvironmentFile=/etc/edgecms/edgecms.env"} {
		if !bytes.Contains(b, []byte(want)) {
			t.Errorf("the unit lacks %s", want)
		}
	}
}
