package source

import (
	"testing"
	"time"

	"github.com/edgecms/edgecms/content"
	"github.com/edgecms/edgecms/internal/contenttest"
	"github.com/edgecms/edgecms/problem"
)

func ptr[T any](v T) *T { return &v }

// TestGalleryAndRedirectionReads checks the Reader's reads of galleries
// and redirections: an instance reads only its own, and the redirections'
// version is to the millisecond and moves with each change.
func TestGalleryAndRedirectionReads(t *testing.T) {
	t.Parallel()
	f := contenttest.New(t)
	r := NewReader(f.S)
	defer r.Close()

	g, err := f.S.CreateGallery(f.Ctx, f.Inst, content.GalleryInput{Name: ptr("Roastery")})
	if err != nil {
		t.Fatal(err)
	}
	read, err := r.Gallery(f.Ctx, f.Inst, g.ID)
	if err != nil || read.Name != "Roastery" || read.Count != 0 || len(read.Media) != 0 {
		t.Errorf("Gallery = %+v, %v; want Roastery, empty", read, err)
	}
	other, err := f.S.CreateInstance(f.Ctx, "other", []content.Locale{{Code: "en-us", Name: "English"}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.Gallery(f.Ctx, other, g.ID); !problem.Is(err, problem.NotFound) {
		t.Errorf("Gallery(another instance's) = %v, want NotFound", err)
	}

	before, err := r.Redirections(f.Ctx, f.Inst)
	if err != nil || len(before.Items) != 0 || before.Changed.IsZero() || before.Changed.Nanosecond()%int(time.Millisecond) != 0 {
		t.Fatalf("Redirections of a new instance = %+v, %v; want none, changed when created (ms)", before, err)
	}
	if _, err := f.S.CreateRedirection(f.Ctx, f.Inst, content.RedirectionInput{OriginURL: ptr("/old"), DestinationURL: ptr("/new")}); err != nil {
		t.Fatal(err)
	}
	after, err := r.Redirections(f.Ctx, f.Inst)
	if err != nil || len(after.Items) != 1 || after.Items[0].OriginURL != "/old" || !after.Changed.After(before.Changed) {
		t.Errorf("Redirections after a create = %+v, %v; want /old, changed after %v", after, err, before.Changed)
	}
	if list, err := r.Redirections(f.Ctx, other); err != nil || len(list.Items) != 0 {
		t.Errorf("Redirections of another instance = %+v, %v; want none", list, err)
	}
}
