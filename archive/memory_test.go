package archive_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"sync"
	"testing"
	"time"

	"github.com/edgecms/edgecms/archive"
	"github.com/edgecms/edgecms/content"
	"github.com/edgecms/edgecms/media"
	"github.com/edgecms/edgecms/store"
)

// fillBig gives inst a container of n published items in two locales (a
// title and a 1,000-character body each) and one asset of assetBytes.
func fillBig(t *testing.T, s *site, inst content.Instance, n int, assetBytes int64) {
	t.Helper()
	ctx := context.Background()
	var token string
	var err error
	if _, token, err = s.cs.CreateToken(ctx, inst, "t", content.RoleFull); err != nil {
		t.Fatal(err)
	}
	s.manage(inst.Guid, token, "POST", "/models", map[string]any{"name": "Post", "kind": "content", "fields": []map[string]any{
		{"name": "title", "type": "text"}, {"name": "body", "type": "html"}}}, nil)
	s.manage(inst.Guid, token, "POST", "/containers", map[string]any{"referenceName": "posts", "model": "Post"}, nil)
	const insertItems = `WITH c AS (SELECT id, model_id FROM containers WHERE instance_id = $1)
		INSERT INTO items (instance_id, model_id, container_id, item_order)
		SELECT $1, c.model_id, c.id, g FROM c, generate_series(1, $2) g`
	const insertCopies = `INSERT INTO item_copies (content_id, instance_id, locale, state, version_id, fields, modified,
			published_version_id, published_fields, published_modified)
		SELECT i.content_id, $1, l.code, 2, v.n, f.fields, now(), v.n, f.fields, now()
		FROM items i CROSS JOIN (VALUES ('en-us'), ('fr-ca')) AS l(code)
		CROSS JOIN LATERAL (SELECT nextval('versions') AS n) v
		CROSS JOIN LATERAL (SELECT jsonb_build_object('title', l.code || ' post ' || i.content_id,
			'body', '<p>' || repeat(md5(i.content_id::text), 31) || '</p>') AS fields) f
		WHERE i.instance_id = $1`
	if _, err := s.db.ExecContext(ctx, insertItems, inst.ID, n); err != nil {
		t.Fatal(err)
	}
	if _, err := s.db.ExecContext(ctx, insertCopies, inst.ID); err != nil {
		t.Fatal(err)
	}
	// One asset: bytes that do not compress, put in the store as an
	// upload would.
	h := sha256.New()
	io.Copy(h, io.LimitReader(filler{}, assetBytes))
	sum := hex.EncodeToString(h.Sum(nil))
	key := media.AssetKey(inst.Guid, media.Name(sum, media.PNG))
	if _, err := s.objects.PutFrom(ctx, store.Object{Key: key, ContentType: "image/png", CacheControl: media.CacheControl},
		io.LimitReader(filler{}, assetBytes), assetBytes); err != nil {
		t.Fatal(err)
	}
	if _, err := s.db.ExecContext(ctx, `INSERT INTO assets (instance_id, file_name, content_type, size, width, height, sha256, object_key, modified_at)
		VALUES ($1, 'big.png', 'image/png', $2, 100, 100, $3, $4, now())`, inst.ID, assetBytes, sum, key); err != nil {
		t.Fatal(err)
	}
}

// filler reads as an endless run of bytes that do not compress.
type filler struct{}

func (filler) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = byte(i*131 + i>>8)
	}
	return len(p), nil
}

// peakHeap runs fn and returns the largest heap (live and not yet
// collected objects) sampled every millisecond while it ran, above the
// heap after a collection before it.
func peakHeap(fn func()) uint64 {
	runtime.GC()
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(sample)
	base := sample[0].Value.Uint64()
	var peak uint64
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
		tick := time.NewTicker(time.Millisecond)
		defer tick.Stop()
		for {
			metrics.Read(s)
			peak = max(peak, s[0].Value.Uint64())
			select {
			case <-done:
				return
			case <-tick.C:
			}
		}
	}()
	fn()
	close(done)
	wg.Wait()
	if peak < base {
		return 0
	}
	return peak - base
}

// TestMemoryIsFlat exports and imports an instance of 1,000 and of 10,000
// items (two locales, about 1.1 KB of fields each) with an asset of 1 and
// of 32 MiB, and checks that the heap at its peak grows far less than the
// instance: rows and bytes are streamed, never held. Memory is measured,
// not time; not parallel, so that no other test's heap is counted.
func TestMemoryIsFlat(t *testing.T) {
	type figure struct {
		archiveBytes           int64
		exportPeak, importPeak uint64
		exportTime, importTime time.Duration
	}
	run := func(items int, assetBytes int64) figure {
		ctx := context.Background()
		src := newSite(t)
		inst, err := src.cs.CreateInstance(ctx, fmt.Sprintf("big-%d", items), []content.Locale{{Code: "en-us", Name: "English"}, {Code: "fr-ca", Name: "Français"}})
		if err != nil {
			t.Fatal(err)
		}
		fillBig(t, src, inst, items, assetBytes)
		path := filepath.Join(t.TempDir(), "big.tar")
		f, err := os.Create(path)
		if err != nil {
			t.Fatal(err)
		}
		var fig figure
		start := time.Now()
		fig.exportPeak = peakHeap(func() {
			if _, err = archive.Export(ctx, src.db, src.objects, inst.Guid, f); err != nil {
				t.Fatal(err)
			}
		})
		fig.exportTime = time.Since(start)
		f.Close()
		fi, _ := os.Stat(path)
		fig.archiveBytes = fi.Size()

		dst := newSite(t)
		f, err = os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		var sum archive.Summary
		start = time.Now()
		fig.importPeak = peakHeap(func() {
			if sum, err = archive.Import(ctx, dst.db, dst.objects, f, archive.ImportOptions{}); err != nil {
				t.Fatal(err)
			}
		})
		fig.importTime = time.Since(start)
		if sum.Rows["item_copies"] != int64(2*items) || sum.AssetBytes != assetBytes {
			t.Fatalf("imported %+v, want %d item copies and %d asset bytes", sum, 2*items, assetBytes)
		}
		t.Logf("%6d items, %2d MiB asset: archive %5.1f MiB; export peak heap %5.1f MiB in %v; import peak heap %5.1f MiB in %v",
			items, assetBytes>>20, float64(fig.archiveBytes)/(1<<20), float64(fig.exportPeak)/(1<<20), fig.exportTime.Round(time.Millisecond),
			float64(fig.importPeak)/(1<<20), fig.importTime.Round(time.Millisecond))
		return fig
	}
	small := run(1000, 1<<20)
	big := run(10000, 32<<20)
	// The archive is about 10x larger; the peak heap may move by GC
	// pacing and a few MiB of buffers, not with the instance.
	const slack = 16 << 20
	if big.exportPeak > small.exportPeak+slack {
		t.Errorf("export peak heap %.1f MiB at 10,000 items vs %.1f MiB at 1,000: it grows with the instance",
			float64(big.exportPeak)/(1<<20), float64(small.exportPeak)/(1<<20))
	}
	if big.importPeak > small.importPeak+slack {
		t.Errorf("import peak heap %.1f MiB at 10,000 items vs %.1f MiB at 1,000: it grows with the instance",
			float64(big.importPeak)/(1<<20), float64(small.importPeak)/(1<<20))
	}
}
