package store_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"io"
	"os"
	"sync/atomic"
	"testing"

	"github.com/edgecms/edgecms/store"
	"github.com/edgecms/edgecms/store/miniotest"
	"github.com/edgecms/edgecms/store/storetest"
)

// minioServer is the MinIO server shared by this package's S3 tests and
// benchmarks.
var minioServer miniotest.Shared

func TestMain(m *testing.M) {
	code := m.Run()
	minioServer.Stop()
	os.Exit(code)
}

func TestFolderConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) store.Store { return openFolder(t, t.TempDir()) })
}

func TestMemoryConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) store.Store { return store.NewMemory(nil) })
}

func TestS3Conformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) store.Store { return openS3(t, newBucket()) })
}

func openFolder(t testing.TB, dir string) store.Store {
	t.Helper()
	s, err := store.Open(context.Background(), dir, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// openS3 opens bucket on the shared MinIO server, creating it.
func openS3(t testing.TB, bucket string) store.Store {
	t.Helper()
	endpoint, accessKey, secretKey := minioServer.Start(t)
	s, err := store.Open(context.Background(), s3Spec(endpoint, bucket),
		store.Options{AccessKey: accessKey, SecretKey: secretKey})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func s3Spec(endpoint, bucket string) string {
	return "s3://" + bucket + "?endpoint=" + endpoint + "&secure=false&create=true"
}

func newBucket() string {
	b := make([]byte, 8)
	rand.Read(b)
	return "test-" + hex.EncodeToString(b)
}

// TestFolderSharedByTwoStores runs the conformance suite on two stores over
// one folder, as two processes sharing it would (each store has its own
// lock files open, so flock serialises them as it would processes).
func TestFolderSharedByTwoStores(t *testing.T) {
	storetest.Run(t, func(t *testing.T) store.Store {
		dir := t.TempDir()
		return twoStores{openFolder(t, dir), openFolder(t, dir), new(atomic.Int64)}
	})
}

// twoStores alternates its calls between two stores over the same objects.
type twoStores struct {
	a, b store.Store
	n    *atomic.Int64
}

func (s twoStores) pick() store.Store {
	if s.n.Add(1)%2 == 0 {
		return s.a
	}
	return s.b
}

func (s twoStores) Get(ctx context.Context, key string) (store.Object, error) {
	return s.pick().Get(ctx, key)
}

func (s twoStores) Stat(ctx context.Context, key string) (store.Info, error) {
	return s.pick().Stat(ctx, key)
}

func (s twoStores) Put(ctx context.Context, o store.Object) (bool, error) {
	return s.pick().Put(ctx, o)
}

func (s twoStores) PutListed(ctx context.Context, o store.Object, listed *store.Info) (bool, error) {
	return s.pick().PutListed(ctx, o, listed)
}

func (s twoStores) PutFrom(ctx context.Context, o store.Object, r io.Reader, size int64) (bool, error) {
	return s.pick().PutFrom(ctx, o, r, size)
}

func (s twoStores) Open(ctx context.Context, key string) (io.ReadCloser, store.Info, error) {
	return s.pick().Open(ctx, key)
}

func (s twoStores) Delete(ctx context.Context, key string) error { return s.pick().Delete(ctx, key) }

func (s twoStores) List(ctx context.Context, prefix string, fn func(store.Info) error) error {
	return s.pick().List(ctx, prefix, fn)
}
