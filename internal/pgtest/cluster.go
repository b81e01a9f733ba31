package pgtest

import (
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"testing"
)

// Cluster is a Postgres server of a test's own, on its own port, that the
// test may stop and start again: for tests of what a role does when its
// database goes away, which must not stop the server every other test
// uses. It runs initdb and pg_ctl from /usr/lib/postgresql/*/bin (or
// $PG_BIN); as root, as the postgres user, since Postgres refuses to run
// as root.
type Cluster struct {
	t    testing.TB
	dir  string
	bin  string
	port int
	as   string // the user to run as, "" for the current one
}

// StartCluster creates and starts a cluster on 127.0.0.1:port (trust
// authentication, user postgres), stopped and removed when the test ends.
// The test fails if the binaries are missing.
func StartCluster(t testing.TB, port int) *Cluster {
	t.Helper()
	bin, err := pgBin()
	if err != nil {
		t.Fatal(err)
	}
	c := &Cluster{t: t, bin: bin, port: port}
	if os.Geteuid() == 0 {
		c.as = "postgres"
	}
	// Not t.TempDir: its parents are private to root, and the server runs
	// as postgres.
	dir, err := os.MkdirTemp("", "edgecms-pgcluster-")
	if err != nil {
		t.Fatal(err)
	}
	c.dir = dir
	t.Cleanup(func() {
		c.pgctl("stop", "-m", "immediate")
		os.RemoveAll(dir)
	})
	if c.as != "" {
		u, err := user.Lookup(c.as)
		if err != nil {
			t.Fatalf("pgtest: user %s: %v", c.as, err)
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		if err := os.Chown(dir, uid, gid); err != nil {
			t.Fatal(err)
		}
	}
	if out, err := c.run(filepath.Join(bin, "initdb"), "-D", c.data(), "-U", "postgres", "-A", "trust", "--no-sync", "-E", "UTF8"); err != nil {
		t.Fatalf("pgtest: initdb: %v\n%s", err, out)
	}
	c.Start()
	return c
}

// pgBin finds the directory of the Postgres server binaries.
func pgBin() (string, error) {
	if d := os.Getenv("PG_BIN"); d != "" {
		return d, nil
	}
	ds, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	sort.Slice(ds, func(i, j int) bool {
		vi, _ := strconv.Atoi(filepath.Base(filepath.Dir(ds[i])))
		vj, _ := strconv.Atoi(filepath.Base(filepath.Dir(ds[j])))
		return vi < vj
	})
	for i := len(ds) - 1; i >= 0; i-- {
		if _, err := os.Stat(filepath.Join(ds[i], "pg_ctl")); err == nil {
			return ds[i], nil
		}
	}
	return "", fmt.Errorf("pgtest: no Postgres binaries in /usr/lib/postgresql/*/bin; set PG_BIN")
}

func (c *Cluster) data() string { return filepath.Join(c.dir, "data") }

func (c *Cluster) run(name string, args ...string) ([]byte, error) {
	var cmd *exec.Cmd
	if c.as != "" {
		cmd = exec.Command("runuser", append([]string{"-u", c.as, "--", name}, args...)...)
	} else {
		cmd = exec.Command(name, args...)
	}
	return cmd.CombinedOutput()
}

func (c *Cluster) pgctl(args ...string) ([]byte, error) {
	return c.run(filepath.Join(c.bin, "pg_ctl"), append([]string{"-D", c.data(), "-w"}, args...)...)
}

// Start starts the server and waits until it accepts connections.
func (c *Cluster) Start() {
	c.t.Helper()
	opts := fmt.Sprintf("-p %d -k %s -c listen_addresses=127.0.0.1 -c fsync=off -c shared_buffers=16MB",
		c.port, c.dir)
	if out, err := c.pgctl("start", "-l", filepath.Join(c.dir, "log"), "-o", opts); err != nil {
		log, _ := os.ReadFile(filepath.Join(c.dir, "log"))
		c.t.Fatalf("pgtest: start cluster on port %d: %v\n%s\n%s", c.port, err, out, log)
	}
}

// Stop stops the server at once (connections are cut, as in a crash or a
// network loss) and waits until it has.
func (c *Cluster) Stop() {
	c.t.Helper()
	if out, err := c.pgctl("stop", "-m", "immediate"); err != nil {
		c.t.Fatalf("pgtest: stop cluster: %v\n%s", err, out)
	}
}

// URL is the connection URL of database db on the cluster.
func (c *Cluster) URL(db string) string {
	return fmt.Sprintf("postgres://postgres@127.0.0.1:%d/%s?sslmode=disable", c.port, db)
}
