package store

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"net/url"
	"os"
	"strings"

	"github.com/edgecms/edgecms/problem"
	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"
	"github.com/minio/minio-go/v7/pkg/s3utils"
)

// An S3 store keeps each object as the S3 object of the same key, with its
// content type and cache control as the standard headers and the rest in
// user metadata:
//
//	x-amz-meta-content-hash    the hash behind the ETag (32 hex digits)
//	x-amz-meta-surrogate-key   the tags, joined by spaces
//
// S3 limits user metadata to 2 KiB, and an object that embeds many items
// has more tags than that. A tag list longer than maxInlineTags is first
// shortened: its tags' common prefix (the publisher's tags all start with
// "<guid>.<locale>.") goes apart, and the rest of each tag stays in
// x-amz-meta-surrogate-key:
//
//	x-amz-meta-surrogate-key-prefix   the prefix of every tag
//
// When that is still too long, the list goes to a companion object at
// .edgecms/tags/<key>/<hash of the list>, written before the object, and the
// object carries
//
//	x-amz-meta-surrogate-key-ref   the hash of the tag list
//
// instead. The companion is named by its content, so it never changes once
// written; a Put that replaces it removes the old one. S3 writes an object
// and its metadata atomically, so nothing else is needed for consistency.
type s3store struct {
	client   *minio.Client
	bucket   string
	listMeta bool // the server returns user metadata in listings (MinIO)
}

// User metadata names, without the x-amz-meta- prefix, as minio-go returns
// them.
const (
	metaHash    = "Content-Hash"
	metaTags    = "Surrogate-Key"
	metaPrefix  = "Surrogate-Key-Prefix"
	metaTagsRef = "Surrogate-Key-Ref"
)

const (
	// maxInlineTags is the longest tag list kept in user metadata, in bytes,
	// well under the 2 KiB limit of S3 and MinIO.
	maxInlineTags = 1024
	tagsPrefix    = ".edgecms/tags/"
	// getTries bounds the retries of a Get whose tag companion was replaced
	// while it read.
	getTries = 3
)

// errNoTags reports a missing tags companion.
var errNoTags = errors.New("the object's tag list is missing")

func openS3(ctx context.Context, sp spec, opts Options) (*s3store, error) {
	tr, err := minio.DefaultTransport(sp.secure)
	if err != nil {
		return nil, fmt.Errorf("open store s3://%s: %w", sp.bucket, err)
	}
	// The publisher puts from many goroutines: keep a connection per
	// goroutine alive instead of the default 16.
	tr.MaxIdleConns = 1024
	tr.MaxIdleConnsPerHost = 256
	lookup := minio.BucketLookupAuto
	if sp.pathStyle {
		lookup = minio.BucketLookupPath
	} else if sp.endpoint != awsEndpoint {
		lookup = minio.BucketLookupDNS
	}
	client, err := minio.New(sp.endpoint, &minio.Options{
		Creds:        credentials.NewStaticV4(opts.AccessKey, opts.SecretKey, opts.SessionToken),
		Secure:       sp.secure,
		Region:       sp.region,
		BucketLookup: lookup,
		Transport:    tr,
	})
	if err != nil {
		return nil, fmt.Errorf("open store s3://%s at %s: %w", sp.bucket, sp.endpoint, err)
	}
	s := &s3store{
		client:   client,
		bucket:   sp.bucket,
		listMeta: !s3utils.IsAmazonEndpoint(url.URL{Host: sp.endpoint}),
	}
	exists, err := client.BucketExists(ctx, sp.bucket)
	if err != nil {
		return nil, fmt.Errorf("open store s3://%s at %s: %w", sp.bucket, sp.endpoint, err)
	}
	if !exists {
		if !sp.create {
			return nil, fmt.Errorf("open store s3://%s at %s: the bucket does not exist (add create=true to the spec to create it)", sp.bucket, sp.endpoint)
		}
		err := client.MakeBucket(ctx, sp.bucket, minio.MakeBucketOptions{Region: sp.region})
		if err != nil && minio.ToErrorResponse(err).Code != "BucketAlreadyOwnedByYou" {
			return nil, fmt.Errorf("open store s3://%s at %s: create the bucket: %w", sp.bucket, sp.endpoint, err)
		}
	}
	return s, nil
}

func (s *s3store) core() minio.Core { return minio.Core{Client: s.client} }

// s3err turns a missing key into problem.NotFound and wraps anything else.
func s3err(op, key string, err error) error {
	if minio.ToErrorResponse(err).Code == "NoSuchKey" {
		return problem.NotFoundf("object %s not found", key)
	}
	return fmt.Errorf("%s %s: %w", op, key, err)
}

func (s *s3store) Get(ctx context.Context, key string) (Object, error) {
	if err := CheckKey(key); err != nil {
		return Object{}, err
	}
	for try := 1; ; try++ {
		o, err := s.get(ctx, key)
		if errors.Is(err, errNoTags) && try < getTries {
			continue // replaced while we read: read the new version
		}
		return o, err
	}
}

func (s *s3store) get(ctx context.Context, key string) (Object, error) {
	// One GET answers both body and metadata (the Client's lazy object
	// would send a second, conditional request, which fails when the object
	// is replaced in between).
	rc, oi, _, err := s.core().GetObject(ctx, s.bucket, key, minio.GetObjectOptions{})
	if err != nil {
		return Object{}, s3err("get", key, err)
	}
	defer rc.Close()
	body := make([]byte, oi.Size)
	if _, err := io.ReadFull(rc, body); err != nil {
		return Object{}, s3err("get", key, err)
	}
	info, err := s.info(ctx, oi)
	if err != nil {
		return Object{}, err
	}
	if info.ETag == "" { // not written by this package
		info.ETag = ETag(body)
	}
	return Object{
		Key:          key,
		Body:         body,
		ContentType:  info.ContentType,
		CacheControl: info.CacheControl,
		ETag:         info.ETag,
		Tags:         info.Tags,
		Modified:     info.Modified,
	}, nil
}

func (s *s3store) Stat(ctx context.Context, key string) (Info, error) {
	if err := CheckKey(key); err != nil {
		return Info{}, err
	}
	for try := 1; ; try++ {
		info, err := s.stat(ctx, key)
		if errors.Is(err, errNoTags) && try < getTries {
			continue
		}
		return info, err
	}
}

func (s *s3store) stat(ctx context.Context, key string) (Info, error) {
	oi, err := s.client.StatObject(ctx, s.bucket, key, minio.StatObjectOptions{})
	if err != nil {
		return Info{}, s3err("stat", key, err)
	}
	return s.info(ctx, oi)
}

// info converts an object's HEAD or GET answer, fetching a tags companion.
func (s *s3store) info(ctx context.Context, oi minio.ObjectInfo) (Info, error) {
	info := Info{
		Key:          oi.Key,
		Size:         oi.Size,
		ContentType:  oi.ContentType,
		CacheControl: oi.Metadata.Get("Cache-Control"),
		Tags:         inlineTags(oi.UserMetadata[metaPrefix], oi.UserMetadata[metaTags]),
		Modified:     second(oi.LastModified),
	}
	if h := oi.UserMetadata[metaHash]; h != "" {
		info.ETag = quoteHash(h)
	}
	if ref := oi.UserMetadata[metaTagsRef]; ref != "" {
		tags, err := s.tags(ctx, oi.Key, ref)
		if err != nil {
			return Info{}, err
		}
		info.Tags = tags
	}
	return info, nil
}

// shortTags splits sorted tags whose list is too long for user metadata into
// their common prefix and the rest of each, joined by spaces, and returns
// "", "" when that is too long too (or there is no prefix to share).
func shortTags(tags []string) (prefix, rest string) {
	if len(tags) < 2 {
		return "", ""
	}
	first, last := tags[0], tags[len(tags)-1]
	n := 0
	for n < len(first)-1 && n < len(last) && first[n] == last[n] {
		n++ // sorted: what the first and last share, all share
	}
	size := n
	for _, t := range tags {
		size += len(t) - n + 1
	}
	if n == 0 || size-1 > maxInlineTags {
		return "", ""
	}
	var b strings.Builder
	b.Grow(size - n)
	for i, t := range tags {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(t[n:])
	}
	return first[:n], b.String()
}

// inlineTags reads the tags kept in user metadata: the list, and the prefix
// of every tag when the list was shortened. It returns nil for none.
func inlineTags(prefix, list string) []string {
	tags := strings.Fields(list)
	if len(tags) == 0 {
		return nil
	}
	if prefix != "" {
		for i, t := range tags {
			tags[i] = prefix + t
		}
	}
	return tags
}

func tagsKey(key, ref string) string { return tagsPrefix + key + "/" + ref }

// tags reads the tags companion ref of key and checks it against its hash.
func (s *s3store) tags(ctx context.Context, key, ref string) ([]string, error) {
	rc, _, _, err := s.core().GetObject(ctx, s.bucket, tagsKey(key, ref), minio.GetObjectOptions{})
	if err == nil {
		defer rc.Close()
		var data []byte
		if data, err = io.ReadAll(rc); err == nil {
			if contentHash(data) != ref {
				return nil, fmt.Errorf("get %s: the tag list does not match its hash", key)
			}
			return strings.Fields(string(data)), nil
		}
	}
	if minio.ToErrorResponse(err).Code == "NoSuchKey" {
		return nil, fmt.Errorf("get %s: %w (put the object again)", key, errNoTags)
	}
	return nil, fmt.Errorf("get %s: tag list: %w", key, err)
}

func (s *s3store) Put(ctx context.Context, o Object) (bool, error) {
	o, err := prepare(o)
	if err != nil {
		return false, err
	}
	return s.put(ctx, o)
}

// PutListed implements Store: an object listed equal to o costs no
// request, one listed as absent one conditional PUT (If-None-Match: *,
// which S3 and MinIO honour), and only one listed otherwise, or created
// meanwhile, the HEAD of Put.
func (s *s3store) PutListed(ctx context.Context, o Object, listed *Info) (bool, error) {
	o, err := prepare(o)
	if err != nil {
		return false, err
	}
	if listedSame(listed, o) {
		return false, nil
	}
	if listed != nil {
		return s.put(ctx, o)
	}
	err = s.write(ctx, o, bytes.NewReader(o.Body), int64(len(o.Body)), "", true)
	if err == nil {
		return true, nil
	}
	switch minio.ToErrorResponse(err).Code {
	case minio.PreconditionFailed, minio.NotImplemented:
		// Written since the listing, or a store that does not take the
		// condition: compare as Put does.
		return s.put(ctx, o)
	}
	return false, fmt.Errorf("put %s: %w", o.Key, err)
}

// put writes a prepared object unless the store holds it already.
func (s *s3store) put(ctx context.Context, o Object) (bool, error) {
	return s.putBody(ctx, o, bytes.NewReader(o.Body), int64(len(o.Body)))
}

// PutFrom implements Store. The hash goes into the object's metadata, so
// it must be known before the upload: a file is read twice (hashed, then
// sent as sections that minio-go reads at their offsets, never whole),
// and any other reader is spooled to a temporary file first.
func (s *s3store) PutFrom(ctx context.Context, o Object, r io.Reader, size int64) (bool, error) {
	o, err := prepareStream(o, size)
	if err != nil {
		return false, err
	}
	var body io.Reader
	var n int64
	var sum string
	if f, ok := r.(*os.File); ok {
		off, err := f.Seek(0, io.SeekCurrent)
		if err != nil {
			return false, fmt.Errorf("put %s: %w", o.Key, err)
		}
		if n, sum, err = copyBody(io.Discard, io.NewSectionReader(f, off, math.MaxInt64-off), size); err != nil {
			return false, err
		}
		body = io.NewSectionReader(f, off, n)
	} else {
		f, fn, fsum, err := spool(r, size)
		if err != nil {
			return false, err
		}
		defer dropSpool(f)
		body, n, sum = f, fn, fsum
	}
	o.ETag = quoteHash(sum)
	return s.putBody(ctx, o, body, n)
}

// Open implements Store: one GET, whose body is read as the caller reads.
func (s *s3store) Open(ctx context.Context, key string) (io.ReadCloser, Info, error) {
	if err := CheckKey(key); err != nil {
		return nil, Info{}, err
	}
	for try := 1; ; try++ {
		rc, info, err := s.open(ctx, key)
		if errors.Is(err, errNoTags) && try < getTries {
			continue
		}
		return rc, info, err
	}
}

func (s *s3store) open(ctx context.Context, key string) (io.ReadCloser, Info, error) {
	rc, oi, _, err := s.core().GetObject(ctx, s.bucket, key, minio.GetObjectOptions{})
	if err != nil {
		return nil, Info{}, s3err("open", key, err)
	}
	info, err := s.info(ctx, oi)
	if err != nil {
		rc.Close()
		return nil, Info{}, err
	}
	if info.ETag == "" {
		// Not written by this package: its hash is the body's to tell.
		body, err := io.ReadAll(rc)
		rc.Close()
		if err != nil {
			return nil, Info{}, s3err("open", key, err)
		}
		info.ETag = ETag(body)
		return io.NopCloser(bytes.NewReader(body)), info, nil
	}
	return rc, info, nil
}

// putBody writes a prepared object whose body is read from body (size
// bytes) unless the store holds it already.
func (s *s3store) putBody(ctx context.Context, o Object, body io.Reader, size int64) (bool, error) {
	// The one HEAD that spares rewriting unchanged objects; the ref it
	// reads names the tags companion this Put replaces.
	var oldRef string
	oi, err := s.client.StatObject(ctx, s.bucket, o.Key, minio.StatObjectOptions{})
	switch {
	case err == nil:
		oldRef = oi.UserMetadata[metaTagsRef]
		cur, err := s.info(ctx, oi)
		if err == nil && sameSized(cur, o, size) {
			return false, nil
		}
		if err != nil && !errors.Is(err, errNoTags) {
			return false, err
		}
	case minio.ToErrorResponse(err).Code == "NoSuchKey":
	default:
		return false, s3err("put", o.Key, err)
	}
	if err := s.write(ctx, o, body, size, oldRef, false); err != nil {
		return false, fmt.Errorf("put %s: %w", o.Key, err)
	}
	return true, nil
}

// write PUTs a prepared object whose body is read from body (size
// bytes), after its tags companion when its tags do not fit in user metadata, and then removes the companion oldRef that it
// replaces. With ifAbsent the PUT carries If-None-Match: *. The error of
// the object's PUT is minio-go's, so that the caller can read its code.
func (s *s3store) write(ctx context.Context, o Object, body io.Reader, size int64, oldRef string, ifAbsent bool) error {
	meta := map[string]string{metaHash: strings.Trim(o.ETag, `"`)}
	tags := strings.Join(o.Tags, " ")
	ref := ""
	prefix, rest := shortTags(o.Tags)
	switch {
	case len(tags) > maxInlineTags && prefix != "":
		meta[metaPrefix], meta[metaTags] = prefix, rest
	case len(tags) > maxInlineTags:
		ref = contentHash([]byte(tags))
		meta[metaTagsRef] = ref
		if _, err := s.client.PutObject(ctx, s.bucket, tagsKey(o.Key, ref), strings.NewReader(tags), int64(len(tags)),
			minio.PutObjectOptions{ContentType: "text/plain; charset=utf-8"}); err != nil {
			return fmt.Errorf("tag list: %w", err)
		}
	case tags != "":
		meta[metaTags] = tags
	}
	opts := minio.PutObjectOptions{
		ContentType:  o.ContentType,
		CacheControl: o.CacheControl,
		UserMetadata: meta,
	}
	if ifAbsent {
		opts.SetMatchETagExcept("*")
	}
	if _, err := s.client.PutObject(ctx, s.bucket, o.Key, body, size, opts); err != nil {
		return err
	}
	if oldRef != "" && oldRef != ref {
		// Best effort: a leftover companion costs a few bytes, not
		// correctness.
		s.client.RemoveObject(ctx, s.bucket, tagsKey(o.Key, oldRef), minio.RemoveObjectOptions{})
	}
	return nil
}

func (s *s3store) Delete(ctx context.Context, key string) error {
	if err := CheckKey(key); err != nil {
		return err
	}
	oi, err := s.client.StatObject(ctx, s.bucket, key, minio.StatObjectOptions{})
	if err != nil {
		if minio.ToErrorResponse(err).Code == "NoSuchKey" {
			return nil
		}
		return fmt.Errorf("delete %s: %w", key, err)
	}
	if err := s.client.RemoveObject(ctx, s.bucket, key, minio.RemoveObjectOptions{}); err != nil {
		return fmt.Errorf("delete %s: %w", key, err)
	}
	if ref := oi.UserMetadata[metaTagsRef]; ref != "" {
		if err := s.client.RemoveObject(ctx, s.bucket, tagsKey(key, ref), minio.RemoveObjectOptions{}); err != nil {
			return fmt.Errorf("delete %s: tag list: %w", key, err)
		}
	}
	return nil
}

func (s *s3store) List(ctx context.Context, prefix string, fn func(Info) error) error {
	if !listable(prefix) {
		return nil
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel() // stops the listing goroutine when fn ends the walk early
	objects := s.client.ListObjects(ctx, s.bucket, minio.ListObjectsOptions{
		Prefix:       prefix,
		Recursive:    true,
		WithMetadata: s.listMeta,
	})
	for oi := range objects {
		if oi.Err != nil {
			return fmt.Errorf("list %s: %w", prefix, oi.Err)
		}
		if CheckKey(oi.Key) != nil {
			continue // tag lists, and objects this package did not write
		}
		info, ok := listedInfo(oi)
		if !ok {
			var err error
			info, err = s.Stat(ctx, oi.Key)
			if problem.Is(err, problem.NotFound) {
				continue // deleted since listed
			}
			if err != nil {
				return fmt.Errorf("list %s: %w", prefix, err)
			}
		}
		if err := fn(info); err != nil {
			return err
		}
	}
	return ctx.Err()
}

// listedInfo builds an object's Info from a listing with metadata (a MinIO
// extension), and reports false when the listing lacks some of it.
func listedInfo(oi minio.ObjectInfo) (Info, bool) {
	hash := oi.UserMetadataStripped[metaHash]
	contentType, ok := oi.UserMetadata["content-type"]
	if hash == "" || !ok || oi.UserMetadataStripped[metaTagsRef] != "" {
		return Info{}, false
	}
	info := Info{
		Key:          oi.Key,
		Size:         oi.Size,
		ContentType:  contentType,
		CacheControl: oi.UserMetadata["cache-control"],
		ETag:         quoteHash(hash),
		Tags:         inlineTags(oi.UserMetadataStripped[metaPrefix], oi.UserMetadataStripped[metaTags]),
		Modified:     second(oi.LastModified),
	}
	return info, true
}
