package render

import (
	"bytes"
	"encoding/json"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/edgecms/edgecms/content"
	"github.com/edgecms/edgecms/problem"
	"github.com/edgecms/edgecms/render/source"
)

// node is an item loaded in full, with its model's fields and its parsed
// links.
type node struct {
	v      source.ItemVersion
	fields content.Fields
	// links holds, per model field, the parsed value of item and list
	// fields (the zero link elsewhere or when unset).
	links []link
	// depth is the most remaining levels of links whose needs were loaded
	// for the node, -1 before any.
	depth int
}

// link is the parsed value of an item or list field.
type link struct {
	set  bool
	ids  []int64 // the linked item, or the selection of a list, in order
	full bool    // a list field linking its whole container
}

func newNode(v source.ItemVersion, fields content.Fields) *node {
	n := &node{v: v, fields: fields, depth: -1}
	for i, f := range fields {
		if f.Type != content.TypeItem && f.Type != content.TypeList {
			continue
		}
		if raw, ok := v.Fields[f.Name]; ok {
			if n.links == nil { // only items that link anywhere pay for links
				n.links = make([]link, len(fields))
			}
			n.links[i] = parseLink(f.Type, raw)
		}
	}
	return n
}

// link returns the parsed value of item or list field i.
func (n *node) link(i int) link {
	if n.links == nil {
		return link{}
	}
	return n.links[i]
}

// parseLink reads the stored value of an item field ({"contentID": N}) or a
// list field ({"contentIDs": [...]}, or {} for the whole container). The
// common forms, as Postgres writes them, are read directly; anything else
// goes through encoding/json.
func parseLink(t content.FieldType, raw []byte) link {
	if l, ok := scanLink(t, raw); ok {
		return l
	}
	switch t {
	case content.TypeItem:
		var l content.ItemLink
		if json.Unmarshal(raw, &l) == nil && l.ContentID > 0 {
			return link{set: true, ids: []int64{l.ContentID}}
		}
	case content.TypeList:
		var l content.ListLink
		if json.Unmarshal(raw, &l) == nil {
			return link{set: true, ids: l.ContentIDs, full: l.ContentIDs == nil}
		}
	}
	return link{}
}

// scanLink reads {"contentID": N}, {"contentIDs": [N, ...]} and {}.
func scanLink(t content.FieldType, raw []byte) (link, bool) {
	b := bytes.TrimSpace(raw)
	if len(b) < 2 || b[0] != '{' || b[len(b)-1] != '}' {
		return link{}, false
	}
	b = bytes.TrimSpace(b[1 : len(b)-1])
	if len(b) == 0 {
		return link{set: true, full: true}, t == content.TypeList
	}
	key := `"contentID"`
	if t == content.TypeList {
		key = `"contentIDs"`
	}
	rest, ok := bytes.CutPrefix(b, []byte(key))
	if !ok {
		return link{}, false
	}
	rest = bytes.TrimSpace(rest)
	rest, ok = bytes.CutPrefix(rest, []byte(":"))
	if !ok {
		return link{}, false
	}
	rest = bytes.TrimSpace(rest)
	if t == content.TypeItem {
		id, err := strconv.ParseInt(string(rest), 10, 64)
		return link{set: true, ids: []int64{id}}, err == nil && id > 0
	}
	if len(rest) < 2 || rest[0] != '[' || rest[len(rest)-1] != ']' {
		return link{}, false
	}
	rest = rest[1 : len(rest)-1]
	ids := make([]int64, 0, bytes.Count(rest, []byte(","))+1)
	for len(bytes.TrimSpace(rest)) > 0 {
		var num []byte
		num, rest, _ = bytes.Cut(rest, []byte(","))
		id, err := strconv.ParseInt(string(bytes.TrimSpace(num)), 10, 64)
		if err != nil {
			return link{}, false
		}
		ids = append(ids, id)
	}
	if len(ids) == 0 {
		return link{}, false // {"contentIDs": []} is not a form the store writes
	}
	return link{set: true, ids: ids}, true
}

// visible reports whether an item is known to be visible in the flavour.
func (j *job) visible(id int64) bool {
	if _, ok := j.nodes[id]; ok {
		return true
	}
	_, ok := j.heads[id]
	return ok
}

// addNodes makes nodes of loaded item versions (keeping nodes already
// loaded) and returns them in the order given.
func (j *job) addNodes(vs []source.ItemVersion) ([]*node, error) {
	out := make([]*node, len(vs))
	for i, v := range vs {
		n, ok := j.nodes[v.ContentID]
		if !ok {
			fields, err := j.r.schema(v.ModelFields)
			if err != nil {
				return nil, err
			}
			n = newNode(v, fields)
			j.nodes[v.ContentID] = n
		}
		out[i] = n
	}
	return out, nil
}

// loadGraph loads the roots and everything writing them with r remaining
// levels of links needs: the linked items to expand, the whole lists to
// expand, and the visibility of links written as references. That is one
// query, plus two per round of whole lists when expandAllContentLinks asks
// for them. It returns the visible roots in the order given; the others are
// hidden.
func (j *job) loadGraph(roots []int64, r int) ([]*node, error) {
	if err := j.graph(roots, r); err != nil {
		return nil, err
	}
	if j.req.ExpandAll {
		if err := j.loadWholeLists(); err != nil {
			return nil, err
		}
	}
	out := make([]*node, 0, len(roots))
	for _, id := range roots {
		if n, ok := j.nodes[id]; ok {
			out = append(out, n)
		} else {
			j.hidden[id] = true
		}
	}
	return out, nil
}

// graph loads the roots with r remaining levels of item links and
// selections (source.Reader.ItemGraph).
func (j *job) graph(roots []int64, r int) error {
	got, err := j.src.ItemGraph(j.ctx, j.inst, j.locale, j.fl, roots, r)
	if err != nil {
		return err
	}
	full := make([]source.ItemVersion, 0, len(got))
	depths := make([]int, 0, len(got))
	for _, g := range got {
		if g.Head {
			j.heads[g.Version.ContentID] = g.Version.Model
			continue
		}
		full = append(full, g.Version)
		depths = append(depths, g.Depth)
	}
	ns, err := j.addNodes(full)
	if err != nil {
		return err
	}
	size := 0
	for i, n := range ns {
		n.depth = max(n.depth, r-depths[i])
		size += itemSize
		for _, raw := range n.v.Fields {
			size += len(raw)
		}
	}
	// The output grows once to about what the items take, rather than by
	// doubling from a guess.
	j.w.b = slices.Grow(j.w.b, size)
	// Every item link and selection of an item at depth k <= r was
	// followed: what did not come back is not visible.
	for _, n := range ns {
		for _, l := range n.links {
			for _, id := range l.ids {
				if !j.visible(id) {
					j.hidden[id] = true
				}
			}
		}
	}
	for _, id := range roots {
		if !j.visible(id) {
			j.hidden[id] = true
		}
	}
	return nil
}

// itemSize is about what an item takes in the output besides its values:
// its properties, and the keys of its fields.
const itemSize = 320

// loadWholeLists loads the items of the whole lists that expanded links
// need, and what those items need in turn, round by round until nothing is
// missing. Each round costs two queries however many lists it loads.
func (j *job) loadWholeLists() error {
	for {
		need := map[string]int{} // lower-case referenceName -> remaining levels its items need
		for _, n := range j.nodes {
			if n.depth < 1 {
				continue
			}
			for i, l := range n.links {
				if !l.full {
					continue
				}
				ref, rem := lower(n.fields[i].Container), n.depth-1
				if d, ok := j.listDepth[ref]; ok && d >= rem {
					continue
				}
				if cur, ok := need[ref]; !ok || rem > cur {
					need[ref] = rem
				}
			}
		}
		if len(need) == 0 {
			return nil
		}
		var missing []string
		for ref := range need {
			if _, ok := j.lists[ref]; !ok {
				missing = append(missing, ref)
			}
		}
		if len(missing) > 0 {
			slices.Sort(missing)
			got, err := j.src.ContainerIDs(j.ctx, j.inst, j.locale, j.fl, missing)
			if err != nil {
				return err
			}
			for _, ref := range missing {
				j.lists[ref] = append([]int64{}, got[ref]...)
			}
		}
		byRem := map[int][]int64{}
		for ref, rem := range need {
			byRem[rem] = append(byRem[rem], j.lists[ref]...)
			j.listDepth[ref] = rem
		}
		for rem, ids := range byRem {
			slices.Sort(ids)
			if err := j.graph(slices.Compact(ids), rem); err != nil {
				return err
			}
		}
	}
}

// wholeList returns the visible contentIDs of a container in container
// order, for a whole-list link that is expanded (loadWholeLists or
// loadLists read them).
func (j *job) wholeList(ref string) []int64 {
	return j.lists[lower(ref)]
}

// loadHeads learns which of ids are visible, for links rendered as
// references.
func (j *job) loadHeads(ids []int64) error {
	var missing []int64
	for _, id := range ids {
		if !j.visible(id) && !j.hidden[id] {
			missing = append(missing, id)
		}
	}
	if len(missing) == 0 {
		return nil
	}
	hs, err := j.src.ItemHeads(j.ctx, j.inst, j.locale, j.fl, missing)
	if err != nil {
		return err
	}
	for _, h := range hs {
		j.heads[h.ContentID] = h.Model
	}
	for _, id := range missing {
		if !j.visible(id) {
			j.hidden[id] = true
		}
	}
	return nil
}

// loadLists loads every visible item of the containers in full, to filter
// and sort a list.
func (j *job) loadLists(refs []string) ([]*node, error) {
	if len(refs) == 0 {
		return nil, nil
	}
	vs, err := j.src.ContainerVersions(j.ctx, j.inst, j.locale, j.fl, refs)
	if err != nil {
		return nil, err
	}
	ns, err := j.addNodes(vs)
	if err != nil {
		return nil, err
	}
	for _, ref := range refs {
		j.lists[lower(ref)] = []int64{}
	}
	for _, n := range ns {
		ref := lower(n.v.ReferenceName)
		j.lists[ref] = append(j.lists[ref], n.v.ContentID)
	}
	return ns, nil
}

// expands reports whether a link at r remaining levels is expanded.
func (j *job) expands(l link, r int) bool {
	return r >= 1 && (!l.full || j.req.ExpandAll)
}

// ancestor reports whether id is being written around the current position.
func (j *job) ancestor(id int64) bool {
	for _, a := range j.path {
		if a == id {
			return true
		}
	}
	return false
}

// item renders GET /{locale}/item/{contentID}.
func (j *job) item() error {
	id := j.req.ContentID
	j.tag(ItemTag(id))
	ns, err := j.loadGraph([]int64{id}, j.req.Depth)
	if err != nil {
		return err
	}
	if len(ns) == 0 {
		if j.fl == source.FlavourFetch {
			return problem.NotFoundf("item %d is not published in locale %q", id, j.locale)
		}
		return problem.NotFoundf("item %d not found in locale %q", id, j.locale)
	}
	j.writeItem(ns[0], j.req.Depth, nil)
	return nil
}

// writeItem writes a content item whose links have r remaining levels of
// expansion. keep, when not nil, selects the fields to write.
func (j *job) writeItem(n *node, r int, keep func(string) bool) {
	v := &n.v
	j.tag(ItemTag(v.ContentID))
	w := &j.w
	w.open('{')
	w.key("contentID")
	w.int(v.ContentID)
	w.key("properties")
	w.open('{')
	w.key("state")
	w.int(int64(v.State))
	w.key("modified")
	w.modified(v.Modified)
	w.key("versionID")
	w.int(v.VersionID)
	w.key("referenceName")
	w.str(v.ReferenceName)
	w.key("definitionName")
	w.str(v.Model)
	w.key("itemOrder")
	w.int(int64(v.ItemOrder))
	w.close('}')
	w.key("fields")
	j.path = append(j.path, v.ContentID)
	j.writeFields(n, r, keep)
	j.path = j.path[:len(j.path)-1]
	w.key("seo")
	w.null()
	w.close('}')
}

// writeReducedItem writes an item that may not be expanded here (it is
// being written around this position) as a reduced reference.
func (j *job) writeReducedItem(id int64) {
	j.tag(ItemTag(id))
	w := &j.w
	w.open('{')
	w.key("contentID")
	w.int(id)
	w.key("properties")
	w.open('{')
	w.close('}')
	w.key("fields")
	w.open('{')
	w.close('}')
	w.key("seo")
	w.null()
	w.close('}')
}

// writeRef writes {"contentid": id}, a link that is not expanded.
func (j *job) writeRef(id int64) {
	w := &j.w
	w.open('{')
	w.key("contentid")
	w.int(id)
	w.close('}')
}

// Suffixes of the companion fields written beside link fields.
const (
	itemCompanion = "ID"
	listCompanion = "_ValueField"
)

func (j *job) writeFields(n *node, r int, keep func(string) bool) {
	w := &j.w
	w.open('{')
	for i, f := range n.fields {
		raw, ok := n.v.Fields[f.Name]
		if !ok {
			continue
		}
		switch f.Type {
		case content.TypeItem:
			l := n.link(i)
			if !l.set {
				continue
			}
			if keep != nil && !keep(f.Name) && !keep(f.Name+itemCompanion) {
				continue
			}
			id := l.ids[0]
			j.tag(ItemTag(id))
			if !j.visible(id) {
				continue // a link to an item the flavour does not show is left out
			}
			if keep == nil || keep(f.Name) {
				w.key(f.Name)
				if c, ok := j.nodes[id]; ok && r >= 1 && !j.ancestor(id) {
					j.writeItem(c, r-1, nil)
				} else {
					j.writeRef(id)
				}
			}
			if keep == nil || keep(f.Name) || keep(f.Name+itemCompanion) {
				w.key(f.Name + itemCompanion)
				w.intString(id)
			}
		case content.TypeList:
			l := n.link(i)
			if !l.set {
				continue
			}
			if keep != nil && !keep(f.Name) && (l.full || !keep(f.Name+listCompanion)) {
				continue
			}
			j.writeList(n, i, l, r, keep)
		default:
			if keep != nil && !keep(f.Name) {
				continue
			}
			w.key(f.Name)
			writeValue(w, f.Type, raw, j.r.reads.AssetURL)
		}
	}
	w.close('}')
}

// writeList writes list field i of n and, for a selection, its companion.
func (j *job) writeList(n *node, i int, l link, r int, keep func(string) bool) {
	w := &j.w
	f := n.fields[i]
	var ids []int64
	if l.full {
		if j.expands(l, r) {
			j.tag(ContainerTag(f.Container))
			ids = j.wholeList(f.Container)
		}
	} else {
		ids = make([]int64, 0, len(l.ids))
		for _, id := range l.ids {
			j.tag(ItemTag(id))
			if j.visible(id) {
				ids = append(ids, id)
			}
		}
	}
	if keep == nil || keep(f.Name) {
		w.key(f.Name)
		if j.expands(l, r) {
			w.open('[')
			for _, id := range ids {
				c, ok := j.nodes[id]
				switch {
				case j.ancestor(id):
					j.writeReducedItem(id)
				case ok:
					j.writeItem(c, r-1, nil)
				}
			}
			w.close(']')
		} else {
			w.open('{')
			w.key("referencename")
			w.str(f.Container)
			w.key("fulllist")
			w.bool(l.full)
			if !l.full {
				w.key("sortids")
				w.str(joinIDs(ids))
			}
			w.close('}')
		}
	}
	if !l.full && (keep == nil || keep(f.Name) || keep(f.Name+listCompanion)) {
		w.key(f.Name + listCompanion)
		w.str(joinIDs(ids))
	}
}

func joinIDs(ids []int64) string {
	b := make([]byte, 0, len(ids)*6)
	for i, id := range ids {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendInt(b, id, 10)
	}
	return string(b)
}

// dateLayout is the form of date fields: seconds and a numeric UTC offset.
const dateLayout = "2006-01-02T15:04:05-07:00"

// writeValue writes the v1 form of a stored value of a field that is not a
// link. A stored value of an unexpected shape is written as stored.
func writeValue(w *writer, t content.FieldType, raw json.RawMessage, assetURL func(key string) string) {
	raw = bytes.TrimSpace(raw)
	switch t {
	case content.TypeText, content.TypeHTML, content.TypeLink:
		// Stored strings are valid JSON strings (Postgres writes jsonb
		// text deterministically), so they are copied as they are.
		w.raw(raw)
	case content.TypeNumber, content.TypeDecimal, content.TypeBoolean:
		if len(raw) > 0 && raw[0] != '"' {
			w.quoted(raw)
		} else {
			w.raw(raw)
		}
	case content.TypeDate:
		var s string
		if json.Unmarshal(raw, &s) != nil {
			w.raw(raw)
			return
		}
		if d, err := time.Parse(time.RFC3339, s); err == nil {
			w.sep()
			w.b = append(w.b, '"')
			w.b = d.AppendFormat(w.b, dateLayout)
			w.b = append(w.b, '"')
			w.comma = true
			return
		}
		w.str(s)
	case content.TypeImage:
		writeImage(w, raw, assetURL)
	case content.TypeGallery:
		var g content.Gallery
		if json.Unmarshal(raw, &g) != nil {
			w.raw(raw)
			return
		}
		w.open('{')
		w.key("galleryid")
		w.int(g.GalleryID)
		w.close('}')
	default:
		w.raw(raw)
	}
}

// writeImage writes an image value: {label, url, target, filesize,
// pixelHeight, pixelWidth, height, width}. An asset's image is stored with
// its assetID and object key, and its url is made from the key below the
// public URL (assetURL); an image given by URL keeps its url. Strings and
// numbers as Postgres wrote them are copied as they are; a value of
// another shape goes through encoding/json.
func writeImage(w *writer, raw json.RawMessage, assetURL func(key string) string) {
	m, err := source.SplitObject(raw)
	if err != nil {
		w.raw(raw)
		return
	}
	for k := range m {
		if !imageMembers[k] {
			writeImageDecoded(w, raw, assetURL)
			return
		}
	}
	str := func(k string) ([]byte, bool) {
		v, ok := m[k]
		return v, !ok || (len(v) > 0 && v[0] == '"')
	}
	num := func(k string) ([]byte, bool) {
		v, ok := m[k]
		if !ok {
			return []byte("0"), true
		}
		for _, c := range v {
			if c < '0' || c > '9' {
				return nil, false
			}
		}
		return v, len(v) > 0
	}
	label, ok1 := str("label")
	url, ok2 := str("url")
	target, ok3 := str("target")
	size, ok4 := num("filesize")
	height, ok5 := num("height")
	width, ok6 := num("width")
	key, ok7 := str("key")
	if !(ok1 && ok2 && ok3 && ok4 && ok5 && ok6 && ok7) {
		writeImageDecoded(w, raw, assetURL)
		return
	}
	orEmpty := func(v []byte) []byte {
		if v == nil {
			return []byte(`""`)
		}
		return v
	}
	w.open('{')
	w.key("label")
	w.raw(orEmpty(label))
	w.key("url")
	if key != nil {
		var k string
		json.Unmarshal(key, &k)
		w.str(assetURL(k))
	} else {
		w.raw(orEmpty(url))
	}
	w.key("target")
	if target == nil {
		w.null()
	} else {
		w.raw(target)
	}
	w.key("filesize")
	w.raw(size)
	w.key("pixelHeight")
	w.quoted(height)
	w.key("pixelWidth")
	w.quoted(width)
	w.key("height")
	w.raw(height)
	w.key("width")
	w.raw(width)
	w.close('}')
}

// imageMembers are the members a stored image value may have.
var imageMembers = map[string]bool{"label": true, "url": true, "target": true, "filesize": true,
	"height": true, "width": true, "assetID": true, "key": true}

func writeImageDecoded(w *writer, raw json.RawMessage, assetURL func(key string) string) {
	var img struct {
		content.Image
		Key string `json:"key"`
	}
	if json.Unmarshal(raw, &img) != nil {
		w.raw(raw)
		return
	}
	if img.Key != "" {
		img.URL = assetURL(img.Key)
	}
	w.open('{')
	w.key("label")
	w.str(img.Label)
	w.key("url")
	w.str(img.URL)
	w.key("target")
	if img.Target != nil {
		w.str(*img.Target)
	} else {
		w.null()
	}
	w.key("filesize")
	w.int(img.Filesize)
	w.key("pixelHeight")
	w.intString(int64(img.Height))
	w.key("pixelWidth")
	w.intString(int64(img.Width))
	w.key("height")
	w.int(int64(img.Height))
	w.key("width")
	w.int(int64(img.Width))
	w.close('}')
}

func lower(s string) string { return strings.ToLower(s) }
