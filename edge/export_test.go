package edge

import "time"

// CacheStats returns the number of cached objects and their cost in bytes,
// for tests of the bound.
func (s *Server) CacheStats() (entries int, bytes int64) { return s.cache.stats() }

// CacheMax is the configured bound of the cache in bytes.
func (s *Server) CacheMax() int64 { return s.cache.max }

// LoopConns is the number of connections the event loops hold: those
// whose requests were all cache hits so far.
func (s *Server) LoopConns() int { return int(s.loopConns.Load()) }

// SetTimeouts sets the read and idle timeouts of the edges made after it,
// until the test ends.
func SetTimeouts(t interface{ Cleanup(func()) }, read, idle time.Duration) {
	r, i := readTimeout, idleTimeout
	readTimeout, idleTimeout = read, idle
	t.Cleanup(func() { readTimeout, idleTimeout = r, i })
}
