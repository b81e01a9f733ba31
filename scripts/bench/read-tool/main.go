// Command read-tool prepares and measures the read and write paths at
// size for scripts/bench/read-origin.sh.
//
//	read-tool seed -database-url URL -guid bench -items 100000
//	    creates (migrating the database) an instance with a container of
//	    that many published posts in en-us and fr-ca (title, a ~500-character
//	    HTML body, a number, a slug: the records of issue 18's PocketBase
//	    comparison), written by SQL in bulk, then ANALYZEs; prints the
//	    instance's credentials as JSON
//	read-tool create -database-url URL -guid bench -seconds 10
//	    creates posts with content.Store.CreateItem, one after the other, for
//	    that long; prints the rate and the CPU (this process and its Postgres
//	    backend) per item
//	read-tool render-many -database-url URL -guid bench -chunk 1000
//	    renders every post (fetch, en-us, depth 1) with render.RenderMany in
//	    chunks, as a full republish renders from Postgres, and a sample one
//	    by one with Render; prints the time and the CPU (this process and its
//	    Postgres backend) per item of each
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"strings"
	"syscall"
	"time"

	"github.com/jmoiron/sqlx"
	_ "github.com/lib/pq"

	"github.com/edgecms/edgecms/content"
	"github.com/edgecms/edgecms/fetch"
	"github.com/edgecms/edgecms/render"
	"github.com/edgecms/edgecms/schema"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: read-tool seed|render-many [flags]")
		os.Exit(2)
	}
	fs := flag.NewFlagSet(os.Args[1], flag.ExitOnError)
	dbURL := fs.String("database-url", "postgres://postgres@127.0.0.1:5432/edgecms_bench?sslmode=disable", "Postgres")
	guid := fs.String("guid", "bench", "instance guid")
	items := fs.Int("items", 1000, "seed: number of posts")
	chunk := fs.Int("chunk", 1000, "render-many: requests per RenderMany call")
	sample := fs.Int("sample", 2000, "render-many: posts rendered one by one")
	seconds := fs.Duration("seconds", 10*time.Second, "create: how long to create posts")
	fs.Parse(os.Args[2:])
	ctx := context.Background()
	db, err := sqlx.Open("postgres", *dbURL)
	if err == nil {
		db.SetMaxOpenConns(1) // one backend, whose CPU render-many reads
		err = db.PingContext(ctx)
	}
	if err != nil {
		fail(err)
	}
	defer db.Close()
	switch os.Args[1] {
	case "seed":
		err = seed(ctx, db, *guid, *items)
	case "render-many":
		err = renderMany(ctx, db, *guid, *chunk, *sample)
	case "create":
		err = create(ctx, db, *guid, *seconds)
	default:
		err = fmt.Errorf("unknown command %q", os.Args[1])
	}
	if err != nil {
		fail(err)
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "read-tool:", err)
	os.Exit(1)
}

// body is a post's HTML body, about 500 characters.
var body = "<p>" + strings.Repeat("Lorem ipsum dolor sit amet, consectetur adipiscing elit. ", 8) + "</p>"

func seed(ctx context.Context, db *sqlx.DB, guid string, items int) error {
	if _, err := schema.Migrate(ctx, db); err != nil {
		return err
	}
	s := content.NewStore(db)
	inst, err := s.CreateInstance(ctx, guid, []content.Locale{{Code: "en-us", Name: "English"}, {Code: "fr-ca", Name: "Français"}})
	if err != nil {
		return err
	}
	if _, err := s.CreateModel(ctx, inst, content.Model{Name: "Post", Kind: "content", Fields: content.Fields{
		{Name: "title", Type: content.TypeText, Required: true}, {Name: "body", Type: content.TypeHTML},
		{Name: "number", Type: content.TypeNumber}, {Name: "slug", Type: content.TypeText},
	}}); err != nil {
		return err
	}
	if _, err := s.CreateContainer(ctx, inst, "posts", "Post"); err != nil {
		return err
	}
	if _, err := db.ExecContext(ctx, `
		WITH c AS (SELECT id, model_id FROM containers WHERE instance_id = $1 AND reference_name = 'posts'),
		ins AS (INSERT INTO items (instance_id, model_id, container_id, item_order)
			SELECT $1, c.model_id, c.id, g FROM c, generate_series(1, $2) g RETURNING content_id, item_order)
		INSERT INTO item_copies (content_id, instance_id, locale, state, version_id, fields, modified,
			published_version_id, published_fields, published_modified)
		SELECT content_id, $1, l, 2, 1, v, now(), 1, v, now()
		FROM ins, unnest(ARRAY['en-us', 'fr-ca']) l,
			LATERAL (SELECT jsonb_build_object('title', 'Post ' || item_order || ' ' || l, 'body', $3::text,
				'number', item_order, 'slug', 'post-' || item_order) AS v) AS x`, inst.ID, items, body); err != nil {
		return err
	}
	if _, err := db.ExecContext(ctx, `ANALYZE`); err != nil {
		return err
	}
	_, token, err := s.CreateToken(ctx, inst, "bench", content.RoleFull)
	if err != nil {
		return err
	}
	name := "bench"
	_, fetchKey, err := s.CreateAPIKey(ctx, inst, content.APIKeyInput{Name: &name, Type: "fetch"})
	if err != nil {
		return err
	}
	_, previewKey, err := s.CreateAPIKey(ctx, inst, content.APIKeyInput{Name: &name, Type: "preview"})
	if err != nil {
		return err
	}
	var first int64
	if err := db.GetContext(ctx, &first, `SELECT min(content_id) FROM items WHERE instance_id = $1`, inst.ID); err != nil {
		return err
	}
	return json.NewEncoder(os.Stdout).Encode(map[string]any{"guid": guid, "managementToken": token,
		"fetchKey": fetchKey, "previewKey": previewKey, "firstItem": first, "items": items})
}

// cpu is the CPU time of this process and of the Postgres backend pid.
func cpu(pid int) (self, backend time.Duration, err error) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, 0, err
	}
	self = time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, 0, fmt.Errorf("the backend's CPU (is Postgres on this machine?): %w", err)
	}
	// The fields after the command name (which may hold spaces).
	f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+2:]))
	var ut, st int64
	fmt.Sscan(f[11], &ut)
	fmt.Sscan(f[12], &st)
	const tick = 100 // USER_HZ on Linux
	return self, time.Duration(ut+st) * time.Second / tick, nil
}

func renderMany(ctx context.Context, db *sqlx.DB, guid string, chunk, sample int) error {
	s := content.NewStore(db)
	site, err := render.LoadSite(ctx, s, guid)
	if err != nil {
		return err
	}
	var ids []int64
	if err := db.SelectContext(ctx, &ids, `SELECT content_id FROM item_copies WHERE instance_id = $1 AND locale = 'en-us'
		AND published_version_id IS NOT NULL ORDER BY content_id`, site.Instance.ID); err != nil {
		return err
	}
	var pid int
	if err := db.GetContext(ctx, &pid, `SELECT pg_backend_pid()`); err != nil {
		return err
	}
	r := render.New(s)
	defer r.Close()
	reqs := make([]fetch.Request, len(ids))
	for i, id := range ids {
		if reqs[i], err = fetch.Parse(fetch.Input{Path: fmt.Sprintf("/%s/fetch/en-us/item/%d", guid, id)}); err != nil {
			return err
		}
	}
	measure := func(what string, n int, run func() error) error {
		self0, pg0, err := cpu(pid)
		if err != nil {
			return err
		}
		start := time.Now()
		if err := run(); err != nil {
			return err
		}
		wall := time.Since(start)
		self1, pg1, err := cpu(pid)
		if err != nil {
			return err
		}
		per := func(d time.Duration) float64 { return float64(d.Microseconds()) / float64(n) }
		fmt.Printf("%-34s %7d items  %7.1f us/item wall  %6.1f us/item CPU (go %5.1f + postgres %5.1f)\n", what, n,
			per(wall), per(self1-self0+pg1-pg0), per(self1-self0), per(pg1-pg0))
		return nil
	}
	// Warm the statements and caches.
	if _, errs := r.RenderMany(ctx, site, reqs[:min(len(reqs), 100)]); errors.Join(errs...) != nil {
		return errors.Join(errs...)
	}
	if err := measure(fmt.Sprintf("RenderMany, chunks of %d", chunk), len(reqs), func() error {
		for i := 0; i < len(reqs); i += chunk {
			if _, errs := r.RenderMany(ctx, site, reqs[i:min(i+chunk, len(reqs))]); errors.Join(errs...) != nil {
				return errors.Join(errs...)
			}
		}
		return nil
	}); err != nil {
		return err
	}
	n := min(sample, len(reqs))
	step := max(len(reqs)/n, 1)
	return measure("Render, one by one", n, func() error {
		for i := 0; i < n; i++ {
			if _, err := r.Render(ctx, site, reqs[(i*step)%len(reqs)]); err != nil {
				return err
			}
		}
		return nil
	})
}

func create(ctx context.Context, db *sqlx.DB, guid string, d time.Duration) error {
	s := content.NewStore(db)
	inst, err := s.Instance(ctx, guid)
	if err != nil {
		return err
	}
	var pid int
	if err := db.GetContext(ctx, &pid, `SELECT pg_backend_pid()`); err != nil {
		return err
	}
	fields := map[string]json.RawMessage{"title": json.RawMessage(`"New post"`), "body": json.RawMessage(`"` + body + `"`),
		"number": json.RawMessage(`7`), "slug": json.RawMessage(`"new-post"`)}
	self0, pg0, err := cpu(pid)
	if err != nil {
		return err
	}
	n := 0
	start := time.Now()
	for time.Since(start) < d {
		if _, err := s.CreateItem(ctx, inst, "en-us", "posts", fields); err != nil {
			return err
		}
		n++
	}
	wall := time.Since(start)
	self1, pg1, err := cpu(pid)
	if err != nil {
		return err
	}
	per := func(d time.Duration) float64 { return float64(d.Microseconds()) / float64(n) }
	fmt.Printf("CreateItem %6d items  %6.0f items/s  %6.0f us/item CPU (go %5.0f + postgres %5.0f)\n", n,
		float64(n)/wall.Seconds(), per(self1-self0+pg1-pg0), per(self1-self0), per(pg1-pg0))
	return nil
}
