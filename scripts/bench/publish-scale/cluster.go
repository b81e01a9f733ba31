//go:build unix

package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// pgBin is where Debian puts the server binaries.
const pgBin = "/usr/lib/postgresql/15/bin"

// cluster is a throwaway Postgres cluster of this run: its own server, so
// that other work on the machine's shared server (long transactions hold
// back what the event log readers may see) does not enter the figures.
type cluster struct {
	dir  string
	port int
	pid  int
}

// startCluster initdb's a cluster in dir and starts it on port. As root,
// the server runs as the postgres user (initdb and postgres refuse root).
func startCluster(ctx context.Context, dir string, port int) (*cluster, error) {
	if err := freePort(port); err != nil {
		return nil, err
	}
	data := filepath.Join(dir, "pgdata")
	sock := filepath.Join(dir, "pgsock")
	for _, d := range []string{dir, sock} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return nil, err
		}
	}
	as := func(name string, args ...string) *exec.Cmd {
		if os.Geteuid() == 0 {
			return exec.CommandContext(ctx, "runuser", append([]string{"-u", "postgres", "--", name}, args...)...)
		}
		return exec.CommandContext(ctx, name, args...)
	}
	if os.Geteuid() == 0 {
		u, err := user.Lookup("postgres")
		if err != nil {
			return nil, err
		}
		var uid, gid int
		fmt.Sscan(u.Uid, &uid)
		fmt.Sscan(u.Gid, &gid)
		for _, d := range []string{dir, sock} {
			if err := os.Chown(d, uid, gid); err != nil {
				return nil, err
			}
		}
	}
	out, err := as(filepath.Join(pgBin, "initdb"), "-D", data, "-U", "postgres", "-A", "trust", "-E", "UTF8", "--no-sync").CombinedOutput()
	if err != nil {
		return nil, fmt.Errorf("initdb: %w: %s", err, out)
	}
	opts := fmt.Sprintf("-p %d -k %s -c listen_addresses=127.0.0.1 -c max_connections=300 -c shared_buffers=256MB", port, sock)
	out, err = as(filepath.Join(pgBin, "pg_ctl"), "-D", data, "-l", filepath.Join(dir, "postgres.log"), "-o", opts, "-w", "start").CombinedOutput()
	if err != nil {
		return nil, fmt.Errorf("pg_ctl start: %w: %s", err, out)
	}
	b, err := os.ReadFile(filepath.Join(data, "postmaster.pid"))
	if err != nil {
		return nil, err
	}
	c := &cluster{dir: dir, port: port}
	fmt.Sscan(strings.SplitN(string(b), "\n", 2)[0], &c.pid)
	return c, nil
}

// url is the cluster's server URL (database postgres).
func (c *cluster) url() string {
	return fmt.Sprintf("postgres://postgres@127.0.0.1:%d/postgres?sslmode=disable", c.port)
}

// stop stops the server fast and removes its data.
func (c *cluster) stop() {
	if c.pid > 0 {
		syscall.Kill(c.pid, syscall.SIGINT) // fast shutdown
		for range 200 {
			if syscall.Kill(c.pid, 0) != nil {
				break
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	os.RemoveAll(filepath.Join(c.dir, "pgdata"))
}
