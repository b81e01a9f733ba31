package origin_test

import (
	"fmt"
	"testing"
)

// TestCopies checks the locale copies of an item and of a page, as the
// Studio's locale switcher reads them.
func TestCopies(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	w := h.populate()
	h.must(200, "PUT", fmt.Sprintf("/fr-ca/items/%d", w.article), map[string]any{"fields": map[string]string{"title": "Premier"}})
	h.must(200, "POST", fmt.Sprintf("/en-us/items/%d/publish", w.article), nil)
	var copies []struct {
		Locale             string `json:"locale"`
		State              int    `json:"state"`
		VersionID          int64  `json:"versionID"`
		PublishedVersionID *int64 `json:"publishedVersionID"`
	}
	h.must(200, "GET", fmt.Sprintf("/items/%d/copies", w.article), nil).decode(t, &copies)
	if len(copies) != 2 || copies[0].Locale != "en-us" || copies[0].State != 2 || copies[0].PublishedVersionID == nil ||
		copies[1].Locale != "fr-ca" || copies[1].State != 1 || copies[1].PublishedVersionID != nil {
		t.Errorf("item copies = %+v, want en-us published then fr-ca staging", copies)
	}
	h.must(200, "GET", fmt.Sprintf("/pages/%d/copies", w.parent), nil).decode(t, &copies)
	if len(copies) != 1 || copies[0].Locale != "en-us" {
		t.Errorf("page copies = %+v, want en-us", copies)
	}
	for _, path := range []string{"/items/999999/copies", "/pages/999999/copies", fmt.Sprintf("/items/%d/copies", w.parent*1000)} {
		checkProblem(t, "GET "+path, h.as("edit", request{"GET", path, nil}), 404, "")
	}
	checkProblem(t, "a bad id", h.as("edit", request{"GET", "/items/x/copies", nil}), 400, "id")
}
