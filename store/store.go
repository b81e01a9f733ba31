// Package store keeps the objects edgecms serves without a database: the
// Fetch API JSON that the publisher pre-renders for every item, list, page
// and sitemap per locale (and, later, uploaded media). The publisher Puts,
// the edge Gets and caches in memory, and a CDN or a static web server may
// serve the same bodies directly.
//
// Two implementations sit behind one small interface: a local folder (the
// embedded default; bodies are plain files that nginx can serve) and any
// S3-compatible object store (MinIO when self-hosting, AWS S3, others).
// Open picks one from a spec string. An in-memory store serves unit tests of
// the code that uses a Store. All three pass the conformance suite in
// store/storetest.
//
// Every object carries a content hash as its ETag, and Put does not rewrite
// an object whose bytes and metadata are unchanged, so a full republish only
// touches what really changed (and CDN caches stay warm). Missing objects are
// problem.NotFound errors; bad keys and metadata are problem.Invalid errors.
// See README.md for the key charset and the folder layout.
package store

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"hash"
	"io"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/edgecms/edgecms/problem"
)

// Object is a stored object: its body and the metadata served with it.
type Object struct {
	// Key names the object; see CheckKey for the allowed form.
	Key string
	// Body is the object's content.
	Body []byte
	// ContentType is the media type served with the body. Put stores
	// "application/octet-stream" when it is empty.
	ContentType string
	// CacheControl is the Cache-Control header served with the body; it may
	// be empty.
	CacheControl string
	// ETag is the content hash of Body as an HTTP strong entity tag, quoted:
	// "\"<32 hex digits>\"" (see ETag). Put computes it and ignores the value
	// given.
	ETag string
	// Tags are the surrogate keys of the object: what it embeds, for example
	// "acme.en-us.i:12" (the publisher's <guid>.<locale>.<tag>), so that a
	// change to one item can find every object to purge. Put stores them
	// sorted and without duplicates; nil when none.
	Tags []string
	// Modified is when the object was last written, to the second (the
	// precision of HTTP dates). Put sets it and ignores the value given.
	Modified time.Time
}

// Info is an object's metadata, without its body.
type Info struct {
	Key          string
	Size         int64
	ContentType  string
	CacheControl string
	ETag         string
	Tags         []string
	Modified     time.Time
}

// Info returns the object's metadata.
func (o Object) Info() Info {
	return Info{
		Key:          o.Key,
		Size:         int64(len(o.Body)),
		ContentType:  o.ContentType,
		CacheControl: o.CacheControl,
		ETag:         o.ETag,
		Tags:         o.Tags,
		Modified:     o.Modified,
	}
}

// Store is where rendered objects live. Implementations are safe for
// concurrent use, including concurrent Puts of the same key, which end with
// one complete version: a Get never returns a body with another version's
// metadata.
type Store interface {
	// Get returns the object stored at key, or a problem.NotFound error.
	Get(ctx context.Context, key string) (Object, error)
	// Stat returns the metadata of the object at key, or a problem.NotFound
	// error.
	Stat(ctx context.Context, key string) (Info, error)
	// Put stores o, computing its ETag and setting Modified. When an object
	// with the same bytes and metadata (content type, cache control, tags)
	// is already stored it writes nothing and returns written == false.
	Put(ctx context.Context, o Object) (written bool, err error)
	// PutListed stores o as Put does, for a caller that listed the store
	// (List) shortly before: listed is the Info the listing gave for o.Key,
	// or nil when it had none. When listed shows o's bytes and metadata,
	// PutListed writes nothing and returns false without asking the store
	// again; otherwise it writes o as Put would, and may spare the read Put
	// makes first (an S3 store creates a key listed as absent with one
	// conditional PUT, no HEAD). A listing that went stale costs at most
	// that read, except that an object changed since it was listed equal to
	// o stays as it is: pass only listings that later writes of the key
	// would be known to have outdated.
	PutListed(ctx context.Context, o Object, listed *Info) (written bool, err error)
	// PutFrom stores an object whose body is read from r instead of
	// o.Body, which must be nil: size bytes, or everything up to EOF when
	// size is -1. A body of another length than size is a problem.Invalid
	// error and writes nothing. It hashes the body as it reads it and, as
	// Put, writes nothing when the same bytes and metadata are stored. The
	// body is never held whole in memory, so that media of any size can be
	// stored: a folder store writes it into its temporary file as it
	// reads; an S3 store sends a file (*os.File) as it is and spools any
	// other reader to a temporary file first, as the hash must be known
	// before the upload starts.
	PutFrom(ctx context.Context, o Object, r io.Reader, size int64) (written bool, err error)
	// Open returns the metadata of the object at key and a reader of its
	// body, which the caller must close, or a problem.NotFound error. The
	// body is read as the reader is, not held in memory, so that large
	// objects (media) are served as they are read. The reader gives one
	// whole version of the body, the one Info describes, even when the
	// object is replaced meanwhile.
	Open(ctx context.Context, key string) (io.ReadCloser, Info, error)
	// Delete removes the object at key; deleting a missing object is not an
	// error.
	Delete(ctx context.Context, key string) error
	// List calls fn with the metadata of every object whose key starts with
	// prefix (a plain string prefix, not necessarily a whole folder), in
	// byte order of the keys. It stops at and returns the first error fn
	// returns.
	List(ctx context.Context, prefix string, fn func(Info) error) error
}

// DefaultContentType is what Put stores when an object has no content type.
const DefaultContentType = "application/octet-stream"

// ETag returns the entity tag Put gives body: the first 128 bits of its
// SHA-256 in hex, quoted as an HTTP strong ETag.
func ETag(body []byte) string { return quoteHash(contentHash(body)) }

// contentHash is the unquoted hex hash that the implementations store.
func contentHash(body []byte) string {
	sum := sha256.Sum256(body)
	return hex.EncodeToString(sum[:16])
}

// hashSum is the unquoted hex hash of what h (a SHA-256) has read.
func hashSum(h hash.Hash) string { return hex.EncodeToString(h.Sum(nil)[:16]) }

// prepareStream checks an object given to PutFrom, as prepare does, but
// leaves its ETag to the reading of the body.
func prepareStream(o Object, size int64) (Object, error) {
	if o.Body != nil {
		return Object{}, problem.Invalidf("PutFrom of %s: the body comes from the reader; Body must be nil", printable(o.Key))
	}
	if size < -1 {
		return Object{}, problem.Invalidf("PutFrom of %s: size %d is neither a length nor -1", printable(o.Key), size)
	}
	o, err := prepare(o)
	o.ETag = ""
	return o, err
}

// copyBody copies the body PutFrom reads from r to w, hashing it, and
// checks its length against size (-1: any). It returns the length and the
// hash.
func copyBody(w io.Writer, r io.Reader, size int64) (int64, string, error) {
	h := sha256.New()
	src := r
	if size >= 0 {
		src = io.LimitReader(r, size+1)
	}
	n, err := io.Copy(io.MultiWriter(w, h), src)
	if err != nil {
		return n, "", err
	}
	if size >= 0 && n != size {
		return n, "", problem.Invalidf("the body is %s bytes long, not the %d announced", atLeast(n, size), size)
	}
	return n, hashSum(h), nil
}

// atLeast writes n, or "more than size" when the reading stopped past
// size.
func atLeast(n, size int64) string {
	if n > size {
		return fmt.Sprintf("more than %d", size)
	}
	return fmt.Sprint(n)
}

// spool copies the body of PutFrom to a temporary file, hashing it, and
// returns the file positioned at its start; the caller closes and
// removes it (see dropSpool).
func spool(r io.Reader, size int64) (*os.File, int64, string, error) {
	f, err := os.CreateTemp("", "edgecms-spool-*")
	if err != nil {
		return nil, 0, "", err
	}
	n, sum, err := copyBody(f, r, size)
	if err == nil {
		_, err = f.Seek(0, io.SeekStart)
	}
	if err != nil {
		dropSpool(f)
		return nil, 0, "", err
	}
	return f, n, sum, nil
}

func dropSpool(f *os.File) {
	f.Close()
	os.Remove(f.Name())
}

func quoteHash(h string) string { return `"` + h + `"` }

// MaxKeyLen is the longest key accepted, in bytes. It leaves room under the
// 1024-byte S3 limit for the store's own bookkeeping keys.
const MaxKeyLen = 512

// maxSegmentLen is the longest segment of a key, the usual file name limit.
const maxSegmentLen = 255

// CheckKey reports whether key can name an object, as a problem.Invalid
// error when it cannot. A key is 1 to MaxKeyLen bytes of segments separated
// by "/"; a segment is 1 to 255 bytes of ASCII letters, digits and
// ". _ ~ = , @ + -", and does not start with "." (so "." and ".." never
// occur, and names starting with "." stay free for the stores' own files).
// Such a key means the same thing as a file path under a folder, as an S3
// key and in a URL path, so no key can escape a folder store's root.
func CheckKey(key string) error {
	switch {
	case key == "":
		return problem.Invalidf("object key is empty")
	case len(key) > MaxKeyLen:
		return problem.Invalidf("object key is longer than %d bytes", MaxKeyLen)
	}
	start := 0
	for i := 0; i <= len(key); i++ {
		if i < len(key) && key[i] != '/' {
			if !keyByte(key[i]) {
				return problem.Invalidf("object key %q has a character outside [A-Za-z0-9._~=,@+-/]", printable(key))
			}
			continue
		}
		seg := key[start:i]
		switch {
		case seg == "":
			return problem.Invalidf("object key %q has an empty segment", key)
		case seg[0] == '.':
			return problem.Invalidf("object key %q has a segment starting with a dot", key)
		case len(seg) > maxSegmentLen:
			return problem.Invalidf("object key %q has a segment longer than %d bytes", key, maxSegmentLen)
		}
		start = i + 1
	}
	return nil
}

// listable reports whether some valid key could start with prefix; List
// returns nothing for the others (such as "../") without asking anyone.
func listable(prefix string) bool {
	if prefix == "" {
		return true
	}
	i := strings.LastIndexByte(prefix, '/')
	if i >= 0 && CheckKey(prefix[:i]) != nil {
		return false
	}
	last := prefix[i+1:]
	if last == "" {
		return true
	}
	return CheckKey(last) == nil
}

func keyByte(c byte) bool {
	switch {
	case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		return true
	}
	switch c {
	case '.', '_', '~', '=', ',', '@', '+', '-':
		return true
	}
	return false
}

// printable shortens a bad value for an error message, so that a huge one
// does not flood logs.
func printable(s string) string {
	if len(s) > 80 {
		return s[:80] + "..."
	}
	return s
}

// maxTagLen and maxHeaderValueLen bound metadata so that it always fits in
// HTTP headers.
const (
	maxTagLen         = 256
	maxHeaderValueLen = 1024
)

// prepare checks o and returns it in the form the stores keep: default
// content type, sorted unique tags, ETag computed, Modified cleared.
func prepare(o Object) (Object, error) {
	if err := CheckKey(o.Key); err != nil {
		return Object{}, err
	}
	if o.ContentType == "" {
		o.ContentType = DefaultContentType
	}
	if err := checkHeaderValue("content type", o.ContentType); err != nil {
		return Object{}, err
	}
	if err := checkHeaderValue("cache control", o.CacheControl); err != nil {
		return Object{}, err
	}
	o.Tags = normalTags(o.Tags)
	for _, tag := range o.Tags {
		if err := checkTag(tag); err != nil {
			return Object{}, err
		}
	}
	o.ETag = ETag(o.Body)
	o.Modified = time.Time{}
	return o, nil
}

// checkHeaderValue accepts printable ASCII, so that the value can travel in
// an HTTP header as is.
func checkHeaderValue(what, v string) error {
	if len(v) > maxHeaderValueLen {
		return problem.Invalidf("%s is longer than %d bytes", what, maxHeaderValueLen)
	}
	for i := 0; i < len(v); i++ {
		if v[i] < 0x20 || v[i] > 0x7e {
			return problem.Invalidf("%s %q has a character that is not printable ASCII", what, printable(v))
		}
	}
	return nil
}

// checkTag accepts 1 to 256 bytes of printable ASCII without spaces, so that
// tags can be joined with spaces as in a Surrogate-Key header.
func checkTag(tag string) error {
	if tag == "" || len(tag) > maxTagLen {
		return problem.Invalidf("tag %q must be 1 to %d bytes long", printable(tag), maxTagLen)
	}
	for i := 0; i < len(tag); i++ {
		if tag[i] <= 0x20 || tag[i] > 0x7e {
			return problem.Invalidf("tag %q has a space or a character that is not printable ASCII", printable(tag))
		}
	}
	return nil
}

// normalTags returns tags sorted without duplicates, or nil when empty. It
// does not modify its argument.
func normalTags(tags []string) []string {
	if len(tags) == 0 {
		return nil
	}
	out := slices.Clone(tags)
	slices.Sort(out)
	return slices.Compact(out)
}

// sameMeta reports whether a stored object's metadata equals that of a
// prepared object, which decides whether Put may skip the write.
func sameMeta(stored Info, o Object) bool {
	return sameSized(stored, o, int64(len(o.Body)))
}

// sameSized is sameMeta for an object whose body is size bytes long
// (PutFrom's, whose Body is nil).
func sameSized(stored Info, o Object, size int64) bool {
	return stored.ETag == o.ETag &&
		stored.Size == size &&
		stored.ContentType == o.ContentType &&
		stored.CacheControl == o.CacheControl &&
		slices.Equal(stored.Tags, o.Tags)
}

// listedSame reports whether a listed object has the bytes and metadata of
// a prepared object.
func listedSame(listed *Info, o Object) bool {
	return listed != nil && listed.Key == o.Key && sameMeta(*listed, o)
}

// second truncates t to the precision of Modified.
func second(t time.Time) time.Time { return t.Truncate(time.Second).UTC() }

// ETagOf returns the entity tag Put gives the bytes h has read, h being a
// SHA-256 (crypto/sha256.New): for a caller that hashes a body as it
// makes it, to PutFrom it later.
func ETagOf(h hash.Hash) string { return quoteHash(hashSum(h)) }
