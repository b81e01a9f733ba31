package render

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"

	"github.com/edgecms/edgecms/content"
	"github.com/edgecms/edgecms/fetch"
	"github.com/edgecms/edgecms/problem"
)

// list renders GET /{locale}/list/{referenceName}: the container's visible
// items in container order (or sorted), filtered, then paged by skip and
// take; totalCount counts every item that passes the filter.
func (j *job) list() error {
	req := j.req
	limit := req.Take
	if req.Filter != nil || req.Sort != "" {
		limit = 0 // every item is read to filter and sort
	}
	cc, err := j.src.ContainerContents(j.ctx, j.inst, j.locale, j.fl, req.ReferenceName, req.Skip, limit)
	if err != nil {
		return err
	}
	j.tag(ContainerTag(cc.ReferenceName))
	fields, err := j.r.schema(cc.ModelFields)
	if err != nil {
		return err
	}
	sortPath, err := sortPath(cc.Model, fields, req.Sort)
	if err != nil {
		return err
	}

	var page []*node
	var total int
	if req.Filter == nil && sortPath == "" {
		total = cc.Total
		if page, err = j.loadGraph(cc.ContentIDs, req.Depth); err != nil {
			return err
		}
		// A window the source took from a membership recorded earlier (the
		// publisher's list_members) may name an item that is no longer
		// visible: the page is left without it, and changes when it is
		// published again.
		for _, id := range cc.ContentIDs {
			if j.hidden[id] {
				j.tag(ItemTag(id))
			}
		}
	} else {
		all, err := j.loadLists([]string{cc.ReferenceName})
		if err != nil {
			return err
		}
		matches, err := j.filterSort(all, sortPath)
		if err != nil {
			return err
		}
		total = len(matches)
		ids := make([]int64, 0, req.Take)
		for _, n := range window(matches, req.Skip, req.Take) {
			ids = append(ids, n.v.ContentID)
		}
		if page, err = j.loadGraph(ids, req.Depth); err != nil {
			return err
		}
	}

	keep := keepFields(req.Fields)
	w := &j.w
	w.open('{')
	w.key("items")
	w.open('[')
	for _, n := range page {
		j.writeItem(n, req.Depth, keep)
	}
	w.close(']')
	w.key("totalCount")
	w.int(int64(total))
	w.close('}')
	return nil
}

// window returns the part of s that skip and take select.
func window[T any](s []T, skip, take int) []T {
	if skip >= len(s) {
		return nil
	}
	s = s[skip:]
	if take < len(s) {
		s = s[:take]
	}
	return s
}

// filterSort returns the items that pass the request's filter, sorted by
// sortPath when it is set. Filters and sorts see each item as clients do:
// decoded from its JSON with links as references (depth 0), so that
// fields.x compares the string a client reads.
func (j *job) filterSort(all []*node, sortPath string) ([]*node, error) {
	var ids []int64
	for _, n := range all {
		for _, l := range n.links {
			if l.set && !l.full {
				ids = append(ids, l.ids...)
			}
		}
	}
	if err := j.loadHeads(ids); err != nil {
		return nil, err
	}
	type doc struct {
		n *node
		m map[string]any
	}
	docs := make([]doc, 0, len(all))
	for _, n := range all {
		m, err := j.decoded(n)
		if err != nil {
			return nil, err
		}
		if j.req.Filter.Match(m) {
			docs = append(docs, doc{n, m})
		}
	}
	if sortPath != "" {
		s := fetch.NewSorter(sortPath, j.req.Direction)
		slices.SortStableFunc(docs, func(a, b doc) int { return s.Compare(a.m, b.m) })
	}
	out := make([]*node, len(docs))
	for i, d := range docs {
		out[i] = d.n
	}
	return out, nil
}

// decoded renders n at depth 0 on the side and decodes it, as a filter or
// sort reads it. The output is left as it was; the tags are kept, since
// which items pass the filter, and in which order, depends on them too.
func (j *job) decoded(n *node) (map[string]any, error) {
	saved := j.w
	j.w = writer{b: make([]byte, 0, 512)}
	j.writeItem(n, 0, nil)
	body := j.w.b
	j.w = saved
	var m map[string]any
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	if err := dec.Decode(&m); err != nil {
		return nil, err
	}
	return m, nil
}

// itemProperties are the properties of an item a sort may name, lower case.
var itemProperties = []string{"state", "modified", "versionid", "referencename", "definitionname", "itemorder"}

// sortPath checks the sort of a list request against the container's model
// and returns the dotted path to sort by ("" for container order). A bare
// field name stands for fields.<name>; a path that names nothing an item
// has is a problem.Invalid, so that a typo does not silently give the
// container order.
func sortPath(model string, fields content.Fields, sort string) (string, error) {
	if sort == "" {
		return "", nil
	}
	segs := strings.Split(strings.ToLower(sort), ".")
	switch {
	case len(segs) == 1 && segs[0] == "contentid":
		return sort, nil
	case segs[0] == "properties" && len(segs) == 2 && slices.Contains(itemProperties, segs[1]):
		return sort, nil
	case segs[0] == "fields" && len(segs) >= 2 && hasField(fields, segs[1]):
		return sort, nil
	case len(segs) == 1 && hasField(fields, segs[0]):
		return "fields." + sort, nil
	}
	return "", problem.Field("sort", "%q names nothing items of model %q have: use contentID, properties.<%s> or fields.<field>",
		sort, model, strings.Join(itemProperties, "|"))
}

// hasField reports whether fields has a field, or a link field's companion, named
// name (lower case).
func hasField(fields content.Fields, name string) bool {
	for _, f := range fields {
		n := strings.ToLower(f.Name)
		switch {
		case n == name,
			f.Type == content.TypeItem && n+"id" == name,
			f.Type == content.TypeList && n+"_valuefield" == name:
			return true
		}
	}
	return false
}

// keepFields turns the fields parameter of a list request (lower-case names
// or fields.<name> paths) into a test of field names; nil keeps every field.
func keepFields(fields []string) func(string) bool {
	if fields == nil {
		return nil
	}
	set := map[string]bool{}
	for _, f := range fields {
		set[strings.TrimPrefix(f, "fields.")] = true
	}
	return func(name string) bool { return set[strings.ToLower(name)] }
}
