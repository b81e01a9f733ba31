package origin

import (
	"container/list"
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/edgecms/edgecms/content"
)

// renderCache keeps rendered fetch answers in memory, bounded in bytes, so
// that repeated direct reads do not render from Postgres each time. It is
// emptied per instance whenever the event log shows a change of that
// instance (watch polls it), so an answer is at most one poll old.
//
// A render that started before a change must not be cached after it: put
// takes the instance's generation read before the render, and drops the
// answer if the instance changed meanwhile.
type renderCache struct {
	max int64

	mu    sync.Mutex
	size  int64
	lru   *list.List // of *cacheEntry, most recent first
	byKey map[string]*list.Element
	gen   map[string]uint64 // guid -> generation
}

type cacheEntry struct {
	key, guid string
	body      []byte
	etag      string
	tags      []string
}

func newRenderCache(maxBytes int64) *renderCache {
	return &renderCache{max: maxBytes, lru: list.New(), byKey: map[string]*list.Element{}, gen: map[string]uint64{}}
}

// generation returns the current generation of instance guid.
func (rc *renderCache) generation(guid string) uint64 {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return rc.gen[guid]
}

func (rc *renderCache) get(key string) (*cacheEntry, bool) {
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
	if cost > rc.max/8 {
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

// watch follows the event log from its current end and invalidates the
// instances that change, every interval, until ctx is cancelled.
func (rc *renderCache) watch(ctx context.Context, store *content.Store, interval time.Duration, log *slog.Logger) {
	var pos content.Position
	for {
		p, err := store.EventLogEnd(ctx)
		if err == nil {
			pos = p
			break
		}
		log.Warn("render cache: read event log end", "err", err)
		if !sleep(ctx, interval) {
			return
		}
	}
	for sleep(ctx, interval) {
		evs, err := store.EventsSince(ctx, pos, 1000)
		if err != nil {
			if ctx.Err() == nil {
				log.Warn("render cache: read events", "err", err)
			}
			continue
		}
		changed := map[string]bool{}
		for _, e := range evs {
			changed[e.InstanceGuid] = true
			pos = e.Position()
		}
		for guid := range changed {
			rc.invalidate(guid)
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
