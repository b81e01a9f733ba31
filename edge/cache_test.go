package edge

import (
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/edgecms/edgecms/store"
)

// testEntry is an entry of key with a body of size bytes.
func testEntry(key string, size int) *entry {
	return newEntry(store.Object{Key: key, Body: []byte(strings.Repeat("x", size)), ContentType: "application/json", ETag: `"e"`}, time.Unix(0, 0))
}

// TestCacheKeepsWhatIsUsed scans many more objects than fit through caches
// of a few entries, with other seeds each time (so the keys fall in other
// shards): the object just read stays cached, objects read between every
// two inserts stay cached whatever shard they are in, and the bound holds.
func TestCacheKeepsWhatIsUsed(t *testing.T) {
	for run := 0; run < 50; run++ {
		const size, hot = 3000, 4
		c := newCache(64 << 10) // about 19 entries
		for i := 0; i < hot; i++ {
			c.put(testEntry(fmt.Sprintf("hot/%d", i), size), 0)
		}
		for i := 0; i < 500; i++ {
			key := fmt.Sprintf("cold/%d", i)
			if !c.put(testEntry(key, size), c.generation(key)) {
				t.Fatalf("run %d: %s not cached", run, key)
			}
			if !cached(c, key) {
				t.Fatalf("run %d: %s, just cached, was evicted by its own insert", run, key)
			}
			if _, bytes := c.stats(); bytes > c.max {
				t.Fatalf("run %d: after %s the cache holds %d bytes, more than %d", run, key, bytes, c.max)
			}
			for h := 0; h < hot; h++ {
				if c.get(fmt.Sprintf("hot/%d", h)) == nil {
					t.Fatalf("run %d: hot/%d, read after every insert, was evicted by the insert of %s", run, h, key)
				}
			}
		}
		if n, _ := c.stats(); n < 15 {
			t.Fatalf("run %d: %d entries left in a cache that holds about 19", run, n)
		}
	}
}

// TestCacheEvictsStaleFirst: in a shard, a stale entry goes before a
// fresh one even when the stale one was used.
func TestCacheEvictsStaleFirst(t *testing.T) {
	c := newCache(64 << 10)
	var keys []string
	for i := 0; len(keys) < 2; i++ { // two keys of one shard
		k := fmt.Sprintf("k/%d", i)
		if len(keys) == 0 || c.shard(k) == c.shard(keys[0]) {
			keys = append(keys, k)
		}
	}
	old, fresh := keys[0], keys[1]
	c.put(testEntry(old, 1000), c.generation(old))
	c.invalidate(old)
	c.put(testEntry(fresh, 1000), c.generation(fresh))
	c.get(old)
	c.get(fresh)
	c.max = c.size.Load() - 1 // one entry too many
	if !c.shard(old).evict(c, nil, false) {
		t.Fatal("nothing evicted")
	}
	if cached(c, old) || !cached(c, fresh) {
		t.Errorf("stale %s cached: %v, fresh %s cached: %v; want the stale one gone", old, cached(c, old), fresh, cached(c, fresh))
	}
}

// TestCacheBoundUnderHits reads a working set twice the cache's size
// without pause while another goroutine caches what is missing: the bound
// holds though the hits set every used bit again before the hand comes
// back.
func TestCacheBoundUnderHits(t *testing.T) {
	const size, keys = 3000, 40 // about 19 entries fit
	c := newCache(64 << 10)
	var stop atomic.Bool
	done := make(chan struct{})
	go func() {
		defer close(done)
		for !stop.Load() {
			for i := 0; i < keys; i++ {
				c.get(fmt.Sprintf("k/%d", i))
			}
		}
	}()
	defer func() { stop.Store(true); <-done }()
	for n := 0; n < 20000; n++ {
		key := fmt.Sprintf("k/%d", n%keys)
		if cached(c, key) {
			continue
		}
		c.put(testEntry(key, size), c.generation(key))
		if entries, bytes := c.stats(); bytes > c.max {
			t.Fatalf("after %s the cache holds %d bytes in %d entries, more than %d", key, bytes, entries, c.max)
		}
	}
}

// TestCacheUnreadGoFirst: one object read again, alone in its shard, and
// many objects never read, in another shard. A large insert that needs
// several removals takes the unread ones, not the one read again: a hand
// that took one entry per shard visit would come back to the lone entry's
// shard a second time, its second chance spent.
func TestCacheUnreadGoFirst(t *testing.T) {
	c := newCache(64 << 10)
	hot := "hot"
	var cold []string
	for i := 0; len(cold) < 200; i++ {
		k := fmt.Sprintf("cold/%d", i)
		if c.shard(k) != c.shard(hot) && (len(cold) == 0 || c.shard(k) == c.shard(cold[0])) {
			cold = append(cold, k)
		}
	}
	c.put(testEntry(hot, 500), c.generation(hot))
	n := 0
	for _, k := range cold { // fill up without evicting
		e := testEntry(k, 500)
		if _, b := c.stats(); b+e.cost > c.max {
			break
		}
		c.put(e, c.generation(k))
		n++
	}
	c.get(hot)
	c.put(testEntry("big", 7800), c.generation("big"))
	left := 0
	for _, k := range cold[:n] {
		if cached(c, k) {
			left++
		}
	}
	if !cached(c, hot) {
		t.Fatalf("%s, read again, was evicted while %d of %d objects never read are still cached", hot, left, n)
	}
}

// cached reports whether c holds key, without using it as get does.
func cached(c *cache, key string) bool {
	sh := c.shard(key)
	sh.mu.RLock()
	defer sh.mu.RUnlock()
	return sh.m[key] != nil
}
