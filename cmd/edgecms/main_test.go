package main

import (
	"os"
	"testing"

	"github.com/edgecms/edgecms/internal/cmdtest"
	"github.com/edgecms/edgecms/internal/pgtest"
)

// TestMain drops the test run's template databases at its end (pgtest.Run)
// and the binaries built for the run (cmdtest).
func TestMain(m *testing.M) {
	code := pgtest.Run(m)
	cmdtest.Cleanup()
	os.Exit(code)
}
