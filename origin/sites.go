package origin

import (
	"context"
	"sync"

	"github.com/edgecms/edgecms/content"
	"github.com/edgecms/edgecms/render"
)

// siteCache keeps the render.Site (the instance and its locales) of the
// instances the origin renders for, so that a steady Fetch API miss costs
// its render's queries and nothing else. Server.watch forgets an
// instance's site when the event log shows a locale of it added or
// removed; nothing else in a Site changes.
//
// A load that started before such an event must not be kept after it:
// get keeps what it loaded only if the instance's generation did not move
// meanwhile.
type siteCache struct {
	store *content.Store

	mu    sync.Mutex
	sites map[string]render.Site
	gen   map[string]uint64 // guid -> generation, moved by forget
}

// maxSites bounds siteCache; past it, the cache starts again empty.
const maxSites = 10_000

func newSiteCache(store *content.Store) *siteCache {
	return &siteCache{store: store, sites: map[string]render.Site{}, gen: map[string]uint64{}}
}

// get returns the site of instance guid, from memory when it can.
func (sc *siteCache) get(ctx context.Context, guid string) (render.Site, error) {
	sc.mu.Lock()
	site, ok := sc.sites[guid]
	gen := sc.gen[guid]
	sc.mu.Unlock()
	if ok {
		return site, nil
	}
	site, err := render.LoadSite(ctx, sc.store, guid)
	if err != nil {
		return render.Site{}, err
	}
	sc.mu.Lock()
	defer sc.mu.Unlock()
	if sc.gen[guid] == gen {
		if len(sc.sites) >= maxSites {
			clear(sc.sites)
		}
		sc.sites[guid] = site
	}
	return site, nil
}

// forget drops the site of instance guid.
func (sc *siteCache) forget(guid string) {
	sc.mu.Lock()
	defer sc.mu.Unlock()
	delete(sc.sites, guid)
	sc.gen[guid]++
}
