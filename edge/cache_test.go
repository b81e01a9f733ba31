package edge

import (
	"fmt"
	"strings"
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
	sh := c.shard(old)
	if !sh.evictOne(c, nil) {
		t.Fatal("nothing evicted")
	}
	if cached(c, old) || !cached(c, fresh) {
		t.Errorf("stale %s cached: %v, fresh %s cached: %v; want the stale one gone", old, cached(c, old), fresh, cached(c, fresh))
	}
}

// cached reports whether c holds key, without using it as get does.
func cached(c *cache, key string) bool {
	sh := c.shard(key)
	sh.mu.RLock()
	defer sh.mu.RUnlock()
	return sh.m[key] != nil
}
