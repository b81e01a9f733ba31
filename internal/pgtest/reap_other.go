//go:build !unix

package pgtest

import "errors"

// startReaper is not available here: the templates stay on the server.
func startReaper(pid int) error {
	return errors.New("no reaper on this system: drop the databases named <prefix>_tpl_* by hand")
}

// waitExit returns at once.
func waitExit(pid int) {}
