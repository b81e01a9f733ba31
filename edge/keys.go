package edge

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/edgecms/edgecms/delivery"
	"github.com/edgecms/edgecms/problem"
	"github.com/edgecms/edgecms/store"
)

// errNoManifest means the edge cannot check keys of an instance (no
// manifest in the store, or the store failing): the request goes to the
// origin, which checks keys against the database.
var errNoManifest = errors.New("no key manifest")

// keyring holds the key manifests of the instances the edge has served,
// loaded from the store on first use and reloaded when the change feed lists
// them (and periodically, in case a change was missed).
type keyring struct {
	store store.Store

	mu     sync.RWMutex
	byGuid map[string]*instanceKeys
	load   sync.Mutex // serialises loads, so a burst of requests loads once
}

// instanceKeys is one instance's manifest, decoded for lookups. missing
// records that the store has no manifest (so unknown instances do not cost
// a store read per request).
//
// known remembers, by the secret as sent, the keys already found, so that a
// request with a known key does not hash it again. It holds only secrets
// whose hash is in keys, so at most one entry per key of the manifest (a
// flood of made-up keys adds nothing), and it goes with the manifest: a
// reload builds a new instanceKeys. It is copied on write, so that a lookup
// takes no lock. It keeps in memory the secrets that requests carried,
// which only ever passed through the edge's memory before.
type instanceKeys struct {
	keys    map[[sha256.Size]byte]delivery.Key
	known   atomic.Pointer[map[string]delivery.Key]
	missing bool
}

// maxInstances bounds the manifests held, against a flood of made-up guids.
const maxInstances = 100_000

func newKeyring(st store.Store) *keyring {
	return &keyring{store: st, byGuid: map[string]*instanceKeys{}}
}

// check validates secret as a key of type apiType for instance guid, with
// the origin's rules and messages: a missing, unknown, disabled or expired
// key is Unauthorized, a valid key of the other type Forbidden. It returns
// errNoManifest when the instance has no manifest to check against.
func (kr *keyring) check(ctx context.Context, guid string, secret []byte, apiType string, now time.Time) error {
	if len(secret) == 0 {
		return delivery.MissingKey()
	}
	ik, err := kr.instance(ctx, guid)
	if err != nil {
		return err
	}
	return ik.verify(guid, secret, apiType, now)
}

// verify checks secret against the keys of instance guid (see check).
func (ik *instanceKeys) verify(guid string, secret []byte, apiType string, now time.Time) error {
	k, ok := ik.lookup(secret)
	if !ok {
		return delivery.CheckKey(guid, nil, apiType, now)
	}
	return delivery.CheckKey(guid, &k, apiType, now)
}

// lookup returns the key whose secret is secret.
func (ik *instanceKeys) lookup(secret []byte) (delivery.Key, bool) {
	if m := ik.known.Load(); m != nil {
		if k, ok := (*m)[string(secret)]; ok { // no allocation: the conversion is only a lookup key
			return k, true
		}
	}
	k, ok := ik.keys[sha256.Sum256(secret)]
	if !ok {
		return delivery.Key{}, false
	}
	for {
		old := ik.known.Load()
		m := make(map[string]delivery.Key, 1)
		if old != nil {
			m = maps.Clone(*old)
		}
		m[string(secret)] = k
		if ik.known.CompareAndSwap(old, &m) {
			return k, true
		}
	}
}

// instance returns the keys of guid, loading its manifest on first use.
func (kr *keyring) instance(ctx context.Context, guid string) (*instanceKeys, error) {
	kr.mu.RLock()
	ik := kr.byGuid[guid]
	kr.mu.RUnlock()
	if ik == nil {
		kr.load.Lock()
		kr.mu.RLock()
		ik = kr.byGuid[guid]
		kr.mu.RUnlock()
		var err error
		if ik == nil {
			ik, err = kr.reloadLocked(ctx, guid)
		}
		kr.load.Unlock()
		if err != nil {
			return nil, errNoManifest
		}
	}
	if ik.missing {
		return nil, errNoManifest
	}
	return ik, nil
}

// reload reads guid's manifest from the store and keeps it. A store error
// other than not found leaves the keys held before as they were. Loads are
// serialised, so a slow first load cannot overwrite a newer manifest that
// the change feed made the edge read meanwhile.
func (kr *keyring) reload(ctx context.Context, guid string) (*instanceKeys, error) {
	kr.load.Lock()
	defer kr.load.Unlock()
	return kr.reloadLocked(ctx, guid)
}

func (kr *keyring) reloadLocked(ctx context.Context, guid string) (*instanceKeys, error) {
	ik, err := kr.read(ctx, guid)
	if err != nil {
		return nil, err
	}
	kr.mu.Lock()
	if len(kr.byGuid) >= maxInstances {
		for g, old := range kr.byGuid {
			if old.missing {
				delete(kr.byGuid, g)
			}
		}
		if len(kr.byGuid) >= maxInstances {
			kr.byGuid = map[string]*instanceKeys{}
		}
	}
	kr.byGuid[strings.Clone(guid)] = ik
	kr.mu.Unlock()
	return ik, nil
}

// read reads and decodes guid's manifest.
func (kr *keyring) read(ctx context.Context, guid string) (*instanceKeys, error) {
	o, err := kr.store.Get(ctx, delivery.ManifestKey(guid))
	if problem.Is(err, problem.NotFound) {
		return &instanceKeys{missing: true}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read key manifest of %s: %w", guid, err)
	}
	var m delivery.Manifest
	if err := json.Unmarshal(o.Body, &m); err != nil {
		return nil, fmt.Errorf("decode key manifest of %s: %w", guid, err)
	}
	ik := &instanceKeys{keys: make(map[[sha256.Size]byte]delivery.Key, len(m.Keys))}
	for _, k := range m.Keys {
		var h [sha256.Size]byte
		if n, err := hex.Decode(h[:], []byte(k.Hash)); err != nil || n != len(h) {
			return nil, fmt.Errorf("key manifest of %s: hash %q is not a hex SHA-256", guid, k.Hash)
		}
		ak := delivery.Key{Type: k.Type, Enabled: k.Enabled}
		if k.ExpiresAt != nil {
			ak.Expires = *k.ExpiresAt
		}
		ik.keys[h] = ak
	}
	return ik, nil
}

// loaded returns the guids whose manifests (or their absence) are held.
func (kr *keyring) loaded() []string {
	kr.mu.RLock()
	defer kr.mu.RUnlock()
	guids := make([]string, 0, len(kr.byGuid))
	for g := range kr.byGuid {
		guids = append(guids, g)
	}
	return guids
}

// forget drops what is held of guid, so that the next request reads its
// manifest again.
func (kr *keyring) forget(guid string) {
	kr.mu.Lock()
	delete(kr.byGuid, guid)
	kr.mu.Unlock()
}
