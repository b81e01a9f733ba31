package main

import (
	"fmt"
	"strconv"

	"github.com/edgecms/edgecms/internal/guard"
)

// checkConns reads EDGECMS_MAX_CONNS and EDGECMS_MAX_CONNS_PER_ADDR. The
// defaults come from the open-file limit, which main raised to its hard
// limit before loading the configuration.
func (c *config) checkConns() error {
	c.Conns = guard.Options{MaxConns: guard.DefaultMaxConns()}
	if c.maxConns != "" {
		n, err := strconv.Atoi(c.maxConns)
		if err != nil || n < 16 {
			return fmt.Errorf("EDGECMS_MAX_CONNS: want a whole number >= 16, got %q", c.maxConns)
		}
		c.Conns.MaxConns = n
	}
	c.Conns.MaxConnsPerAddr = max(c.Conns.MaxConns/4, 64)
	if c.maxConnsPerAddr != "" {
		n, err := strconv.Atoi(c.maxConnsPerAddr)
		if err != nil || n < 0 {
			return fmt.Errorf("EDGECMS_MAX_CONNS_PER_ADDR: want a whole number >= 0 (0: no cap), got %q", c.maxConnsPerAddr)
		}
		c.Conns.MaxConnsPerAddr = n
		if n == 0 {
			c.Conns.MaxConnsPerAddr = -1
		}
	}
	return nil
}
