package store

import (
	"fmt"
	"hash/fnv"
	"os"
	"path/filepath"
	"sync"
)

// locks serialises the writers of a folder store key by key, within the
// process and (where flock exists) between processes sharing the folder.
// Keys hash onto a fixed set of stripes; each stripe is a mutex and a lock
// file. flock locks belong to an open file, which the goroutines of a
// process share, hence the mutex in front of it.
type locks struct {
	dir     string
	stripes [64]stripe
}

type stripe struct {
	mu   sync.Mutex
	file *os.File // opened on first use, kept open
}

func newLocks(dir string) (*locks, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	return &locks{dir: dir}, nil
}

// lock takes the lock of key's stripe and returns the function that
// releases it.
func (l *locks) lock(key string) (unlock func(), err error) {
	h := fnv.New32a()
	h.Write([]byte(key))
	i := h.Sum32() % uint32(len(l.stripes))
	s := &l.stripes[i]
	s.mu.Lock()
	if s.file == nil {
		f, err := os.OpenFile(filepath.Join(l.dir, fmt.Sprintf("%02d", i)), os.O_RDWR|os.O_CREATE, 0o644)
		if err != nil {
			s.mu.Unlock()
			return nil, fmt.Errorf("lock: %w", err)
		}
		s.file = f
	}
	if err := flock(s.file); err != nil {
		s.mu.Unlock()
		return nil, fmt.Errorf("lock: %w", err)
	}
	return func() {
		funlock(s.file)
		s.mu.Unlock()
	}, nil
}
