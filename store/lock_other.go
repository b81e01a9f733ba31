//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package store

import "os"

// Without flock, writers are serialised within the process only: on these
// systems only one process may write to a folder store.
func flock(*os.File) error { return nil }

func funlock(*os.File) {}
