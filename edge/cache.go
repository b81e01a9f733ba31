package edge

import (
	"container/list"
	"hash/maphash"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/edgecms/edgecms/store"
)

// entry is one object held in memory, with its response headers rendered
// once so that a hit only copies bytes. Its fields never change after it is
// built, except the flags; bodies are shared with responses, never written.
type entry struct {
	key  string
	body []byte
	// Header values, ready to send.
	contentType  []byte
	cacheControl []byte
	etag         []byte
	surrogateKey []byte // nil when the object has no tags
	// cachedAt is when the edge took the object from the store, in Unix
	// seconds: Age counts from it.
	cachedAt int64
	cost     int64

	// stale is set when the change feed lists the key: the entry is no
	// longer served as a hit, only when the store and the origin both fail
	// (stale-if-error).
	stale atomic.Bool
	// used is the CLOCK bit: set by hits, cleared by the eviction sweep.
	used atomic.Bool
	elem *list.Element // in its shard's ring; guarded by the shard lock
}

// entryOverhead approximates the memory an entry costs besides its bytes
// (struct, map slot, list element).
const entryOverhead = 256

// newEntry renders the headers of o for the cache.
func newEntry(o store.Object, now time.Time) *entry {
	e := &entry{
		key:          o.Key,
		body:         o.Body,
		contentType:  []byte(o.ContentType),
		cacheControl: []byte(o.CacheControl),
		etag:         []byte(o.ETag),
		cachedAt:     now.Unix(),
	}
	if len(o.Tags) > 0 {
		n := len(o.Tags) - 1
		for _, t := range o.Tags {
			n += len(t)
		}
		b := make([]byte, 0, n)
		for i, t := range o.Tags {
			if i > 0 {
				b = append(b, ' ')
			}
			b = append(b, t...)
		}
		e.surrogateKey = b
	}
	e.cost = int64(len(e.key)+len(e.body)+len(e.contentType)+len(e.cacheControl)+len(e.etag)+len(e.surrogateKey)) + entryOverhead
	return e
}

// age returns the Age header value of e at now: whole seconds since the
// edge took it from the store.
func (e *entry) age(dst []byte, now int64) []byte {
	return strconv.AppendInt(dst, max(now-e.cachedAt, 0), 10)
}

// cache is the edge's in-memory object cache, bounded in bytes. Keys are
// spread over shards, each with its own lock, map and CLOCK ring, so hits on
// different keys do not contend; a hit takes only a read lock and sets the
// entry's used bit. The byte bound is global: an insert evicts from the
// shards in turn until the total is back under it (see evict).
//
// Each shard has a generation, bumped whenever one of its keys is
// invalidated. A miss reads the generation before it asks the store and
// inserts only if it is unchanged, so an object read just before a change
// is never cached after it.
type cache struct {
	max    int64
	seed   maphash.Seed
	shards []shard
	size   atomic.Int64
	hand   atomic.Uint32 // next shard to evict from
}

type shard struct {
	mu   sync.RWMutex
	m    map[string]*entry
	ring *list.List // CLOCK order: the hand is at the back
	gen  uint64
	_    [32]byte // keep shards on separate cache lines
}

const cacheShards = 64

func newCache(maxBytes int64) *cache {
	c := &cache{max: maxBytes, seed: maphash.MakeSeed(), shards: make([]shard, cacheShards)}
	for i := range c.shards {
		c.shards[i].m = map[string]*entry{}
		c.shards[i].ring = list.New()
	}
	return c
}

func (c *cache) shard(key string) *shard {
	return &c.shards[maphash.String(c.seed, key)%cacheShards]
}

// get returns the entry of key, fresh or stale, or nil.
func (c *cache) get(key string) *entry {
	sh := c.shard(key)
	sh.mu.RLock()
	e := sh.m[key]
	sh.mu.RUnlock()
	if e != nil && !e.used.Load() {
		e.used.Store(true)
	}
	return e
}

// generation returns the generation of key's shard, to pass to put.
func (c *cache) generation(key string) uint64 {
	sh := c.shard(key)
	sh.mu.RLock()
	defer sh.mu.RUnlock()
	return sh.gen
}

// fits reports whether an entry of cost bytes may be cached at all: one
// object may take at most an eighth of the cache.
func (c *cache) fits(cost int64) bool { return cost <= c.max/8 }

// put caches e unless its shard's generation moved past gen (the key was
// invalidated while e was read) or e is too large. It reports whether e was
// cached.
func (c *cache) put(e *entry, gen uint64) bool {
	if !c.fits(e.cost) {
		return false
	}
	sh := c.shard(e.key)
	sh.mu.Lock()
	if sh.gen != gen {
		sh.mu.Unlock()
		return false
	}
	if old := sh.m[e.key]; old != nil {
		sh.ring.Remove(old.elem)
		c.size.Add(-old.cost)
	}
	// e starts without a second chance: an object read once (a crawler's
	// scan) goes before the objects read again since the hand last passed.
	e.used.Store(false)
	e.elem = sh.ring.PushFront(e)
	sh.m[e.key] = e
	sh.mu.Unlock()
	if c.size.Add(e.cost) > c.max {
		c.evict(e)
	}
	return true
}

// evict removes entries until the cache is within its bound. One CLOCK hand
// sweeps all the shards in turn: in each it passes every entry once,
// clearing the used bits, and removes the entries not used since it last
// passed (or stale) while the cache is over its bound. So an entry
// survives as long as it is used once per sweep of the whole cache,
// whichever shard it is in. keep, the entry whose insert made room
// necessary, is passed over untouched. When two sweeps in a row remove
// nothing (hits set the bits again as fast as the hand clears them), the
// hand removes what it meets, used or not: the bound always holds once an
// insert returns, but for entries that inserts running meanwhile add.
func (c *cache) evict(keep *entry) {
	for idle := 0; c.size.Load() > c.max && idle < 3*cacheShards; {
		i := c.hand.Add(1) % cacheShards
		if c.shards[i].evict(c, keep, idle >= 2*cacheShards) {
			idle = 0
		} else {
			idle++
		}
	}
}

// evict passes the shard's entries once, oldest first, while the cache is
// over its bound: it removes those that are stale or not used since the
// hand last passed (any but keep when force) and gives the others a second
// chance. It reports whether it removed any.
func (sh *shard) evict(c *cache, keep *entry, force bool) bool {
	sh.mu.Lock()
	defer sh.mu.Unlock()
	removed := false
	for n := sh.ring.Len(); n > 0 && c.size.Load() > c.max; n-- {
		el := sh.ring.Back()
		e := el.Value.(*entry)
		if e == keep {
			sh.ring.MoveToFront(el)
			continue
		}
		if !force && e.used.Load() && !e.stale.Load() {
			e.used.Store(false)
			sh.ring.MoveToFront(el)
			continue
		}
		sh.ring.Remove(el)
		delete(sh.m, e.key)
		c.size.Add(-e.cost)
		removed = true
	}
	return removed
}

// invalidate marks the entry of key stale and moves its shard to a new
// generation, so that a read of the old object in flight is not cached.
func (c *cache) invalidate(key string) {
	sh := c.shard(key)
	sh.mu.Lock()
	sh.gen++
	if e := sh.m[key]; e != nil {
		e.stale.Store(true)
	}
	sh.mu.Unlock()
}

// remove drops the entry of key, when the origin has answered that the
// object no longer exists.
func (c *cache) remove(key string) {
	sh := c.shard(key)
	sh.mu.Lock()
	sh.gen++
	if e := sh.m[key]; e != nil {
		sh.ring.Remove(e.elem)
		delete(sh.m, key)
		c.size.Add(-e.cost)
	}
	sh.mu.Unlock()
}

// invalidateAll marks every entry stale, when the edge may have missed
// changes.
func (c *cache) invalidateAll() {
	for i := range c.shards {
		sh := &c.shards[i]
		sh.mu.Lock()
		sh.gen++
		for _, e := range sh.m {
			e.stale.Store(true)
		}
		sh.mu.Unlock()
	}
}

// stats returns the number of entries and their cost in bytes.
func (c *cache) stats() (entries int, bytes int64) {
	for i := range c.shards {
		sh := &c.shards[i]
		sh.mu.RLock()
		entries += len(sh.m)
		sh.mu.RUnlock()
	}
	return entries, c.size.Load()
}
