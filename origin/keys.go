package origin

import (
	"context"
	"crypto/sha256"
	"sync"
	"time"

	"github.com/edgecms/edgecms/content"
	"github.com/edgecms/edgecms/delivery"
	"github.com/edgecms/edgecms/problem"
)

// keyCache answers Fetch API key checks from memory. Entries (also for
// unknown keys, so that a client with a bad key cannot load the database)
// live for ttl; a key change through this origin clears its instance's
// entries at once, and other origins see it within ttl.
type keyCache struct {
	store *content.Store
	ttl   time.Duration
	now   func() time.Time

	mu      sync.Mutex
	entries map[[32]byte]keyEntry
}

type keyEntry struct {
	guid    string
	key     *content.APIKey // nil: no such key
	fetched time.Time
}

func newKeyCache(store *content.Store, ttl time.Duration) *keyCache {
	return &keyCache{store: store, ttl: ttl, now: time.Now, entries: map[[32]byte]keyEntry{}}
}

// check validates secret as a key of type apiType ("fetch" or "preview") for
// instance guid: a missing, unknown, disabled or expired key is
// Unauthorized, a valid key of the other type Forbidden. It returns the
// key's cache identity (its hash), for rate limiting.
func (kc *keyCache) check(ctx context.Context, guid, secret, apiType string) ([32]byte, error) {
	if secret == "" {
		return [32]byte{}, delivery.MissingKey()
	}
	id := sha256.Sum256([]byte(guid + "\x00" + secret))
	now := kc.now()
	kc.mu.Lock()
	e, ok := kc.entries[id]
	kc.mu.Unlock()
	if !ok || now.Sub(e.fetched) > kc.ttl {
		k, err := kc.store.LookupAPIKey(ctx, guid, secret)
		switch {
		case problem.Is(err, problem.NotFound):
			e = keyEntry{guid: guid, fetched: now}
		case err != nil:
			return id, err
		default:
			e = keyEntry{guid: guid, key: &k, fetched: now}
		}
		kc.mu.Lock()
		if len(kc.entries) > 100_000 { // bound memory under a flood of random keys
			kc.entries = map[[32]byte]keyEntry{}
		}
		kc.entries[id] = e
		kc.mu.Unlock()
	}
	if e.key == nil {
		return id, delivery.CheckKey(guid, nil, apiType, now)
	}
	k := delivery.Key{Type: e.key.Type, Enabled: e.key.Enabled}
	if e.key.ExpiresAt != nil {
		k.Expires = *e.key.ExpiresAt
	}
	return id, delivery.CheckKey(guid, &k, apiType, now)
}

// forget drops the cached keys of instance guid.
func (kc *keyCache) forget(guid string) {
	kc.mu.Lock()
	defer kc.mu.Unlock()
	for id, e := range kc.entries {
		if e.guid == guid {
			delete(kc.entries, id)
		}
	}
}
