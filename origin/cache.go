package origin

import (
	"container/list"
	"context"
	"sync"
	"time"

	"github.com/edgecms/edgecms/eventlog"
)

// renderCache keeps rendered fetch answers in memory, bounded in bytes, so
// that repeated direct reads do not render from Postgres each time. It is
// emptied per instance whenever the event log shows a change of that
// instance (Server.watch polls it), so an answer is at most one poll old.
//
// A render that started before a change must not be cached after it: put
// takes the instance's generation read before the render, and drops the
// answer if the instance changed meanwhile. Generations are kept with the
// cache turned off (max < 0) too: they also tell which answers were handed
// to the write-back since the instance last changed (handOver), which
// counts the reads of each answer so that only one read again is written
// back.
type renderCache struct {
	max int64 // < 0: nothing is cached

	mu    sync.Mutex
	size  int64
	lru   *list.List // of *cacheEntry, most recent first
	byKey map[string]*list.Element
	gen   map[string]uint64 // guid -> generation
	// handed holds, per answer key, how often it was read and when it
	// was last handed to the write-back, with its instance's generation
	// then.
	handed map[string]handOff
	now    func() time.Time
}

type handOff struct {
	reads  int
	handed bool
	gen    uint64
	at     time.Time
}

// The write-back is offered an answer again after handOverAgain, in case
// it dropped it (its queue was full, or the store failed): it has no
// answer to give. maxHanded bounds renderCache.handed; past it, the map
// starts again empty (answers are then counted and offered once more,
// which costs the write-back a look-up each).
//
// writeBackReads is how many reads of an answer the origin sees before it
// hands it over: every object written back is one the publisher drops
// again (or caps) when its content changes, so one read, which anyone with
// a fetch key can make up for any filter, does not earn a place in the
// store; a second one shows someone reads it again. The reads are counted
// across changes of the instance, since the publisher drops a variant on
// every change of what it shows and edges then miss it again.
const (
	handOverAgain  = time.Minute
	maxHanded      = 100_000
	writeBackReads = 2
)

type cacheEntry struct {
	key, guid string
	body      []byte
	etag      string
	tags      []string
}

func newRenderCache(maxBytes int64) *renderCache {
	return &renderCache{max: maxBytes, lru: list.New(), byKey: map[string]*list.Element{}, gen: map[string]uint64{},
		handed: map[string]handOff{}, now: time.Now}
}

// handOver counts a read of an answer of generation gen of its instance
// (rendered, or taken from the cache) and reports whether it is to be
// handed to the write-back: from its writeBackReads-th read on, once per
// key and generation (or handOverAgain). The write-back stores a variant an
// edge missed, and the publisher keeps it from then on; so with the cache
// off, or an answer evicted, repeated misses of one variant do not queue it
// again and again.
func (rc *renderCache) handOver(key, guid string, gen uint64) bool {
	now := rc.now()
	rc.mu.Lock()
	defer rc.mu.Unlock()
	h, ok := rc.handed[key]
	if !ok && len(rc.handed) >= maxHanded {
		clear(rc.handed)
	}
	if h.reads < writeBackReads {
		h.reads++
	}
	defer func() { rc.handed[key] = h }()
	if h.reads < writeBackReads || rc.gen[guid] != gen {
		return false // read once only, or the instance changed during the render: the next read hands it over
	}
	if h.handed && h.gen == gen && now.Sub(h.at) < handOverAgain {
		return false
	}
	h.handed, h.gen, h.at = true, gen, now
	return true
}

// generation returns the current generation of instance guid.
func (rc *renderCache) generation(guid string) uint64 {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return rc.gen[guid]
}

func (rc *renderCache) get(key string) (*cacheEntry, bool) {
	if rc.max < 0 {
		return nil, false
	}
	rc.mu.Lock()
	defer rc.mu.Unlock()
	el, ok := rc.byKey[key]
	if !ok {
		return nil, false
	}
	rc.lru.MoveToFront(el)
	return el.Value.(*cacheEntry), true
}

// put caches e unless its instance changed since generation gen.
func (rc *renderCache) put(e *cacheEntry, gen uint64) {
	cost := int64(len(e.body) + len(e.key) + 64)
	if rc.max < 0 || cost > rc.max/8 {
		return // one answer may not crowd out the rest
	}
	rc.mu.Lock()
	defer rc.mu.Unlock()
	if rc.gen[e.guid] != gen {
		return
	}
	if el, ok := rc.byKey[e.key]; ok {
		rc.remove(el)
	}
	rc.byKey[e.key] = rc.lru.PushFront(e)
	rc.size += cost
	for rc.size > rc.max {
		rc.remove(rc.lru.Back())
	}
}

func (rc *renderCache) remove(el *list.Element) {
	e := rc.lru.Remove(el).(*cacheEntry)
	delete(rc.byKey, e.key)
	rc.size -= int64(len(e.body) + len(e.key) + 64)
}

// invalidate drops every answer of instance guid.
func (rc *renderCache) invalidate(guid string) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	rc.gen[guid]++
	for el := rc.lru.Front(); el != nil; {
		next := el.Next()
		if el.Value.(*cacheEntry).guid == guid {
			rc.remove(el)
		}
		el = next
	}
}

// watch follows the event log from its current end until ctx is
// cancelled, reading it every interval: it drops the cached answers of the
// instances that changed, and the cached sites of those whose locales did.
func (s *Server) watch(ctx context.Context, interval time.Duration) {
	var pos eventlog.Position
	events := s.store.Events()
	for {
		p, err := events.End(ctx)
		if err == nil {
			pos = p
			break
		}
		s.log.Warn("render cache: read event log end", "err", err)
		if !sleep(ctx, interval) {
			return
		}
	}
	for sleep(ctx, interval) {
		evs, err := events.Since(ctx, pos, 1000)
		if err != nil {
			if ctx.Err() == nil {
				s.log.Warn("render cache: read events", "err", err)
			}
			continue
		}
		changed, locales := map[string]bool{}, map[string]bool{}
		for _, e := range evs {
			changed[e.InstanceGuid] = true
			if e.Subject == eventlog.SubjectLocale {
				locales[e.InstanceGuid] = true
			}
			pos = e.Position()
		}
		if len(evs) > 0 {
			s.watched.Store(evs[len(evs)-1].ID)
		}
		for guid := range locales {
			s.sites.forget(guid)
		}
		for guid := range changed {
			s.cache.invalidate(guid)
		}
	}
}

// sleep waits d, returning false if ctx ends first.
func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}
