package client

import (
	"context"
	"encoding/json"
	"errors"
	"net/url"
	"strconv"
)

// ItemSync is one batch of changed items from SyncItems.
type ItemSync struct {
	// SyncToken is the cursor to send next; 0 when nothing more is left.
	SyncToken int64 `json:"syncToken"`
	// Items are the changed items, oldest change first, unexpanded. A
	// deleted item has Properties.State == StateDeleted.
	Items []Item `json:"items"`
}

// PageSync is one batch of changed pages from SyncPages.
type PageSync struct {
	// SyncToken is the cursor to send next; 0 when nothing more is left.
	SyncToken int64 `json:"syncToken"`
	// Items are the changed pages, oldest change first, with zone items as
	// references. A deleted page has Properties.State == StateDeleted.
	Items []Page `json:"items"`
}

// UnmarshalJSON insists on both members of a sync batch.
func (s *ItemSync) UnmarshalJSON(b []byte) error {
	return decodeSync(b, &s.SyncToken, &s.Items)
}

// UnmarshalJSON insists on both members of a sync batch.
func (s *PageSync) UnmarshalJSON(b []byte) error {
	return decodeSync(b, &s.SyncToken, &s.Items)
}

func decodeSync[T any](b []byte, token *int64, items *[]T) error {
	var aux struct {
		SyncToken *int64 `json:"syncToken"`
		Items     []T    `json:"items"`
	}
	if err := json.Unmarshal(b, &aux); err != nil {
		return err
	}
	if aux.SyncToken == nil || aux.Items == nil {
		return errors.New("a sync batch needs a syncToken and an items array")
	}
	*token, *items = *aux.SyncToken, aux.Items
	return nil
}

func syncQuery(token int64, pageSize int) url.Values {
	q := url.Values{"syncToken": {strconv.FormatInt(token, 10)}}
	if pageSize > 0 {
		q.Set("pageSize", strconv.Itoa(pageSize))
	}
	return q
}

// SyncItems returns the items of locale changed after token (0 starts from
// the beginning), at most pageSize of them (0 means the server default,
// 500). Call it again with the returned SyncToken while it is larger than
// the one sent:
//
//	for token := int64(0); ; {
//		batch, err := c.SyncItems(ctx, "en-us", token, 0)
//		if err != nil { ... }
//		store(batch.Items)
//		if batch.SyncToken <= token { break }
//		token = batch.SyncToken
//	}
func (c *Client) SyncItems(ctx context.Context, locale string, token int64, pageSize int) (*ItemSync, error) {
	if err := need("locale", locale); err != nil {
		return nil, err
	}
	var s ItemSync
	if _, err := c.get(ctx, &s, syncQuery(token, pageSize), locale, "sync", "items"); err != nil {
		return nil, err
	}
	return &s, nil
}

// SyncPages returns the pages of locale changed after token, like SyncItems.
func (c *Client) SyncPages(ctx context.Context, locale string, token int64, pageSize int) (*PageSync, error) {
	if err := need("locale", locale); err != nil {
		return nil, err
	}
	var s PageSync
	if _, err := c.get(ctx, &s, syncQuery(token, pageSize), locale, "sync", "pages"); err != nil {
		return nil, err
	}
	return &s, nil
}
