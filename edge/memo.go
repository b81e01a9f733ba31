package edge

import (
	"hash/maphash"
	"sync"

	"github.com/edgecms/edgecms/fetch"
)

// parsed is a request parsed once: the canonical Request and its object
// key.
type parsed struct {
	req fetch.Request
	key string // Key of a cacheable request; "" otherwise
}

// memo remembers how raw requests (host, Guid header, path and query as
// sent) parse, so that a hit skips fetch.Parse and Request.Key. Parsing is a
// pure function of those inputs, so entries never go stale; each shard is
// emptied when full, which bounds memory. Only requests that parse are
// remembered.
type memo struct {
	seed   maphash.Seed
	shards [memoShards]memoShard
}

type memoShard struct {
	mu sync.RWMutex
	m  map[string]*parsed
	_  [40]byte // keep shards on separate cache lines
}

const (
	memoShards   = 16
	memoPerShard = 4096 // entries; about 300 bytes each
)

func newMemo() *memo {
	m := &memo{seed: maphash.MakeSeed()}
	for i := range m.shards {
		m.shards[i].m = make(map[string]*parsed)
	}
	return m
}

// raw appends the memo key of a request to dst: the inputs of fetch.Parse
// separated by bytes that cannot occur in them.
func rawKey(dst, host, guidHeader, path, query []byte) []byte {
	dst = append(dst, host...)
	dst = append(dst, 0)
	dst = append(dst, guidHeader...)
	dst = append(dst, 0)
	dst = append(dst, path...)
	dst = append(dst, 0)
	return append(dst, query...)
}

func (m *memo) shard(raw []byte) *memoShard {
	return &m.shards[maphash.Bytes(m.seed, raw)%memoShards]
}

// get returns the parse of raw, or nil.
func (m *memo) get(raw []byte) *parsed {
	sh := m.shard(raw)
	sh.mu.RLock()
	p := sh.m[string(raw)] // no allocation: the conversion is only a lookup key
	sh.mu.RUnlock()
	return p
}

// put remembers the parse of raw.
func (m *memo) put(raw []byte, p *parsed) {
	sh := m.shard(raw)
	sh.mu.Lock()
	if len(sh.m) >= memoPerShard {
		clear(sh.m)
	}
	sh.m[string(raw)] = p
	sh.mu.Unlock()
}
