package store_test

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/edgecms/edgecms/problem"
	"github.com/edgecms/edgecms/store"
	"github.com/edgecms/edgecms/store/storetest"
	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"
)

// TestS3ConformanceWithoutListMetadata runs the suite with listings as AWS
// answers them (no metadata), so that List falls back to a HEAD per object.
func TestS3ConformanceWithoutListMetadata(t *testing.T) {
	storetest.Run(t, func(t *testing.T) store.Store {
		return store.WithoutListMetadata(openS3(t, newBucket()))
	})
}

// rawClient is a plain minio-go client on the shared server, to look at
// what the store wrote.
func rawClient(t *testing.T) *minio.Client {
	t.Helper()
	endpoint, accessKey, secretKey := minioServer.Start(t)
	c, err := minio.New(endpoint, &minio.Options{Creds: credentials.NewStaticV4(accessKey, secretKey, ""), BucketLookup: minio.BucketLookupPath})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestS3Metadata checks the S3 form of an object: exact size, standard
// headers, and the hash and tags in x-amz-meta- user metadata.
func TestS3Metadata(t *testing.T) {
	ctx := context.Background()
	bucket := newBucket()
	s := openS3(t, bucket)
	body := []byte(`{"contentID":12,"fields":{}}`)
	o := store.Object{Key: "g/abc/item/12.json", Body: body, ContentType: "application/json", CacheControl: "public, max-age=60", Tags: []string{"acme.en-us.i:12", "acme.en-us.c:posts"}}
	if _, err := s.Put(ctx, o); err != nil {
		t.Fatal(err)
	}
	oi, err := rawClient(t).StatObject(ctx, bucket, o.Key, minio.StatObjectOptions{})
	if err != nil {
		t.Fatal(err)
	}
	got := fmt.Sprintf("size=%d type=%s cache=%s hash=%s tags=%s", oi.Size, oi.ContentType, oi.Metadata.Get("Cache-Control"),
		oi.Metadata.Get("X-Amz-Meta-Content-Hash"), oi.Metadata.Get("X-Amz-Meta-Surrogate-Key"))
	want := fmt.Sprintf("size=%d type=application/json cache=public, max-age=60 hash=%s tags=acme.en-us.c:posts acme.en-us.i:12",
		len(body), strings.Trim(store.ETag(body), `"`))
	if got != want {
		t.Errorf("stored object: %s\nwant %s", got, want)
	}
}

// TestS3ManyTags checks the companion object that holds tag lists too long
// for S3 user metadata, and that it goes away with the object.
func TestS3ManyTags(t *testing.T) {
	ctx := context.Background()
	bucket := newBucket()
	s := openS3(t, bucket)
	raw := rawClient(t)
	companions := func() []string {
		var out []string
		for oi := range raw.ListObjects(ctx, bucket, minio.ListObjectsOptions{Prefix: ".edgecms/", Recursive: true}) {
			if oi.Err != nil {
				t.Fatal(oi.Err)
			}
			out = append(out, oi.Key)
		}
		return out
	}
	var many []string
	for i := range 300 {
		many = append(many, fmt.Sprintf("acme.fr-ca.i:%d", 100000+i))
	}
	slices.Sort(many) // as the store keeps them
	o := store.Object{Key: "list/big.json", Body: []byte("[]"), Tags: many}
	if _, err := s.Put(ctx, o); err != nil {
		t.Fatal(err)
	}
	if got := companions(); len(got) != 1 || !strings.HasPrefix(got[0], ".edgecms/tags/list/big.json/") {
		t.Fatalf("companions after a Put with many tags = %v, want one under .edgecms/tags/list/big.json/", got)
	}
	// Other long tags: a new companion replaces the old one.
	o.Tags = many[1:]
	if _, err := s.Put(ctx, o); err != nil {
		t.Fatal(err)
	}
	if got := companions(); len(got) != 1 {
		t.Errorf("companions after changing the tags = %v, want one", got)
	}
	if got, err := s.Get(ctx, o.Key); err != nil || len(got.Tags) != len(many)-1 {
		t.Errorf("Get = %d tags, %v; want %d", len(got.Tags), err, len(many)-1)
	}
	// A lost companion is an error, repaired by putting the object again.
	for _, key := range companions() {
		raw.RemoveObject(ctx, bucket, key, minio.RemoveObjectOptions{})
	}
	if _, err := s.Get(ctx, o.Key); err == nil || problem.Is(err, problem.NotFound) {
		t.Errorf("Get without its tag list: error = %v, want an internal error", err)
	}
	if written, err := s.Put(ctx, o); err != nil || !written {
		t.Errorf("Put repairing the tag list = %v, %v; want written", written, err)
	}
	if got, err := s.Get(ctx, o.Key); err != nil || !slices.Equal(got.Tags, many[1:]) {
		t.Errorf("Get after repair = %d tags, %v", len(got.Tags), err)
	}
	// Few tags: back in metadata.
	o.Tags = many[:2]
	if _, err := s.Put(ctx, o); err != nil {
		t.Fatal(err)
	}
	if got := companions(); len(got) != 0 {
		t.Errorf("companions with few tags = %v, want none", got)
	}
	o.Tags = many
	s.Put(ctx, o)
	if err := s.Delete(ctx, o.Key); err != nil {
		t.Fatal(err)
	}
	if got := companions(); len(got) != 0 {
		t.Errorf("companions after Delete = %v, want none", got)
	}
}

// TestS3ShortenedTags checks that a tag list too long for user metadata
// whose tags share a prefix stays in metadata, shortened, without a
// companion.
func TestS3ShortenedTags(t *testing.T) {
	ctx := context.Background()
	bucket := newBucket()
	s := openS3(t, bucket)
	raw := rawClient(t)
	var tags []string
	for i := range 80 {
		tags = append(tags, fmt.Sprintf("acme.en-us.i:%d", 100000+i))
	}
	o := store.Object{Key: "list/short.json", Body: []byte("[]"), Tags: tags}
	if len(strings.Join(tags, " ")) <= 1024 {
		t.Fatal("the test's tags fit in metadata as they are")
	}
	if _, err := s.Put(ctx, o); err != nil {
		t.Fatal(err)
	}
	for oi := range raw.ListObjects(ctx, bucket, minio.ListObjectsOptions{Prefix: ".edgecms/", Recursive: true}) {
		t.Errorf("companion %s (err %v), want none", oi.Key, oi.Err)
	}
	oi, err := raw.StatObject(ctx, bucket, o.Key, minio.StatObjectOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if p, list := oi.Metadata.Get("X-Amz-Meta-Surrogate-Key-Prefix"), oi.Metadata.Get("X-Amz-Meta-Surrogate-Key"); p != "acme.en-us.i:1000" ||
		!strings.HasPrefix(list, "00 01 02 ") {
		t.Errorf("metadata: prefix %q, list %q", p, list)
	}
	if got, err := s.Get(ctx, o.Key); err != nil || !slices.Equal(got.Tags, tags) {
		t.Errorf("Get = %v, %v; want %v", got.Tags, err, tags)
	}
}

// TestS3ForeignObjects checks objects this package did not write: Get
// computes their ETag, and List skips keys a Store cannot name.
func TestS3ForeignObjects(t *testing.T) {
	ctx := context.Background()
	bucket := newBucket()
	s := openS3(t, bucket)
	raw := rawClient(t)
	for _, key := range []string{"plain.txt", "with space.txt", "ünïcode"} {
		if _, err := raw.PutObject(ctx, bucket, key, bytes.NewReader([]byte("hi")), 2, minio.PutObjectOptions{ContentType: "text/plain"}); err != nil {
			t.Fatal(err)
		}
	}
	got, err := s.Get(ctx, "plain.txt")
	if err != nil || got.ETag != store.ETag([]byte("hi")) || got.ContentType != "text/plain" {
		t.Errorf("Get(plain.txt) = etag %s type %q, %v", got.ETag, got.ContentType, err)
	}
	var keys []string
	if err := s.List(ctx, "", func(i store.Info) error { keys = append(keys, i.Key); return nil }); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(keys, []string{"plain.txt"}) {
		t.Errorf("List = %v, want [plain.txt]", keys)
	}
	// Not written by us: Put writes it (no content hash to compare).
	if written, err := s.Put(ctx, store.Object{Key: "plain.txt", Body: []byte("hi"), ContentType: "text/plain"}); err != nil || !written {
		t.Errorf("Put over a foreign object = %v, %v; want written", written, err)
	}
}

func TestS3OpenErrors(t *testing.T) {
	ctx := context.Background()
	endpoint, accessKey, secretKey := minioServer.Start(t)
	tests := []struct {
		name    string
		spec    string
		opts    store.Options
		wantErr string
	}{
		{"missing bucket", "s3://" + newBucket() + "?endpoint=" + endpoint + "&secure=false",
			store.Options{AccessKey: accessKey, SecretKey: secretKey}, "create=true"},
		{"wrong secret", s3Spec(endpoint, newBucket()),
			store.Options{AccessKey: accessKey, SecretKey: "wrong-secret"}, "signature"},
		{"no credentials", s3Spec(endpoint, newBucket()), store.Options{}, "Access Denied"},
	}
	for _, tc := range tests {
		_, err := store.Open(ctx, tc.spec, tc.opts)
		if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
			t.Errorf("%s: Open error = %v, want one containing %q", tc.name, err, tc.wantErr)
		}
	}
	// create=true on an existing bucket is fine.
	bucket := newBucket()
	openS3(t, bucket)
	openS3(t, bucket)
}
