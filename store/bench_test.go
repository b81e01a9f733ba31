package store_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/edgecms/edgecms/store"
)

// bodies are Fetch API-like JSON objects of 2 to 8 KiB, the sizes the
// publisher writes most.
var bodies = func() [][]byte {
	r := rand.New(rand.NewPCG(1, 2))
	out := make([][]byte, 64)
	for i := range out {
		size := 2048 + r.IntN(6144)
		var b strings.Builder
		fmt.Fprintf(&b, `{"contentID":%d,"properties":{"state":2,"modified":"2026-01-02T03:04:05","versionID":%d,"referenceName":"posts","definitionName":"Post","itemOrder":%d},"fields":{"title":"Post %d","body":"`, i, i*7, i, i)
		for b.Len() < size-3 {
			b.WriteString("lorem ipsum dolor sit amet ")
		}
		b.WriteString(`"}}`)
		out[i] = []byte(b.String())
	}
	return out
}()

// benchPut puts new objects (distinct keys, so every Put writes) from
// several goroutines, as the publisher does.
func benchPut(b *testing.B, s store.Store) {
	ctx := context.Background()
	var n atomic.Int64
	var total int64
	for _, body := range bodies {
		total += int64(len(body))
	}
	b.SetBytes(total / int64(len(bodies)))
	b.SetParallelism(4)
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			i := n.Add(1)
			o := store.Object{
				Key:          fmt.Sprintf("g/bench/fetch/en-us/item/%d.json", i),
				Body:         bodies[i%int64(len(bodies))],
				ContentType:  "application/json; charset=utf-8",
				CacheControl: "public, max-age=60",
				Tags:         []string{fmt.Sprintf("bench.en-us.i:%d", i), "bench.en-us.c:posts"},
			}
			if written, err := s.Put(ctx, o); err != nil || !written {
				b.Fatalf("Put = %v, %v", written, err)
			}
		}
	})
	b.ReportMetric(float64(n.Load())/b.Elapsed().Seconds(), "puts/s")
}

// benchPutUnchanged puts objects that are already stored, as a republish
// of unchanged content does: one HEAD (or read) per Put and no write.
func benchPutUnchanged(b *testing.B, s store.Store) {
	ctx := context.Background()
	objs := make([]store.Object, len(bodies))
	for i, body := range bodies {
		objs[i] = store.Object{Key: fmt.Sprintf("g/bench/same/%d.json", i), Body: body, ContentType: "application/json"}
		if _, err := s.Put(ctx, objs[i]); err != nil {
			b.Fatal(err)
		}
	}
	var n atomic.Int64
	b.SetParallelism(4)
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			o := objs[n.Add(1)%int64(len(objs))]
			if written, err := s.Put(ctx, o); err != nil || written {
				b.Fatalf("Put = %v, %v", written, err)
			}
		}
	})
	b.ReportMetric(float64(n.Load())/b.Elapsed().Seconds(), "puts/s")
}

func BenchmarkS3Put(b *testing.B)              { benchPut(b, openS3(b, newBucket())) }
func BenchmarkS3PutUnchanged(b *testing.B)     { benchPutUnchanged(b, openS3(b, newBucket())) }
func BenchmarkFolderPut(b *testing.B)          { benchPut(b, openFolder(b, b.TempDir())) }
func BenchmarkFolderPutUnchanged(b *testing.B) { benchPutUnchanged(b, openFolder(b, b.TempDir())) }
