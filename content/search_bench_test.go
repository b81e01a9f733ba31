package content_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/edgecms/edgecms/content"
	"github.com/edgecms/edgecms/internal/contenttest"
)

// searchInstance fills an instance with n posts in en-us, inserted in bulk
// (the search trigger makes their vectors), each titled with a word of a
// vocabulary of 1,000 (so that a word finds about n/1,000 posts), one
// unique word, and "Post" (which every post holds); one post in 1,000 has
// Japanese text in its body.
func searchInstance(b testing.TB, n int) (*contenttest.Fixture, *content.Store) {
	f := contenttest.New(b)
	f.Model("Post", "content", content.Field{Name: "title", Type: content.TypeText}, content.Field{Name: "body", Type: content.TypeHTML})
	f.Container("posts", "Post")
	if _, err := f.DB.ExecContext(f.Ctx, `
		WITH c AS (SELECT id, model_id FROM containers WHERE instance_id = $1 AND reference_name = 'posts'),
		ins AS (INSERT INTO items (instance_id, model_id, container_id, item_order)
			SELECT $1, c.model_id, c.id, g FROM c, generate_series(1, $2) g RETURNING content_id, item_order)
		INSERT INTO item_copies (content_id, instance_id, locale, state, version_id, fields, modified)
		SELECT content_id, $1, 'en-us', 1, 1, jsonb_build_object(
			'title', 'Post ' || 'w' || (item_order % 1000) || ' u' || item_order,
			'body', '<p>Café crème n° ' || item_order || CASE WHEN item_order % 1000 = 0 THEN ' 会社概要' ELSE '' END || '</p>'), now()
		FROM ins`, f.Inst.ID, n); err != nil {
		b.Fatal(err)
	}
	if _, err := f.DB.ExecContext(f.Ctx, `ANALYZE items, item_copies`); err != nil {
		b.Fatal(err)
	}
	return f, f.NewStore()
}

// BenchmarkSearchItems measures GET /{locale}/items?q= over 100,000 items
// (go test ./content -run '^$' -bench SearchItems): a word one item holds,
// one about 100 hold, an accent-folded prefix every item holds, two
// words, and a Japanese substring about 100 hold.
func BenchmarkSearchItems(b *testing.B) {
	f, s := searchInstance(b, 100_000)
	for _, q := range []string{"u54321", "w123", "cafe", "w7 u7007", "社概"} {
		b.Run(q, func(b *testing.B) {
			var p content.ItemPage
			for b.Loop() {
				var err error
				p, err = s.SearchItems(f.Ctx, f.Inst, "en-us", content.ItemQuery{Q: q, Take: 50})
				if err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(p.TotalCount), "matches")
		})
	}
}

// TestSearchItems checks search: accents and case folded, every word
// needed, each as a prefix, best first, html markup not searched.
func TestSearchItems(t *testing.T) {
	t.Parallel()
	f := contenttest.New(t)
	f.Model("Post", "content", content.Field{Name: "title", Type: content.TypeText}, content.Field{Name: "body", Type: content.TypeHTML},
		content.Field{Name: "views", Type: content.TypeNumber})
	f.Container("posts", "Post")
	s := f.NewStore()
	a := f.CreateItem("en-us", "posts", map[string]any{"title": "École d'été", "body": "<p>Summer <strong>school</strong> in Québec</p>"}).ContentID
	b := f.CreateItem("en-us", "posts", map[string]any{"title": "Summer", "body": "<p>An école mentioned in passing</p>"}).ContentID
	f.CreateItem("en-us", "posts", map[string]any{"title": "Winter", "body": "<p>strong words</p>", "views": 5})
	d := f.CreateItem("en-us", "posts", map[string]any{"title": "Bodiless"}).ContentID // a field without a value
	ja := f.CreateItem("en-us", "posts", map[string]any{"title": "会社概要", "body": "<p>東京都の会社です。Tokyo本社</p>"}).ContentID
	zh := f.CreateItem("en-us", "posts", map[string]any{"title": "关于我们", "body": "<p>公司简介</p>"}).ContentID
	ko := f.CreateItem("en-us", "posts", map[string]any{"title": "회사 소개"}).ContentID
	// A long article (about 20,000 characters in one run of CJK text, cut once
	// per character: schema/020 does it in one pass).
	long := f.CreateItem("en-us", "posts", map[string]any{"title": "Long", "body": "<p>" + strings.Repeat("大阪府の工場でした", 2200) + "最後の段落</p>"}).ContentID
	for _, c := range []struct {
		q    string
		want []int64
	}{
		{"ecole", []int64{a, b}}, // the title weighs more
		{"ÉCOLE", []int64{a, b}},
		{"summ", []int64{b, a}},
		{"quebec school", []int64{a}},
		{"strong", nil}, // markup is not text: only Winter's word
		{"nowhere", nil},
		{"bodiless", []int64{d}},
		// CJK text: any substring, of any length, in any field.
		{"会社概要", []int64{ja}},
		{"概要", []int64{ja}},
		{"社概", []int64{ja}},
		{"要", []int64{ja}},
		{"会社", []int64{ja}},
		{"東京都", []int64{ja}},
		{"本社", []int64{ja}},
		{"tokyo", []int64{ja}},
		{"tokyo本社", []int64{ja}},
		{"会社 tokyo", []int64{ja}},
		{"概社", nil}, // the characters, not in that order
		{"会社 关于", nil},
		{"我们", []int64{zh}},
		{"简介", []int64{zh}},
		{"소개", []int64{ko}},
		{"회", []int64{ko}},
		{"後の段", []int64{long}},
	} {
		p, err := s.SearchItems(f.Ctx, f.Inst, "en-us", content.ItemQuery{Q: c.q, Take: 10})
		if err != nil {
			t.Fatalf("SearchItems(%q): %v", c.q, err)
		}
		var got []int64
		for _, it := range p.Items {
			got = append(got, it.ContentID)
		}
		if c.q == "strong" {
			if len(got) != 1 || got[0] == a {
				t.Errorf("SearchItems(%q) = %v, want only Winter", c.q, got)
			}
			continue
		}
		if fmt.Sprint(got) != fmt.Sprint(c.want) && !(len(got) == 0 && len(c.want) == 0) {
			t.Errorf("SearchItems(%q) = %v, want %v", c.q, got, c.want)
		}
		if p.TotalCount != len(got) {
			t.Errorf("SearchItems(%q): totalCount %d, want %d", c.q, p.TotalCount, len(got))
		}
	}
}
