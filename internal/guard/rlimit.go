package guard

import (
	"sync/atomic"
	"syscall"
)

// fileLimit is the open-file limit RaiseFileLimit set (0: not called).
var fileLimit atomic.Uint64

// RaiseFileLimit raises the process's soft open-file limit
// (RLIMIT_NOFILE) to its hard limit, so that connections rather than the
// limit run out first, and returns the limit now in force. Go raises it
// at start already on Linux; calling it keeps that true wherever the
// runtime does not, and tells DefaultMaxConns the figure.
func RaiseFileLimit() (uint64, error) {
	var rl syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &rl); err != nil {
		return 0, err
	}
	if rl.Cur < rl.Max {
		rl.Cur = rl.Max
		if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &rl); err != nil {
			return 0, err
		}
	}
	fileLimit.Store(rl.Cur)
	return rl.Cur, nil
}

// DefaultMaxConns is the default cap of open connections of one listener:
// half the open-file limit, leaving the rest to the database, the store,
// files and (in serve) the edge's connections to its own origin; at least
// 16.
func DefaultMaxConns() int {
	n := fileLimit.Load()
	if n == 0 {
		var rl syscall.Rlimit
		if syscall.Getrlimit(syscall.RLIMIT_NOFILE, &rl) != nil {
			return 1024
		}
		n = rl.Cur
	}
	return int(max(min(n/2, 1<<20), 16))
}
