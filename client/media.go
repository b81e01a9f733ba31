package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"time"
)

// Gallery is an image gallery and its media.
type Gallery struct {
	GalleryID   int64   `json:"galleryID"`
	Name        string  `json:"name"`
	Description string  `json:"description"`
	Count       int     `json:"count"`
	Media       []Media `json:"media"`
}

// Media is one file of a gallery.
type Media struct {
	MediaID  int64  `json:"mediaID"`
	FileName string `json:"fileName"`
	URL      string `json:"url"`
	// Size is the size of the file in bytes.
	Size int64 `json:"size"`
	// ModifiedOn is the time of the last change, in UTC.
	ModifiedOn time.Time `json:"-"`
	// ModifiedOnRaw is the modifiedOn member as sent.
	ModifiedOnRaw string `json:"modifiedOn,omitempty"`
	// MetaData holds the file's metadata (title, description, pixel
	// sizes, ...) with the same accessors as item fields.
	MetaData Fields `json:"metaData"`
}

// UnmarshalJSON decodes a media file and parses modifiedOn.
func (m *Media) UnmarshalJSON(b []byte) error {
	type plain Media
	if err := json.Unmarshal(b, (*plain)(m)); err != nil {
		return err
	}
	t, err := parseTime(m.ModifiedOnRaw)
	if err != nil {
		return fmt.Errorf("modifiedOn: %w", err)
	}
	m.ModifiedOn = t
	return nil
}

// Gallery returns the image gallery galleryID (see Fields.GalleryID).
// Galleries have no locale.
func (c *Client) Gallery(ctx context.Context, galleryID int64) (*Gallery, error) {
	var g Gallery
	u, err := c.get(ctx, &g, nil, "gallery", strconv.FormatInt(galleryID, 10))
	if err != nil {
		return nil, err
	}
	if g.GalleryID == 0 {
		return nil, badResponse(u, "the gallery has no galleryID")
	}
	return &g, nil
}

// Redirections is the answer of URLRedirections.
type Redirections struct {
	Items []URLRedirection `json:"items"`
	// IsUpToDate is true when nothing changed since the lastAccessDate
	// sent; Items is then empty.
	IsUpToDate bool `json:"isUpToDate"`
	// LastAccessDate is the value to send with the next call, as sent.
	LastAccessDate string `json:"lastAccessDate"`
}

// UnmarshalJSON decodes the answer and insists on its items array.
func (r *Redirections) UnmarshalJSON(b []byte) error {
	type plain Redirections
	if err := json.Unmarshal(b, (*plain)(r)); err != nil {
		return err
	}
	if r.Items == nil {
		return errors.New("redirections need an items array")
	}
	return nil
}

// URLRedirection sends requests for one URL to another.
type URLRedirection struct {
	ID             int64  `json:"id"`
	OriginURL      string `json:"originUrl"`
	DestinationURL string `json:"destinationUrl"`
	// StatusCode is the HTTP status of the redirect, such as 301.
	StatusCode int `json:"statusCode"`
}

// URLRedirections returns the instance's URL redirections. Pass the
// LastAccessDate of the previous answer to learn whether anything changed
// (IsUpToDate), or "" for all of them. Redirections have no locale.
func (c *Client) URLRedirections(ctx context.Context, lastAccessDate string) (*Redirections, error) {
	q := url.Values{}
	if lastAccessDate != "" {
		q.Set("lastAccessDate", lastAccessDate)
	}
	var r Redirections
	if _, err := c.get(ctx, &r, q, "urlredirection"); err != nil {
		return nil, err
	}
	return &r, nil
}
