package origin

import (
	"context"
	"encoding/hex"

	"github.com/edgecms/edgecms/fetch"
	"github.com/edgecms/edgecms/problem"
	"github.com/edgecms/edgecms/throttle"
)

// rateLimits are the limits of direct Fetch API requests per API key, one
// for fetch keys and one for preview keys. Their buckets are in Postgres
// (throttle.Rate), shared by every origin on the database. Requests an
// edge or CDN answers from its cache never reach them.
type rateLimits struct {
	fetch, preview *throttle.Rate
}

// DefaultPreviewRateLimit is the preview requests per second a preview key
// may make by default (EDGECMS_PREVIEW_RATE_LIMIT). Preview is never
// cached, so a site's preview build sends every request to an origin: a
// preview key's bucket holds PreviewBurstSeconds of its rate, so that a
// whole build goes through at its own speed. A preview build of a 500-page
// site sends about 2,500 requests (go test ./examples/nextjs -args -pages
// 500), well within the 6,000 of the default; after the burst a key is
// held to the rate.
const (
	DefaultPreviewRateLimit = 100
	PreviewBurstSeconds     = 60
)

func newRateLimits(s *Server) rateLimits {
	db := s.store.DB()
	return rateLimits{
		fetch: throttle.NewRate(db, throttle.RatePolicy{Name: "fetch-key", PerSecond: float64(s.cfg.FetchRateLimit),
			Detail: "more than the allowed direct requests per second for this API key; retry after the Retry-After seconds"}),
		preview: throttle.NewRate(db, throttle.RatePolicy{Name: "preview-key", PerSecond: float64(s.cfg.PreviewRateLimit),
			Burst:  PreviewBurstSeconds * s.cfg.PreviewRateLimit,
			Detail: "more than the allowed preview requests per second for this preview key (EDGECMS_PREVIEW_RATE_LIMIT); retry after the Retry-After seconds"}),
	}
}

// limit spends a token of the key whose cache identity is keyID, of type
// apiType (fetch.Fetch or fetch.Preview): nil, or a RateLimited problem.
// When Postgres cannot count, the request is served and the failure
// logged.
func (s *Server) limit(ctx context.Context, apiType string, keyID [32]byte) error {
	r := s.limits.fetch
	if apiType == fetch.Preview {
		r = s.limits.preview
	}
	// Half the key's hash names its bucket: the table never holds a key.
	err := r.Take(ctx, hex.EncodeToString(keyID[:16]))
	if err != nil && !problem.Is(err, problem.RateLimited) {
		s.log.WarnContext(ctx, "rate limit not counted", "err", err)
		return nil
	}
	return err
}
