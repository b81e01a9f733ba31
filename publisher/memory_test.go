package publisher

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"runtime"
	"runtime/metrics"
	"runtime/pprof"
	"testing"
	"time"

	"github.com/edgecms/edgecms/content"
	"github.com/edgecms/edgecms/render/source"
)

// peakHeap samples the heap's objects (live and not yet swept) every
// millisecond until stop is called, which returns the largest sample: what
// the process needed at its peak, garbage included, which is what its RSS
// follows.
//
// With -memory-profile, it also keeps a heap profile taken when the peak
// grew by a tenth (the live heap as of the last collection then), and
// writes the last one to the file named.
func peakHeap(name string) (stop func() uint64) {
	runtime.GC()
	done := make(chan struct{})
	res := make(chan uint64)
	go func() {
		s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
		var peak, profiled uint64
		var prof bytes.Buffer
		t := time.NewTicker(time.Millisecond)
		defer t.Stop()
		for {
			metrics.Read(s)
			peak = max(peak, s[0].Value.Uint64())
			if *memoryProfile != "" && peak > profiled+profiled/10 {
				profiled = peak
				prof.Reset()
				_ = pprof.Lookup("heap").WriteTo(&prof, 0)
			}
			select {
			case <-done:
				if *memoryProfile != "" {
					_ = os.WriteFile(fmt.Sprintf("%s/%s-%d.pprof", *memoryProfile, name, *benchPosts), prof.Bytes(), 0o644)
				}
				res <- peak
				return
			case <-t.C:
			}
		}
	}()
	return func() uint64 { close(done); return <-res }
}

var memoryProfile = flag.String("memory-profile", "", "folder BenchmarkMemory writes heap profiles to")

// BenchmarkMemory measures the peak heap of the work whose memory grows
// with the size of a container behind a dynamic page (-bench-posts):
// the background lane's sitemaps after a new post (build the channel's
// tree, render the flat and nested sitemaps, compare the flat one with
// the stored one, render the new page by path), the batch of an edit of
// the dynamic page, and a full republish.
// -memory-profile DIR writes a heap profile of each near its peak.
//
//	go test ./publisher -run X -bench Memory -benchtime 3x -args -bench-posts 100000
func BenchmarkMemory(b *testing.B) {
	s := newScaleSite(b, *benchPosts)
	e := s.e
	b.Run("sitemaps", func(b *testing.B) {
		var peak uint64
		for i := range b.N {
			st, err := e.cs.CreateItem(e.ctx, e.inst, "en-us", "posts", map[string]json.RawMessage{
				"Title": raw("New"), "Slug": raw(fmt.Sprintf("mem-%d-%d", b.N, i))})
			e.must(err)
			_, err = e.cs.ItemAction(e.ctx, e.inst, "en-us", st.ContentID, content.ActionPublish)
			e.must(err)
			e.must(s.p.drainEvents(e.ctx))
			stop := peakHeap("sitemaps")
			e.must(s.p.drainBacklog(e.ctx))
			peak = max(peak, stop())
		}
		b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MiB")
	})
	// An edit of the dynamic page: its batch hits the page by path of
	// every post, which the plan sweeps past Publisher.sweepAbove rather
	// than holds (the background lane's part is "sitemaps" again).
	b.Run("page", func(b *testing.B) {
		var blog int64
		e.must(e.db.GetContext(e.ctx, &blog, `SELECT page_id FROM pages WHERE dynamic_container_id IS NOT NULL`))
		var peak uint64
		for i := range b.N {
			title := fmt.Sprintf("Blog %d-%d", b.N, i)
			_, err := e.cs.SavePage(e.ctx, e.inst, "en-us", blog, content.PageInput{Title: &title})
			e.must(err)
			_, err = e.cs.PageAction(e.ctx, e.inst, "en-us", blog, content.ActionPublish)
			e.must(err)
			stop := peakHeap("page")
			e.must(s.p.drainEvents(e.ctx))
			peak = max(peak, stop())
			e.must(s.p.drainBacklog(e.ctx))
		}
		b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MiB")
	})
	// What a snapshot of the locale holds beside the field values it
	// counts against Config.SnapshotBytes, per item.
	b.Run("snapshot", func(b *testing.B) {
		var fields int64
		e.must(e.db.GetContext(e.ctx, &fields, `SELECT sum(length(published_fields::text)) FROM item_copies
			WHERE locale = 'en-us' AND published_version_id IS NOT NULL`))
		var held uint64
		for range b.N {
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			snap, err := source.LoadSnapshot(e.ctx, s.p.content, e.inst, "en-us", 1<<40)
			e.must(err)
			runtime.GC()
			runtime.ReadMemStats(&after)
			runtime.KeepAlive(snap)
			held = after.HeapAlloc - before.HeapAlloc
		}
		n := float64(len(s.posts))
		b.ReportMetric(float64(held)/n, "heap-B/item")
		b.ReportMetric(float64(fields)/n, "fields-B/item")
	})
	b.Run("republish", func(b *testing.B) {
		var peak uint64
		for range b.N {
			stop := peakHeap("republish")
			e.must(s.p.Republish(context.Background(), e.guid, nil))
			peak = max(peak, stop())
		}
		b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MiB")
	})
}
