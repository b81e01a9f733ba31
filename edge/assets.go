package edge

import (
	"bytes"
	"context"

	"github.com/valyala/fasthttp"

	"github.com/edgecms/edgecms/media"
	"github.com/edgecms/edgecms/problem"
)

// Asset bytes and their image variants are served from the store at their
// keys, /{guid}/assets/{sha256}.{ext}[?transform] (see package media):
// they never change, so they need neither the origin nor the change feed,
// and keep being served with the origin down or its management routes off.
// They are not kept in the edge's memory (they may be large; a CDN keeps
// them for a year), but streamed from the store. A variant the store does
// not hold yet, or bytes a store replica does not hold yet, is forwarded
// to the origin, which renders and stores it.

// assetSegment is the middle segment of an asset path.
var assetSegment = []byte("/assets/")

// assetPath reports whether a normalised path has the shape of an asset's:
// three segments, the second "assets".
func assetPath(path []byte) bool {
	i := bytes.Index(path, assetSegment)
	return i > 1 && bytes.IndexByte(path[1:i], '/') < 0 && bytes.IndexByte(path[i+len(assetSegment):], '/') < 0
}

// serveAsset answers a GET or HEAD of asset bytes or of a variant.
func (s *Server) serveAsset(c *fasthttp.RequestCtx, t target) error {
	key := string(t.cleanPath[1:])
	_, _, typ, ok := media.ParseKey(key)
	if !ok {
		// Not a canonical key (an upper-case guid, say): the origin knows.
		return s.roundTrip(c, string(c.Request.Header.RequestURI()))
	}
	tr, variant, err := media.ParseTransform(string(t.query), typ, s.cfg.ImageSizes, string(c.Request.Header.Peek(fasthttp.HeaderAccept)))
	if err != nil {
		return err
	}
	if variant {
		key, _ = tr.Key(key)
		typ = tr.Format
	}
	body, info, err := s.cfg.Store.Open(context.Background(), key)
	if err != nil {
		if !problem.Is(err, problem.NotFound) {
			s.log.Warn("store read failed; asking the origin", "key", key, "err", err)
		}
		return s.roundTrip(c, string(c.Request.Header.RequestURI()))
	}
	media.Serve(c, body, info, typ, variant && tr.ByAccept)
	return nil
}
