package source

import (
	"cmp"
	"slices"
)

// WalkItemGraph walks the links of items in memory as ItemGraph does in
// one query: breadth first from roots, an item's depth being its distance
// from the roots through visible items (the smallest depth the query
// reaches it at), levels+1 links deep at most. Sources that answer
// ItemGraph from items they hold (a Snapshot, the publisher's batches)
// share it, so that they reach the same items at the same depths as the
// Reader.
//
// Before it looks at the links of a level, it calls load, when not nil,
// with the depth and the items first reached at it (the items one level
// past levels too, whose links it does not follow), so that a source can
// load a whole level at once. links returns the items an item links to,
// and false when the item is not visible: its links are not followed. It
// returns the depth of every item reached, visible or not.
func WalkItemGraph(roots []int64, levels int, load func(depth int, ids []int64) error, links func(id int64) ([]int64, bool)) (map[int64]int, error) {
	depth := make(map[int64]int, len(roots))
	var level []int64
	for _, id := range roots {
		if _, ok := depth[id]; !ok {
			depth[id] = 0
			level = append(level, id)
		}
	}
	for d := 0; d <= levels+1 && len(level) > 0; d++ {
		if load != nil {
			if err := load(d, level); err != nil {
				return nil, err
			}
		}
		if d == levels+1 {
			break
		}
		var next []int64
		for _, id := range level {
			ls, ok := links(id)
			if !ok {
				continue
			}
			for _, l := range ls {
				if _, ok := depth[l]; !ok {
					depth[l] = d + 1
					next = append(next, l)
				}
			}
		}
		level = next
	}
	return depth, nil
}

// SortItemNodes sorts nodes as ItemGraph returns them: by depth, then by
// content id.
func SortItemNodes(nodes []ItemNode) {
	slices.SortFunc(nodes, func(a, b ItemNode) int {
		return cmp.Or(cmp.Compare(a.Depth, b.Depth), cmp.Compare(a.Version.ContentID, b.Version.ContentID))
	})
}
