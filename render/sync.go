package render

import (
	"github.com/edgecms/edgecms/content"
	"github.com/edgecms/edgecms/eventlog"
	"github.com/edgecms/edgecms/render/source"
)

// sync renders GET /{locale}/sync/items and /{locale}/sync/pages: at most
// PageSize changes of the stream after SyncToken, oldest first, each the
// copy as it is now, unexpanded (depth 0: links as references, zone items
// as {contentid}), or a tombstone {contentID|pageID, properties: {state:
// 3}} for a copy deleted (or, in fetch, no longer published). syncToken is
// the position of the last change written, the token to send next; 0 when
// there is nothing after the token sent.
//
// Tombstones carry no referenceName: the sync client (content-sync 1.x)
// would otherwise start a local list with the deleted item when it holds
// none; it takes the names from its own copy.
func (j *job) sync(pages bool) error {
	subject := eventlog.SubjectItem
	if pages {
		subject = eventlog.SubjectPage
	}
	cs, err := j.r.reads.SyncChanges(j.ctx, j.inst, j.locale, j.fl, subject, j.req.SyncToken, j.req.PageSize)
	if err != nil {
		return err
	}
	ids := make([]int64, len(cs))
	var token int64
	for i, c := range cs {
		ids[i], token = c.ID, c.Position
	}
	var versions map[int64]*source.PageVersion
	if pages {
		if versions, err = j.loadSyncPages(ids); err != nil {
			return err
		}
	} else if _, err := j.loadGraph(ids, 0); err != nil {
		return err
	}
	w := &j.w
	w.open('{')
	w.key("syncToken")
	w.int(token)
	w.key("items")
	w.open('[')
	for _, c := range cs {
		switch {
		case pages && versions[c.ID] != nil:
			j.writePage(versions[c.ID], 0)
		case pages:
			j.writeTombstone("pageID", c)
		case j.nodes[c.ID] != nil:
			j.writeItem(j.nodes[c.ID], 0, nil)
		default:
			j.writeTombstone("contentID", c)
		}
	}
	w.close(']')
	w.close('}')
	return nil
}

// loadSyncPages loads the visible copies of the pages ids and the
// visibility of their components.
func (j *job) loadSyncPages(ids []int64) (map[int64]*source.PageVersion, error) {
	ps, err := j.r.reads.PageVersions(j.ctx, j.inst, j.locale, j.fl, ids)
	if err != nil {
		return nil, err
	}
	out := make(map[int64]*source.PageVersion, len(ps))
	var components []int64
	for i := range ps {
		p := &ps[i]
		out[p.PageID] = p
		for _, z := range zoneOrder(p) {
			components = append(components, p.Zones[z]...)
		}
	}
	return out, j.loadHeads(components)
}

// writeTombstone writes a deleted item or page of a sync stream: its id
// (under idKey) and properties {state: 3, modified, versionID: 0}, with
// modified the time the deletion was stamped.
func (j *job) writeTombstone(idKey string, c source.SyncChange) {
	w := &j.w
	w.open('{')
	w.key(idKey)
	w.int(c.ID)
	w.key("properties")
	w.open('{')
	w.key("state")
	w.int(int64(content.Deleted))
	w.key("modified")
	w.modified(c.Stamped)
	w.key("versionID")
	w.int(0)
	w.close('}')
	if idKey == "contentID" {
		w.key("fields")
		w.open('{')
		w.close('}')
		w.key("seo")
		w.null()
	}
	w.close('}')
}
