package origin_test

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"hash/crc32"
	"io"
	"log/slog"
	"mime/multipart"
	"net/http"
	"runtime"
	"testing"

	"github.com/edgecms/edgecms/content"
	"github.com/edgecms/edgecms/origin"
	"github.com/edgecms/edgecms/store"
	"github.com/edgecms/edgecms/store/miniotest"
)

// bigImage streams a PNG of size bytes: the signature and header of a
// 6000 x 4000 image, then filler (uploads read the header only). Nothing
// of it is held in memory.
func bigImage(size int64) io.Reader {
	ihdr := binary.BigEndian.AppendUint32(nil, 6000)
	ihdr = binary.BigEndian.AppendUint32(ihdr, 4000)
	ihdr = append(ihdr, 8, 2, 0, 0, 0)
	typed := append([]byte("IHDR"), ihdr...)
	head := append([]byte("\x89PNG\r\n\x1a\n"), binary.BigEndian.AppendUint32(nil, 13)...)
	head = append(append(head, typed...), binary.BigEndian.AppendUint32(nil, crc32.ChecksumIEEE(typed))...)
	return io.MultiReader(bytesReader(head), io.LimitReader(filler{}, size-int64(len(head))))
}

func bytesReader(b []byte) io.Reader { return io.LimitReader(&repeat{b: b}, int64(len(b))) }

type repeat struct {
	b []byte
	i int
}

func (r *repeat) Read(p []byte) (int, error) {
	n := copy(p, r.b[r.i:])
	r.i += n
	return n, nil
}

// filler reads as an endless run of bytes that do not compress.
type filler struct{}

func (filler) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = byte(i*131 + i>>8)
	}
	return len(p), nil
}

// TestUploadMemoryIsFlat uploads a 30 MB image through a real listener to a
// folder store and to MinIO, the body streamed by the client, and checks
// that the whole process allocated a small fraction of it meanwhile: the
// body goes to the store as it arrives, never held in memory. Memory is
// measured (runtime.MemStats.TotalAlloc, every allocation of the process
// during the upload), not time.
func TestUploadMemoryIsFlat(t *testing.T) {
	var minio miniotest.Shared
	t.Cleanup(minio.Stop)
	stores := map[string]func(t *testing.T) store.Store{
		"folder": func(t *testing.T) store.Store {
			s, err := store.Open(context.Background(), t.TempDir(), store.Options{})
			if err != nil {
				t.Fatal(err)
			}
			return s
		},
		"minio": func(t *testing.T) store.Store {
			endpoint, access, secret := minio.Start(t)
			s, err := store.Open(context.Background(), "s3://uploads?endpoint="+endpoint+"&secure=false&create=true",
				store.Options{AccessKey: access, SecretKey: secret})
			if err != nil {
				t.Fatal(err)
			}
			return s
		},
	}
	for _, name := range []string{"folder", "minio"} {
		t.Run(name, func(t *testing.T) {
			objects := stores[name](t)
			h := newHarness(t)
			h.srv = origin.New(origin.Config{Assets: objects}, h.store, slog.New(slog.NewTextHandler(testWriter{t}, nil)))
			url := "http://" + h.listen() + h.base() + "/assets"
			const size = 30 << 20
			want := sha256.New()
			io.Copy(want, bigImage(size))

			pr, pw := io.Pipe()
			mw := multipart.NewWriter(pw)
			go func() {
				part, err := mw.CreateFormFile("file", "big.png")
				if err == nil {
					_, err = io.Copy(part, bigImage(size))
				}
				if err == nil {
					err = mw.Close()
				}
				pw.CloseWithError(err)
			}()
			req, _ := http.NewRequest("POST", url, pr)
			req.Header.Set("Content-Type", mw.FormDataContentType())
			req.Header.Set("Authorization", "Bearer "+h.tokens[content.RoleEdit])

			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			res, err := http.DefaultClient.Do(req)
			runtime.ReadMemStats(&after)
			if err != nil {
				t.Fatal(err)
			}
			r := readResponse(t, "upload", res)
			if r.status != 201 {
				t.Fatalf("upload = %s", r)
			}
			var a content.Asset
			r.decode(t, &a)
			if a.Size != size || a.SHA256 != hex.EncodeToString(want.Sum(nil)) || a.Width != 6000 || a.Height != 4000 {
				t.Errorf("asset = %+v, want %d bytes 6000x4000", a, size)
			}
			rc, info, err := objects.Open(context.Background(), a.Key)
			if err != nil {
				t.Fatal(err)
			}
			got := sha256.New()
			n, _ := io.Copy(got, rc)
			rc.Close()
			if n != size || info.Size != size || hex.EncodeToString(got.Sum(nil)) != a.SHA256 {
				t.Errorf("stored %d bytes (info %d), hash %x; want the %d uploaded", n, info.Size, got.Sum(nil), size)
			}
			allocated := after.TotalAlloc - before.TotalAlloc
			t.Logf("%s: uploading %d MiB allocated %.1f MiB in the process (heap in use %.1f -> %.1f MiB)", name, size>>20,
				float64(allocated)/(1<<20), float64(before.HeapInuse)/(1<<20), float64(after.HeapInuse)/(1<<20))
			if allocated > size/4 {
				t.Errorf("uploading %d MiB allocated %s: the body is held in memory", size>>20, mib(allocated))
			}
		})
	}
}

func mib(n uint64) string { return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20)) }
