package publisher

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/maphash"
	"io"
	"iter"
	"slices"
	"strings"
	"sync"

	"github.com/edgecms/edgecms/content"
	"github.com/edgecms/edgecms/fetch"
	"github.com/edgecms/edgecms/problem"
	"github.com/edgecms/edgecms/render"
	"github.com/edgecms/edgecms/render/source"
)

// Sitemaps and pages by path.
//
// A page by path (/page/{channel}?path=...) is the page at a node of the
// channel's flat sitemap and that node: its bytes depend on the page and
// what its zones show (tags p: and i:, matched like any object's), and on
// the rest of the sitemap only through the node (render.Result.NodeTags:
// the channel's s: tag and the c: tags of its dynamic pages). So the
// objects table records those tags marked (depsOf), no change matches
// them, and when a batch renders a flat sitemap again the publisher
// compares its nodes with those of the flat sitemap in the store: only the
// paths whose node was added, removed or changed are rendered. A new item
// behind a dynamic page renders its own path, not one per item of the
// container.
//
// The sitemaps are written after the pages by path they led to: a batch
// cut short before them compares with the old sitemap again when it is
// repeated, and renders the same paths.

// publishSitemaps renders the sitemaps among reqs, then the pages by path
// whose node changed in a flat one, writes those, then the sitemaps.
// seen holds the keys already rendered by the caller (and gets the keys
// this adds).
func (p *Publisher) publishSitemaps(ctx context.Context, site render.Site, maps []fetch.Request, opts writeOpts,
	out *outcome, seen map[string]bool, progress func(int)) error {
	if len(maps) == 0 {
		return nil
	}
	rs := make([]*rendered, 0, len(maps))
	defer func() {
		for _, r := range rs {
			r.drop()
		}
	}()
	for _, req := range maps {
		r, err := p.renderSpilled(ctx, site, req, opts.src)
		if err != nil {
			return err
		}
		rs = append(rs, r)
	}
	var more []fetch.Request
	for _, r := range rs {
		if r.req.Kind != fetch.SitemapFlat {
			continue
		}
		paths, err := p.changedPaths(ctx, r)
		if err != nil {
			return err
		}
		for _, path := range paths {
			req, err := pagePathRequest(site.Instance.Guid, r.req.Locale, r.req.Channel, path)
			if err != nil {
				p.log.Warn("publisher: page path not addressable", "key", r.key, "path", path, "err", err)
				continue
			}
			if k := req.Key(); !seen[k] {
				seen[k] = true
				more = append(more, req)
			}
		}
	}
	changed := len(out.changed)
	if err := p.renderWrite(ctx, site, more, opts, out, nil, progress); err != nil {
		return err
	}
	// Edges may serve those pages (a new item's among them) while the
	// sitemaps, some 20 MB each behind a large dynamic page, are written.
	if len(out.changed) > changed {
		p.requestFlush()
	}
	return p.writeAll(ctx, site.Instance.Guid, rs, opts, out)
}

// changedPaths compares the nodes of a freshly rendered flat sitemap with
// those of the one in the store and returns the paths added, removed or
// changed, in sitemap order (removed ones last); all of them when the
// sitemap's tags changed. With no sitemap in the store every path is new.
//
// The two are read as streams, side by side, and a node is kept (as a
// 64-bit hash) only while the other sitemap has not reached its path: an
// item added or removed behind a dynamic page shifts the rest by one node,
// so what is held is the few nodes by which the two orders differ, not a
// node of the whole sitemap (some 70 bytes each where the body is over
// 200). A new order of a large container holds up to all of them. Two
// different nodes of one path hash alike with a chance of one in 2^64 per
// node: that page by path would be left as it is.
func (p *Publisher) changedPaths(ctx context.Context, flat *rendered) ([]string, error) {
	rc, info, err := p.store.Open(ctx, flat.key)
	switch {
	case err == nil:
		defer rc.Close()
	case !problem.Is(err, problem.NotFound):
		return nil, fmt.Errorf("read sitemap %s: %w", flat.key, err)
	}
	// Every page by path carries the sitemap's tags (the channel, the
	// containers of its dynamic pages): when they change, so do the
	// tags of every path, whose node may be the same.
	all := err == nil && !flat.gone && !slices.Equal(info.Tags, flat.tags)
	seed := maphash.MakeSeed()
	var stored, fresh *nodeStream
	if rc != nil {
		stored = newNodeStream(rc, seed)
		defer stored.stop()
	}
	if !flat.gone {
		fresh = newNodeStream(flat.bodyReader(), seed)
		defer fresh.stop()
	}
	out, err := compareNodes(stored, fresh, all)
	if errors.Is(err, errStoredNotSitemap) {
		p.log.Warn("publisher: unreadable sitemap in the store; rendering every path", "key", flat.key, "err", err)
		again := newNodeStream(flat.bodyReader(), seed)
		defer again.stop()
		out, err = compareNodes(nil, again, true)
	}
	if err != nil {
		return nil, fmt.Errorf("read sitemap %s: %w", flat.key, err)
	}
	return out, nil
}

// errStoredNotSitemap is what compareNodes answers when the stored
// sitemap is not one (errNotSitemap).
var errStoredNotSitemap = errors.New("stored sitemap")

// nodeStream reads the paths of a flat sitemap and a hash of each node,
// one at a time (scanSitemap, pulled).
type nodeStream struct {
	next func() (string, uint64, bool)
	stop func()
	err  error // the scan's, once next said no more
}

// errStopped ends a scan that its reader stopped pulling.
var errStopped = errors.New("stopped")

func newNodeStream(r io.Reader, seed maphash.Seed) *nodeStream {
	s := &nodeStream{}
	s.next, s.stop = iter.Pull2(func(yield func(string, uint64) bool) {
		err := scanSitemap(r, func(path string, node []byte) error {
			if !yield(path, maphash.Bytes(seed, node)) {
				return errStopped
			}
			return nil
		})
		if err != errStopped {
			s.err = err
		}
	})
	return s
}

// compareNodes reads the stored and the fresh flat sitemap (nil: none)
// side by side and returns the paths of fresh nodes that stored lacks or
// has otherwise (all of them with all), in fresh order, then those only
// stored has, in stored order.
func compareNodes(stored, fresh *nodeStream, all bool) ([]string, error) {
	type node struct {
		hash uint64
		at   int // place in its sitemap
	}
	type found struct {
		path string
		at   int
	}
	waitOld, waitNew := map[string]node{}, map[string]node{} // not yet met in the other
	var out []found
	// advance reads the next node of s, which waits in mine until the
	// other side meets it. A node the other side already waits for is a
	// pair: a change if the hashes differ, placed where fresh has it.
	advance := func(s *nodeStream, mine, other map[string]node, i int, isFresh bool) bool {
		path, h, more := s.next()
		if !more {
			return false
		}
		o, ok := other[path]
		if !ok {
			mine[path] = node{h, i}
			return true
		}
		delete(other, path)
		if all || o.hash != h {
			at := o.at
			if isFresh {
				at = i
			}
			out = append(out, found{path, at})
		}
		return true
	}
	for i, oldMore, newMore := 0, stored != nil, fresh != nil; oldMore || newMore; i++ {
		if newMore {
			newMore = advance(fresh, waitNew, waitOld, i, true)
		}
		if oldMore {
			oldMore = advance(stored, waitOld, waitNew, i, false)
		}
	}
	if fresh != nil && fresh.err != nil {
		return nil, fresh.err
	}
	if stored != nil && stored.err != nil {
		if errors.Is(stored.err, errNotSitemap) {
			return nil, fmt.Errorf("%w: %w", errStoredNotSitemap, stored.err)
		}
		return nil, stored.err
	}
	for path, n := range waitNew {
		out = append(out, found{path, n.at})
	}
	slices.SortFunc(out, func(a, b found) int { return a.at - b.at })
	removed := make([]found, 0, len(waitOld))
	for path, o := range waitOld {
		removed = append(removed, found{path, o.at})
	}
	slices.SortFunc(removed, func(a, b found) int { return a.at - b.at })
	paths := make([]string, 0, len(out)+len(removed))
	for _, f := range append(out, removed...) {
		paths = append(paths, f.path)
	}
	return paths, nil
}

// errNotSitemap is what scanSitemap answers for a body that is not a
// flat sitemap object.
var errNotSitemap = errors.New("flat sitemap is not a JSON object")

// scanSitemap reads a flat sitemap object from r and calls fn with each
// path and its node as it is written, in order; node is valid only during
// the call. An empty body has none. It holds a node at a time, not the
// body (some 20 MB for 100,000 nodes), and scans the bytes rather than
// decoding them (encoding/json's tokenizer takes most of a second over
// such a body): it finds where each key and value begin and end, and
// refuses what is not an object of JSON values (errNotSitemap). An error
// of r or of fn ends it and is returned.
func scanSitemap(r io.Reader, fn func(path string, node []byte) error) error {
	return (&sitemapScanner{r: r, buf: make([]byte, 0, 64<<10)}).scan(fn)
}

// scanSitemapBytes is scanSitemap over a body in memory.
func scanSitemapBytes(body []byte, fn func(path string, node []byte) error) error {
	return (&sitemapScanner{buf: body, eof: true}).scan(fn)
}

// sitemapScanner is the state of scanSitemap: buf holds what was read of
// r and not yet scanned past.
type sitemapScanner struct {
	r   io.Reader
	buf []byte
	eof bool
}

// more reads more of r into the buffer, after dropping its first from
// bytes, and reports whether it got any.
func (s *sitemapScanner) more(from int) (bool, error) {
	if s.eof {
		return false, nil
	}
	n := copy(s.buf, s.buf[from:])
	s.buf = s.buf[:n]
	if n == cap(s.buf) {
		s.buf = slices.Grow(s.buf, n)
	}
	for {
		m, err := s.r.Read(s.buf[n:cap(s.buf)])
		s.buf = s.buf[:n+m]
		if err == io.EOF {
			s.eof = true
			return m > 0, nil
		}
		if err != nil {
			return false, fmt.Errorf("read sitemap: %w", err)
		}
		if m > 0 {
			return true, nil
		}
	}
}

func (s *sitemapScanner) scan(fn func(path string, node []byte) error) error {
	// The opening brace, or an empty body.
	i := 0
	for {
		if i = skipSpace(s.buf, i); i < len(s.buf) {
			break
		}
		got, err := s.more(i)
		if err != nil {
			return err
		}
		if !got {
			return nil // nothing but space
		}
		i = 0
	}
	if s.buf[i] != '{' {
		return errNotSitemap
	}
	i++
	first := true
	for {
		next, path, node, state := entry(s.buf, i, first)
		switch state {
		case entryMore:
			got, err := s.more(i)
			if err != nil {
				return err
			}
			if !got {
				return errNotSitemap
			}
			i = 0 // and scan the same entry again
			continue
		case entryBad:
			return errNotSitemap
		case entryEnd:
			// Nothing but space may follow.
			for i = next; ; i = 0 {
				if skipSpace(s.buf, i) != len(s.buf) {
					return errNotSitemap
				}
				got, err := s.more(len(s.buf))
				if err != nil {
					return err
				}
				if !got {
					return nil
				}
			}
		}
		if err := fn(path, node); err != nil {
			return err
		}
		i, first = next, false
	}
}

// What entry found.
const (
	entryOK   = iota // a path and its node
	entryEnd         // the closing brace
	entryMore        // the buffer ends before the entry does
	entryBad         // not JSON of a flat sitemap
)

// entry scans the entry of a flat sitemap that starts at b[i] (after the
// opening brace or a node): a comma unless first, the path and the node,
// or the closing brace. It returns where the next one starts.
func entry(b []byte, i int, first bool) (next int, path string, node []byte, state int) {
	if i = skipSpace(b, i); i >= len(b) {
		return 0, "", nil, entryMore
	}
	if b[i] == '}' {
		return i + 1, "", nil, entryEnd
	}
	if !first {
		if b[i] != ',' {
			return 0, "", nil, entryBad
		}
		if i = skipSpace(b, i+1); i >= len(b) {
			return 0, "", nil, entryMore
		}
	}
	if b[i] != '"' {
		return 0, "", nil, entryBad
	}
	end, ok := skipValue(b, i)
	switch {
	case end >= len(b):
		return 0, "", nil, entryMore
	case !ok:
		return 0, "", nil, entryBad
	}
	path = string(b[i+1 : end-1])
	if bytes.IndexByte(b[i:end], '\\') >= 0 {
		if err := json.Unmarshal(b[i:end], &path); err != nil {
			return 0, "", nil, entryBad
		}
	}
	if i = skipSpace(b, end); i >= len(b) {
		return 0, "", nil, entryMore
	}
	if b[i] != ':' {
		return 0, "", nil, entryBad
	}
	if i = skipSpace(b, i+1); i >= len(b) {
		return 0, "", nil, entryMore
	}
	// A value that reaches the end of the buffer may go on past it (a
	// number); a node is followed by a comma or the brace anyway.
	switch end, ok = skipValue(b, i); {
	case end >= len(b):
		return 0, "", nil, entryMore
	case !ok:
		return 0, "", nil, entryBad
	}
	return end, path, b[i:end], entryOK
}

// sitemapNodes reads a flat sitemap object in memory: its paths in order
// and each path's node as it is written (slices of body).
func sitemapNodes(body []byte) ([]string, map[string][]byte, error) {
	nodes := map[string][]byte{}
	var paths []string
	err := scanSitemapBytes(body, func(path string, node []byte) error {
		paths = append(paths, path)
		nodes[path] = node
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	return paths, nodes, nil
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// skipValue returns the end of the JSON value that starts at b[i], and
// false when it has none. Objects and arrays must balance and strings
// end; what lies between is left to the renderer, which wrote it.
func skipValue(b []byte, i int) (int, bool) {
	depth := 0
	for j := i; j < len(b); j++ {
		switch c := b[j]; c {
		case '"':
			for j++; j < len(b) && b[j] != '"'; j++ {
				if b[j] == '\\' {
					j++
				}
			}
			if j >= len(b) {
				return len(b), false
			}
			if depth == 0 {
				return j + 1, true
			}
		case '{', '[':
			depth++
		case '}', ']':
			if depth == 0 { // the end of a scalar, and of what holds it
				return j, j > i
			}
			if depth--; depth == 0 {
				return j + 1, true
			}
		case ',', ':', ' ', '\t', '\n', '\r':
			if depth == 0 {
				return j, j > i
			}
		}
	}
	return len(b), depth == 0 && len(b) > i
}

// sitemapPaths returns the keys of a flat sitemap object, in order.
func sitemapPaths(body []byte) ([]string, error) {
	var paths []string
	err := scanSitemapBytes(body, func(path string, _ []byte) error {
		paths = append(paths, path)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return paths, nil
}

// treeSource is a render.Source that reads each channel's pages once, and
// finds the nodes of the pages by path it is told of (render.SitemapMemo,
// wantPaths) in one walk of their sitemap. It serves the renders of one
// publish call, whose render number was taken before any of them read
// content.
//
// It also answers the item windows of list pages from the memberships the
// publisher holds (lists.go), when it holds the container's and its head
// reaches the window: the pages are then rendered from exactly what the
// membership saved with them records. A window past the head is read from
// Postgres.
type treeSource struct {
	render.Source
	render.SitemapMemo
	mu       sync.Mutex
	channels map[string]*treeRead[channelPages]
	// members are memberships by locale (lower case) and container
	// (lower case).
	members map[string]*membership
}

type channelPages struct {
	ch    content.Channel
	pages []source.PageVersion
}

// treeRead is one read, done once; the renders that ask for it meanwhile
// wait for it.
type treeRead[T any] struct {
	once sync.Once
	v    T
	err  error
}

func newTreeSource(src render.Source, members []membership) *treeSource {
	s := &treeSource{Source: src, channels: map[string]*treeRead[channelPages]{},
		members: map[string]*membership{}}
	for i := range members {
		if m := &members[i]; !m.gone {
			s.members[membersKey(m.locale, m.referenceName)] = m
		}
	}
	return s
}

func membersKey(locale, ref string) string {
	return strings.ToLower(locale) + "\x00" + strings.ToLower(ref)
}

// ContainerContents answers as the wrapped source does, taking the window
// from the container's membership when the source holds it and its head
// reaches the window.
func (s *treeSource) ContainerContents(ctx context.Context, inst content.Instance, locale string, fl source.Flavour, referenceName string, skip, take int) (source.ContainerContents, error) {
	m, ok := s.members[membersKey(locale, referenceName)]
	var ids []int64
	if ok && fl == source.FlavourFetch && skip >= 0 && take > 0 {
		ids, ok = m.window(skip, take)
	} else {
		ok = false
	}
	if !ok {
		return s.Source.ContainerContents(ctx, inst, locale, fl, referenceName, skip, take)
	}
	c, err := s.Source.ContainerContents(ctx, inst, locale, fl, referenceName, 0, 0)
	if err != nil {
		return c, err
	}
	c.Total = m.total
	c.ContentIDs = slices.Clone(ids)
	return c, nil
}

func treeReadOf[T any](mu *sync.Mutex, m map[string]*treeRead[T], key string) *treeRead[T] {
	mu.Lock()
	defer mu.Unlock()
	r := m[key]
	if r == nil {
		r = &treeRead[T]{}
		m[key] = r
	}
	return r
}

// ChannelPages answers as the wrapped source does, once per locale,
// flavour and channel. Renders only read the pages they are given.
func (s *treeSource) ChannelPages(ctx context.Context, inst content.Instance, locale string, fl source.Flavour, channel string) (content.Channel, []source.PageVersion, error) {
	r := treeReadOf(&s.mu, s.channels, locale+"\x00"+string(fl)+"\x00"+strings.ToLower(channel))
	r.once.Do(func() {
		r.v.ch, r.v.pages, r.err = s.Source.ChannelPages(ctx, inst, locale, fl, channel)
	})
	return r.v.ch, r.v.pages, r.err
}
