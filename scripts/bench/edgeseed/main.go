// Command edgeseed writes a folder object store for the edge benchmark:
// fetch objects of one instance, as the publisher writes them, and the key
// manifest, so that an edge and a plain web server can serve the same
// files. It prints the API key to use.
//
//	go run ./scripts/bench/edgeseed -dir /tmp/store -items 1000 -size 1024
package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"strings"

	"github.com/edgecms/edgecms/delivery"
	"github.com/edgecms/edgecms/fetch"
	"github.com/edgecms/edgecms/store"
)

const cacheFetch = "public, max-age=0, s-maxage=30, stale-while-revalidate=60, stale-if-error=86400"

func main() {
	dir := flag.String("dir", "", "folder store to write (required)")
	guid := flag.String("guid", "bench", "instance guid")
	items := flag.Int("items", 1000, "number of items")
	size := flag.Int("size", 1024, "approximate body size in bytes")
	key := flag.String("key", "bench-fetch-key", "fetch API key to put in the manifest")
	flag.Parse()
	if err := run(*dir, *guid, *items, *size, *key); err != nil {
		fmt.Fprintln(os.Stderr, "edgeseed:", err)
		os.Exit(1)
	}
	fmt.Println(*key)
}

func run(dir, guid string, items, size int, key string) error {
	if dir == "" {
		return fmt.Errorf("-dir is required")
	}
	ctx := context.Background()
	st, err := store.Open(ctx, dir, store.Options{})
	if err != nil {
		return err
	}
	for id := 1; id <= items; id++ {
		req, err := fetch.Parse(fetch.Input{Path: fmt.Sprintf("/%s/fetch/en-us/item/%d", guid, id)})
		if err != nil {
			return err
		}
		body := fmt.Sprintf(`{"contentID":%d,"properties":{"state":2,"modified":"2026-05-01T10:00:00","versionID":1,"referenceName":"posts","definitionName":"Post","itemOrder":%d},"fields":{"title":"Post %d","body":%q},"seo":null}`,
			id, id, id, strings.Repeat("lorem ipsum ", max(size-200, 0)/12))
		tags := []string{fmt.Sprintf("%s.en-us.i:%d", guid, id), guid + ".en-us.c:posts"}
		if _, err := st.Put(ctx, store.Object{Key: req.Key(), Body: []byte(body), ContentType: "application/json; charset=utf-8", CacheControl: cacheFetch, Tags: tags}); err != nil {
			return err
		}
	}
	h := sha256.Sum256([]byte(key))
	m, _ := json.Marshal(delivery.Manifest{Guid: guid, Keys: []delivery.ManifestEntry{{Hash: hex.EncodeToString(h[:]), Type: "fetch", Enabled: true}}})
	_, err = st.Put(ctx, store.Object{Key: delivery.ManifestKey(guid), Body: m, ContentType: "application/json", CacheControl: "no-store"})
	return err
}
