package pgtest

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"testing"

	"github.com/jmoiron/sqlx"

	"github.com/edgecms/edgecms/schema"
)

// Server is a Postgres server of one test's own, for what the shared
// server cannot give: a transaction id counter that starts low (a new
// cluster starts near 730, so a test can make it cross 9,999 -> 10,000
// and 99,999 -> 100,000 exactly), or a server the test may stop. It
// listens only on a Unix socket in a temporary folder, so it takes no TCP
// port, and runs with fsync and synchronous_commit off: its data is thrown
// away with it.
type Server struct {
	dir string // socket folder and parent of the data folder
}

// NewServer starts a private server from the newest Postgres binaries in
// /usr/lib/postgresql (EDGECMS_PG_BIN overrides the folder), stopped and
// removed when the test ends. As root it runs them as the user postgres,
// since initdb refuses root. It fails the test (never skips) when the
// binaries are missing.
func NewServer(t testing.TB) *Server {
	t.Helper()
	bin := os.Getenv("EDGECMS_PG_BIN")
	if bin == "" {
		dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
		sort.Slice(dirs, func(i, j int) bool { return pgMajor(dirs[i]) < pgMajor(dirs[j]) })
		if len(dirs) == 0 {
			t.Fatal("pgtest: no Postgres server binaries in /usr/lib/postgresql/*/bin (apt-get install postgresql, or set EDGECMS_PG_BIN)")
		}
		bin = dirs[len(dirs)-1]
	}
	// The socket path must stay under the 107 bytes of a Unix socket
	// address, which a t.TempDir path may exceed.
	dir, err := os.MkdirTemp("", "edgecms-pg")
	if err != nil {
		t.Fatal(err)
	}
	var as []string
	if os.Geteuid() == 0 {
		u, err := user.Lookup("postgres")
		if err != nil {
			t.Fatalf("pgtest: running as root needs the user postgres to run the server: %v", err)
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		if err := os.Chown(dir, uid, gid); err != nil {
			t.Fatal(err)
		}
		as = []string{"runuser", "-u", "postgres", "--"}
	}
	run := func(name string, args ...string) error {
		argv := append(append(append([]string{}, as...), filepath.Join(bin, name)), args...)
		out, err := exec.Command(argv[0], argv[1:]...).CombinedOutput()
		if err != nil {
			return fmt.Errorf("%s: %w\n%s", name, err, out)
		}
		return nil
	}
	data := filepath.Join(dir, "data")
	if err := run("initdb", "-D", data, "-U", "postgres", "-A", "trust", "-N"); err != nil {
		os.RemoveAll(dir)
		t.Fatalf("pgtest: %v", err)
	}
	opts := "-c listen_addresses= -k " + dir + " -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=100"
	if err := run("pg_ctl", "-D", data, "-o", opts, "-l", filepath.Join(dir, "log"), "-w", "start"); err != nil {
		os.RemoveAll(dir)
		t.Fatalf("pgtest: %v", err)
	}
	t.Cleanup(func() {
		if err := run("pg_ctl", "-D", data, "-m", "immediate", "-w", "stop"); err != nil {
			t.Logf("pgtest: %v", err)
		}
		os.RemoveAll(dir)
	})
	return &Server{dir: dir}
}

// pgMajor is the major version in a /usr/lib/postgresql/N/bin path.
func pgMajor(dir string) int {
	n, _ := strconv.Atoi(filepath.Base(filepath.Dir(dir)))
	return n
}

// URL returns the URL of database db on the server.
func (s *Server) URL(db string) string {
	q := url.Values{"host": {s.dir}, "sslmode": {"disable"}}
	return (&url.URL{Scheme: "postgres", User: url.User("postgres"), Path: "/" + db, RawQuery: q.Encode()}).String()
}

// New returns a connection to a new migrated database on the server, and
// its URL.
func (s *Server) New(t testing.TB) (*sqlx.DB, string) {
	t.Helper()
	admin, err := sqlx.Open("postgres", s.URL("postgres"))
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	if _, err := admin.Exec(`CREATE DATABASE edgecms`); err != nil {
		t.Fatalf("pgtest: create database: %v", err)
	}
	dsn := s.URL("edgecms")
	db, err := sqlx.Open("postgres", dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	if _, err := schema.Migrate(context.Background(), db); err != nil {
		t.Fatalf("pgtest: migrate: %v", err)
	}
	return db, dsn
}
