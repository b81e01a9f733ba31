package source

import (
	"context"
	"fmt"
	"time"

	"github.com/edgecms/edgecms/content"
	"github.com/edgecms/edgecms/problem"
)

const (
	// galleryMediaSQL is the read of content.Store.Gallery.
	galleryMediaSQL = `SELECT a.id, a.file_name, a.label, a.content_type, a.size, a.width, a.height, a.sha256, a.object_key, a.created_at, a.modified_at
		FROM gallery_assets ga JOIN assets a ON a.id = ga.asset_id WHERE ga.gallery_id = $1 ORDER BY ga.position, a.id`
	readGallerySQL = `SELECT g.name, g.description, g.modified_at FROM galleries g WHERE g.instance_id = $1 AND g.id = $2`
)

// Gallery reads a gallery and its media for the Fetch API. An unknown
// gallery is a NotFound problem.
func (r *Reader) Gallery(ctx context.Context, inst content.Instance, id int64) (content.MediaGallery, error) {
	g := content.MediaGallery{ID: id, Media: []content.Asset{}}
	rows, err := r.query(ctx, readGallerySQL, inst.ID, id)
	if err != nil {
		return g, fmt.Errorf("read gallery %d: %w", id, err)
	}
	found := rows.Next()
	if found {
		err = rows.Scan(&g.Name, &g.Description, &g.Modified)
	}
	if cerr := rows.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return g, fmt.Errorf("read gallery %d: %w", id, err)
	}
	if !found {
		return g, problem.NotFoundf("gallery %d not found", id)
	}
	rows, err = r.query(ctx, galleryMediaSQL, id)
	if err != nil {
		return g, fmt.Errorf("read gallery %d: %w", id, err)
	}
	defer rows.Close()
	for rows.Next() {
		var a content.Asset
		if err := rows.Scan(&a.ID, &a.FileName, &a.Label, &a.ContentType, &a.Size, &a.Width, &a.Height, &a.SHA256,
			&a.Key, &a.CreatedAt, &a.Modified); err != nil {
			return g, fmt.Errorf("read gallery %d: %w", id, err)
		}
		a.URL = r.publicURL.URL(a.Key)
		g.Media = append(g.Media, a)
	}
	if err := rows.Err(); err != nil {
		return g, fmt.Errorf("read gallery %d: %w", id, err)
	}
	g.Count = len(g.Media)
	return g, nil
}

// RedirectionList is the redirections of an instance as the Fetch API
// reads them, and when they last changed.
type RedirectionList struct {
	Items []content.Redirection
	// Changed is when the redirections last changed, to the millisecond
	// (before any change: when the instance was created). A client that
	// read them at Changed or later is up to date.
	Changed time.Time
}

const (
	redirectsChangedSQL = `SELECT coalesce(
			(SELECT changed_at FROM redirection_versions WHERE instance_id = $1),
			(SELECT date_trunc('milliseconds', created_at) FROM instances WHERE id = $1))`
	readRedirectsSQL = `SELECT id, origin_url, destination_url, status_code, created_at, modified_at
		FROM redirections WHERE instance_id = $1 ORDER BY id`
)

// Redirections reads the redirections of inst and when they last changed.
// The time is read first, so it is never newer than the list.
func (r *Reader) Redirections(ctx context.Context, inst content.Instance) (RedirectionList, error) {
	var out RedirectionList
	rows, err := r.query(ctx, redirectsChangedSQL, inst.ID)
	if err != nil {
		return out, fmt.Errorf("read redirections: %w", err)
	}
	if rows.Next() {
		err = rows.Scan(&out.Changed)
	}
	if cerr := rows.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return out, fmt.Errorf("read redirections: %w", err)
	}
	out.Changed = out.Changed.UTC()
	rows, err = r.query(ctx, readRedirectsSQL, inst.ID)
	if err != nil {
		return out, fmt.Errorf("read redirections: %w", err)
	}
	defer rows.Close()
	out.Items = []content.Redirection{}
	for rows.Next() {
		var x content.Redirection
		if err := rows.Scan(&x.ID, &x.OriginURL, &x.DestinationURL, &x.StatusCode, &x.CreatedAt, &x.Modified); err != nil {
			return out, fmt.Errorf("read redirections: %w", err)
		}
		out.Items = append(out.Items, x)
	}
	if err := rows.Err(); err != nil {
		return out, fmt.Errorf("read redirections: %w", err)
	}
	return out, nil
}
