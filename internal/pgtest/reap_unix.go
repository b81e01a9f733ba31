//go:build unix

package pgtest

import (
	"errors"
	"os"
	"os/exec"
	"strconv"
	"syscall"
	"time"
)

// startReaper starts this binary again, in a session of its own and with
// no standard streams (so that go test neither waits for it nor stops it),
// as the reaper of the templates after process pid ends.
func startReaper(pid int) error {
	exe, err := os.Executable()
	if err != nil {
		return err
	}
	cmd := exec.Command(exe)
	cmd.Env = append(os.Environ(), reaperEnv+"="+strconv.Itoa(pid))
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		return err
	}
	return cmd.Process.Release()
}

// waitExit returns once process pid has ended. It is not this process's
// parent, so it cannot be waited for: its existence is polled.
func waitExit(pid int) {
	for {
		if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
			return
		}
		time.Sleep(200 * time.Millisecond)
	}
}
