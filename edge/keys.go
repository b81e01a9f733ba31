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

// errUnknownKey means the secret is in no key of the instance's manifest:
// the key may have been created since the manifest was written, and the
// edge may ask the origin (instanceKeys.ask).
var errUnknownKey = errors.New("key not in the manifest")

// keyring holds the key manifests of the instances the edge has served,
// loaded from the store on first use and reloaded when the change feed lists
// them (and periodically, in case a change was missed).
type keyring struct {
	store store.Store

	mu     sync.RWMutex
	byGuid map[string]*instanceKeys
	load   sync.Mutex // serialises loads, so a burst of requests loads once

	// catalog holds the guids (lower case) of every instance with a
	// manifest in the store, once listed (after the edge's first read of
	// the change feed), kept up by the feed's manifest changes; nil before.
	// With it the edge answers a guid it does not hold itself, as an
	// unknown key, instead of asking the origin (and its database).
	catalogMu sync.RWMutex
	catalog   map[string]bool
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

	// asked remembers, briefly, what the origin answered for secrets not
	// in the manifest (see ask); lookups is the budget of such questions.
	askMu   sync.Mutex
	asked   map[askKey]askAnswer
	lookups bucket
}

// askKey is a secret not in the manifest, as used for an API type.
type askKey struct {
	secret  [sha256.Size]byte
	apiType string
}

// askAnswer is what the origin said of an askKey: valid or not, until when
// the edge believes it.
type askAnswer struct {
	valid bool
	until time.Time
}

// Limits of what an edge asks the origin about keys not in a manifest, per
// instance: a refusal is remembered for askTTL, an acceptance for
// askValidTTL only (a key deleted since is refused once the origins' key
// caches, of a second, have seen it; the manifest with a new key reaches
// the edge within about a second, and a reload drops every answer), at most
// maxAsked answers, and at most askRate questions a second after a burst
// of askBurst, so that a flood of made-up keys costs the origin a bounded
// number of key lookups a second.
const (
	askTTL      = 5 * time.Second
	askValidTTL = time.Second
	maxAsked    = 1000
	askRate     = 5
	askBurst    = 20
)

// bucket is a token bucket of askRate a second, holding askBurst.
type bucket struct {
	tokens float64
	last   time.Time
}

func (b *bucket) take(now time.Time) bool {
	if b.last.IsZero() {
		b.tokens = askBurst
	} else {
		b.tokens = min(askBurst, b.tokens+now.Sub(b.last).Seconds()*askRate)
	}
	b.last = now
	if b.tokens < 1 {
		return false
	}
	b.tokens--
	return true
}

// askDecision is what to do with a secret not in the manifest.
type askDecision int

const (
	askRefuse  askDecision = iota // refuse it: the origin said so, or the budget is spent
	askAccept                     // serve it: the origin accepted it a moment ago
	askForward                    // forward the request, and remember the origin's answer
)

// ask decides what to do with secret, not in the manifest, used for
// apiType at now.
func (ik *instanceKeys) ask(secret []byte, apiType string, now time.Time) askDecision {
	k := askKey{secret: sha256.Sum256(secret), apiType: apiType}
	ik.askMu.Lock()
	defer ik.askMu.Unlock()
	if a, ok := ik.asked[k]; ok && now.Before(a.until) {
		if a.valid {
			return askAccept
		}
		return askRefuse
	}
	if !ik.lookups.take(now) {
		return askRefuse
	}
	return askForward
}

// answered records the origin's answer of status to a request with
// secret, not in the manifest, for apiType: 401 refuses the key, an
// answer of content (or of its absence) accepts it; others say nothing of
// it.
func (ik *instanceKeys) answered(secret []byte, apiType string, status int, now time.Time) {
	var valid bool
	switch {
	case status == 401:
	case status >= 200 && status < 300, status == 304, status == 404:
		valid = true
	default:
		return
	}
	ik.askMu.Lock()
	defer ik.askMu.Unlock()
	if ik.asked == nil || len(ik.asked) >= maxAsked {
		ik.asked = map[askKey]askAnswer{}
	}
	ttl := askTTL
	if valid {
		ttl = askValidTTL
	}
	ik.asked[askKey{secret: sha256.Sum256(secret), apiType: apiType}] = askAnswer{valid: valid, until: now.Add(ttl)}
}

// maxInstances bounds the manifests held, against a flood of made-up guids.
const maxInstances = 100_000

func newKeyring(st store.Store) *keyring {
	return &keyring{store: st, byGuid: map[string]*instanceKeys{}}
}

// check validates secret as a key of type apiType for instance guid, with
// the origin's rules and messages: a missing, unknown, disabled or expired
// key is Unauthorized, a valid key of the other type Forbidden. It returns
// errNoManifest when the instance has no manifest to check against and the
// edge cannot tell whether it exists, and errUnknownKey, with the
// instance's keys, for a secret the manifest does not hold.
func (kr *keyring) check(ctx context.Context, guid string, secret []byte, apiType string, now time.Time) (*instanceKeys, error) {
	if len(secret) == 0 {
		return nil, delivery.MissingKey()
	}
	if kr.listed() && !kr.exists(guid) {
		// No such instance (a new one is listed by the change feed within
		// a poll): refused as an unknown key would be, without the origin
		// or the store, and alike, so that the answer tells nothing of
		// which instances exist.
		return nil, delivery.CheckKey(guid, nil, apiType, now)
	}
	ik, err := kr.instance(ctx, guid)
	if err != nil {
		return nil, err
	}
	k, ok := ik.lookup(secret)
	if !ok {
		return ik, errUnknownKey
	}
	return ik, delivery.CheckKey(guid, &k, apiType, now)
}

// listed reports whether the catalog of instances has been read.
func (kr *keyring) listed() bool {
	kr.catalogMu.RLock()
	defer kr.catalogMu.RUnlock()
	return kr.catalog != nil
}

// exists reports whether the catalog holds guid.
func (kr *keyring) exists(guid string) bool {
	kr.catalogMu.RLock()
	defer kr.catalogMu.RUnlock()
	return kr.catalog[strings.ToLower(guid)]
}

// list reads the catalog: the guids of every manifest in the store.
func (kr *keyring) list(ctx context.Context) error {
	guids := map[string]bool{}
	err := kr.store.List(ctx, delivery.ManifestPrefix, func(i store.Info) error {
		if g, ok := delivery.ManifestGuid(i.Key); ok {
			guids[g] = true
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("list key manifests: %w", err)
	}
	kr.catalogMu.Lock()
	kr.catalog = guids
	kr.catalogMu.Unlock()
	return nil
}

// noted records in the catalog, once listed, whether guid has a manifest.
func (kr *keyring) noted(guid string, exists bool) {
	kr.catalogMu.Lock()
	defer kr.catalogMu.Unlock()
	if kr.catalog == nil {
		return
	}
	if exists {
		kr.catalog[strings.ToLower(guid)] = true
	} else {
		delete(kr.catalog, strings.ToLower(guid))
	}
}

// unlist forgets the catalog (the store failed): unknown guids go to the
// origin again until it is read again.
func (kr *keyring) unlist() {
	kr.catalogMu.Lock()
	kr.catalog = nil
	kr.catalogMu.Unlock()
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
	kr.noted(guid, !ik.missing)
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
