package edge

// CacheStats returns the number of cached objects and their cost in bytes,
// for tests of the bound.
func (s *Server) CacheStats() (entries int, bytes int64) { return s.cache.stats() }
