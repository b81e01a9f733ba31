package origin

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"strconv"
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/edgecms/edgecms/delivery"
	"github.com/edgecms/edgecms/fetch"
	"github.com/edgecms/edgecms/problem"
)

// RenderFunc renders the answer to a Fetch API request: the JSON body and
// the tags of what it embeds (sent as a Surrogate-Key header so that a CDN
// can purge by tag).
type RenderFunc func(ctx context.Context, req fetch.Request) (body []byte, tags []string, err error)

// serveFetch answers a Fetch API request: parse, check the key, limit the
// rate, render.
func (s *Server) serveFetch(c *fiber.Ctx) error {
	req, err := fetch.Parse(fetch.Input{
		Host:       string(c.Request().Host()),
		Path:       string(c.Request().URI().PathOriginal()),
		RawQuery:   string(c.Request().URI().QueryString()),
		GuidHeader: c.Get("Guid"),
	})
	if err != nil {
		return err
	}
	ctx := c.UserContext()
	keyID, err := s.keys.check(ctx, req.Guid, c.Get("APIKey"), req.APIType)
	if err != nil {
		return err
	}
	if err := s.limit(ctx, req.APIType, keyID); err != nil {
		return err
	}
	e, err := s.answer(ctx, req)
	if err != nil {
		return err
	}
	c.Set(fiber.HeaderETag, e.etag)
	if req.Cacheable() {
		c.Set(fiber.HeaderCacheControl, delivery.FetchCacheControl)
		if len(e.tags) > 0 {
			c.Set("Surrogate-Key", strings.Join(e.tags, " "))
		}
	} else {
		c.Set(fiber.HeaderCacheControl, delivery.NoStore)
	}
	if inm := c.Get(fiber.HeaderIfNoneMatch); inm != "" && etagMatch(inm, e.etag) {
		return c.SendStatus(fiber.StatusNotModified)
	}
	c.Set(fiber.HeaderContentType, fiber.MIMEApplicationJSONCharsetUTF8)
	return c.Send(e.body)
}

// answer renders req, or takes a fetch answer from the render cache.
func (s *Server) answer(ctx context.Context, req fetch.Request) (*cacheEntry, error) {
	if s.cfg.Renderer == nil && s.cfg.Render == nil {
		return nil, problem.New(problem.Unavailable, "this origin does not render the Fetch API")
	}
	key := req.Key()
	if req.Cacheable() {
		if e, ok := s.cache.get(key); ok {
			s.offer(ctx, req, e, s.cache.generation(req.Guid))
			return e, nil
		}
	}
	gen := s.cache.generation(req.Guid)
	if !req.Cacheable() {
		return s.renderEntry(ctx, req)
	}
	// Misses of one answer at once (one per edge after a publish, a
	// burst of readers, a crawler) share one render: a page by path or a
	// sitemap behind a dynamic page of 100,000 items costs a second of
	// CPU, which each edge would otherwise spend again. Sharing is
	// within a generation of the instance, as the cache is, so no
	// request gets a render that started before a change it may have
	// seen. The render goes on if the request that started it leaves.
	s.waiting.Add(1)
	defer s.waiting.Add(-1)
	ch := s.answers.DoChan(key+"\x00"+strconv.FormatUint(gen, 10), func() (any, error) {
		e, err := s.renderEntry(context.WithoutCancel(ctx), req)
		if err == nil {
			s.cache.put(e, gen)
		}
		return e, err
	})
	select {
	case r := <-ch:
		if r.Err != nil {
			return nil, r.Err
		}
		e := r.Val.(*cacheEntry)
		s.offer(ctx, req, e, gen)
		return e, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// renderEntry renders req into a cache entry.
func (s *Server) renderEntry(ctx context.Context, req fetch.Request) (*cacheEntry, error) {
	body, tags, err := s.render(ctx, req)
	if err != nil {
		return nil, err
	}
	sum := sha256.Sum256(body)
	return &cacheEntry{key: req.Key(), guid: req.Guid, body: body, tags: tags, etag: `"` + hex.EncodeToString(sum[:16]) + `"`}, nil
}

// offer counts a read of answer e, of generation gen of its instance, and
// hands it to the write-back when handOver says so.
func (s *Server) offer(ctx context.Context, req fetch.Request, e *cacheEntry, gen uint64) {
	if s.cfg.WriteBack != nil && s.cache.handOver(e.key, req.Guid, gen) {
		s.cfg.WriteBack(ctx, req, e.body, e.tags)
	}
}

// render renders req with the configured Renderer (or Render).
func (s *Server) render(ctx context.Context, req fetch.Request) ([]byte, []string, error) {
	if s.cfg.Renderer == nil {
		return s.cfg.Render(ctx, req)
	}
	site, err := s.sites.get(ctx, req.Guid)
	if err != nil {
		return nil, nil, err
	}
	res, err := s.cfg.Renderer.Render(ctx, site, req)
	return res.Body, res.Tags, err
}

// etagMatch reports whether an If-None-Match header value matches etag.
func etagMatch(header, etag string) bool {
	for _, t := range strings.Split(header, ",") {
		t = strings.TrimSpace(t)
		if t == "*" || t == etag || strings.TrimPrefix(t, "W/") == etag {
			return true
		}
	}
	return false
}
