package users_test

import (
	"os"
	"testing"

	"github.com/edgecms/edgecms/internal/pgtest"
)

// TestMain drops the test run's template databases at its end (pgtest.Run).
func TestMain(m *testing.M) { os.Exit(pgtest.Run(m)) }
