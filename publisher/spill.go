package publisher

import (
	"bytes"
	"context"
	"crypto/sha256"
	"fmt"
	"hash"
	"io"
	"os"

	"github.com/edgecms/edgecms/fetch"
	"github.com/edgecms/edgecms/render"
	"github.com/edgecms/edgecms/store"
)

// spillBytes is the default of Publisher.spillBytes: the most of a
// sitemap's body a render holds in memory before moving it to a
// temporary file.
const spillBytes = 1 << 20

// spillBody receives a body as it is rendered (render.Renderer.RenderTo)
// and holds it in memory up to limit bytes, in a temporary file past
// that: a sitemap behind a dynamic page of N items (some 220 bytes a
// node) then costs a bounded buffer, not its whole body until written.
// It hashes the body as it comes, for the ETag.
type spillBody struct {
	dir   string // of the file; "" is os.TempDir()
	limit int
	buf   []byte
	file  *os.File
	size  int64
	hash  hash.Hash
}

func (s *spillBody) Write(b []byte) (int, error) {
	if s.file == nil && len(s.buf)+len(b) > s.limit {
		f, err := os.CreateTemp(s.dir, "edgecms-sitemap-*")
		if err != nil {
			return 0, fmt.Errorf("spill sitemap: %w", err)
		}
		s.file = f
		if _, err := f.Write(s.buf); err != nil {
			return 0, fmt.Errorf("spill sitemap: %w", err)
		}
		s.buf = nil
	}
	s.hash.Write(b)
	s.size += int64(len(b))
	if s.file == nil {
		s.buf = append(s.buf, b...)
		return len(b), nil
	}
	n, err := s.file.Write(b)
	if err != nil {
		err = fmt.Errorf("spill sitemap: %w", err)
	}
	return n, err
}

// renderSpilled renders req as renderOne does, the body held in memory up
// to p.spillBytes and in a temporary file past that (rendered.file). The
// caller drops the file (rendered.drop) once the object is written.
func (p *Publisher) renderSpilled(ctx context.Context, site render.Site, req fetch.Request, src render.Source) (*rendered, error) {
	if src == nil {
		src = p.reads
	}
	return p.renderWith(ctx, site, req, func(ctx context.Context) (render.Result, *spillBody, error) {
		body := &spillBody{dir: p.spillDir, limit: p.spillBytes, hash: sha256.New()}
		res, err := p.render.RenderTo(ctx, site, req, src, body)
		if err != nil && body.file != nil {
			dropFile(body.file)
			body.file = nil
		}
		return res, body, err
	})
}

// bodyReader reads the body of r, in memory or in its file.
func (r *rendered) bodyReader() io.Reader {
	if r.file != nil {
		return io.NewSectionReader(r.file, 0, r.size)
	}
	return bytes.NewReader(r.body)
}

// put writes r to st: the body from memory, or streamed from its file.
func (r *rendered) put(ctx context.Context, st store.Store, o store.Object, listed *store.Info, useListing bool) (bool, error) {
	if r.file == nil {
		o.Body = r.body
		if useListing {
			return st.PutListed(ctx, o, listed)
		}
		return st.Put(ctx, o)
	}
	// An S3 store sends a file as it is, from where it stands.
	if _, err := r.file.Seek(0, io.SeekStart); err != nil {
		return false, fmt.Errorf("read spilled %s: %w", r.key, err)
	}
	return st.PutFrom(ctx, o, r.file, r.size)
}

// drop removes r's temporary file, if it has one.
func (r *rendered) drop() {
	if r.file != nil {
		dropFile(r.file)
		r.file = nil
	}
}

func dropFile(f *os.File) {
	f.Close()
	os.Remove(f.Name())
}
