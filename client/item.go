package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// Item is a content item: its fields as the server sent them and its system
// properties. An item that appears as an unexpanded reference (a zone item
// at depth 0, for example) has only ContentID set.
type Item struct {
	ContentID  int64      `json:"contentID"`
	Properties Properties `json:"properties"`
	Fields     Fields     `json:"fields"`
	// SEO is the item's seo member as sent (null when unset).
	SEO json.RawMessage `json:"seo,omitempty"`
}

// Properties are the system properties of an item or a page. Pages have no
// ReferenceName, DefinitionName or ItemOrder.
type Properties struct {
	State State `json:"state"`
	// Modified is the time of the last change, in UTC; zero when absent.
	Modified time.Time `json:"-"`
	// ModifiedRaw is the modified member as sent
	// ("2019-08-01T14:26:01.177", no zone: UTC).
	ModifiedRaw    string `json:"modified,omitempty"`
	VersionID      int64  `json:"versionID"`
	ReferenceName  string `json:"referenceName,omitempty"`
	DefinitionName string `json:"definitionName,omitempty"`
	ItemOrder      int    `json:"itemOrder,omitempty"`
}

// UnmarshalJSON decodes the properties and parses modified.
func (p *Properties) UnmarshalJSON(b []byte) error {
	type plain Properties
	if err := json.Unmarshal(b, (*plain)(p)); err != nil {
		return err
	}
	t, err := parseTime(p.ModifiedRaw)
	if err != nil {
		return fmt.Errorf("properties.modified: %w", err)
	}
	p.Modified = t
	return nil
}

// State is the publication state of an item or a page (properties.state).
type State int

// The states of items and pages.
const (
	StateStaging          State = 1 // saved, not published
	StatePublished        State = 2
	StateDeleted          State = 3 // deleted or unpublished, as sync reports it
	StateApproved         State = 4
	StateAwaitingApproval State = 5
	StateDeclined         State = 6
	StateUnpublished      State = 7
)

var stateNames = map[State]string{
	StateStaging:          "staging",
	StatePublished:        "published",
	StateDeleted:          "deleted",
	StateApproved:         "approved",
	StateAwaitingApproval: "awaiting approval",
	StateDeclined:         "declined",
	StateUnpublished:      "unpublished",
}

// String names the state, or gives its number when it is unknown.
func (s State) String() string {
	if name, ok := stateNames[s]; ok {
		return name
	}
	return "state " + strconv.Itoa(int(s))
}

// parseTime reads the API's timestamps: without a zone
// ("2006-01-02T15:04:05.999", taken as UTC) or RFC 3339 with one. An empty
// string is the zero time.
func parseTime(s string) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	// Parsing accepts a fraction of any length after the seconds even though
	// the layout has none.
	if t, err := time.ParseInLocation("2006-01-02T15:04:05", s, time.UTC); err == nil {
		return t, nil
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}, fmt.Errorf("timestamp %q is neither 2006-01-02T15:04:05.999 nor RFC 3339", s)
	}
	return t.UTC(), nil
}

// ItemOptions tune an item request. The zero value asks for the server's
// defaults.
type ItemOptions struct {
	// Depth is contentLinkDepth, how deep linked content is expanded
	// (0..5). Nil means the server default, 1; new(0) asks for no
	// expansion.
	Depth *int
	// ExpandAll sets expandAllContentLinks, which also expands links to
	// whole lists.
	ExpandAll bool
}

func (o ItemOptions) query() url.Values {
	return depthQuery(url.Values{}, o.Depth, o.ExpandAll)
}

func depthQuery(q url.Values, depth *int, expandAll bool) url.Values {
	if depth != nil {
		q.Set("contentLinkDepth", strconv.Itoa(*depth))
	}
	if expandAll {
		q.Set("expandAllContentLinks", "true")
	}
	return q
}

// Item returns the content item contentID in locale. An unknown or (in the
// live flavour) unpublished item is an *Error for which IsNotFound is true.
func (c *Client) Item(ctx context.Context, locale string, contentID int64, opts ItemOptions) (*Item, error) {
	if err := need("locale", locale); err != nil {
		return nil, err
	}
	var it Item
	u, err := c.get(ctx, &it, opts.query(), locale, "item", strconv.FormatInt(contentID, 10))
	if err != nil {
		return nil, err
	}
	if it.ContentID == 0 {
		return nil, badResponse(u, "the item has no contentID")
	}
	return &it, nil
}

// MaxTake is the largest page of a list request the API serves.
const MaxTake = 250

// ListOptions select, order and shape a page of a list. The zero value asks
// for the server's defaults: the first 10 items in container order.
type ListOptions struct {
	// Take is the page size, 1..MaxTake; 0 means the server default (10).
	Take int
	// Skip is how many items to pass over first.
	Skip int
	// Sort is a dotted property path: "fields.title",
	// "properties.modified", "properties.versionID", "contentID".
	Sort string
	// Direction is "asc" or "desc"; it applies to Sort.
	Direction string
	// Filter is the filter string, for example
	// `fields.category[eq]"News" AND properties.versionID[gt]3`. It is
	// sent URL-encoded, so values with &, # or + are safe here.
	Filter string
	// Fields restricts the fields returned to these names.
	Fields []string
	// Depth is contentLinkDepth (0..5); nil means the server default, 1.
	Depth *int
	// ExpandAll sets expandAllContentLinks.
	ExpandAll bool
}

func (o ListOptions) query() url.Values {
	q := url.Values{}
	if o.Take != 0 {
		q.Set("take", strconv.Itoa(o.Take))
	}
	if o.Skip != 0 {
		q.Set("skip", strconv.Itoa(o.Skip))
	}
	if o.Sort != "" {
		q.Set("sort", o.Sort)
	}
	if o.Direction != "" {
		q.Set("direction", o.Direction)
	}
	if o.Filter != "" {
		q.Set("filter", o.Filter)
	}
	if len(o.Fields) > 0 {
		q.Set("fields", strings.Join(o.Fields, ","))
	}
	return depthQuery(q, o.Depth, o.ExpandAll)
}

// List is one page of a container's items.
type List struct {
	Items []Item `json:"items"`
	// TotalCount is the number of items matching the request's filter in
	// the whole container, not only on this page.
	TotalCount int `json:"totalCount"`
}

// UnmarshalJSON decodes a list and insists on both of its members: a body
// without items or totalCount is not a list.
func (l *List) UnmarshalJSON(b []byte) error {
	var aux struct {
		Items      []Item `json:"items"`
		TotalCount *int   `json:"totalCount"`
	}
	if err := json.Unmarshal(b, &aux); err != nil {
		return err
	}
	if aux.Items == nil || aux.TotalCount == nil {
		return errors.New("a list needs an items array and a totalCount")
	}
	l.Items, l.TotalCount = aux.Items, *aux.TotalCount
	return nil
}

// List returns one page of the items of the container referenceName in
// locale. A known but empty container is an empty List, not an error.
func (c *Client) List(ctx context.Context, locale, referenceName string, opts ListOptions) (*List, error) {
	if err := need("locale", locale, "referenceName", referenceName); err != nil {
		return nil, err
	}
	var l List
	if _, err := c.get(ctx, &l, opts.query(), locale, "list", referenceName); err != nil {
		return nil, err
	}
	return &l, nil
}

// AllItems reads the whole list by repeating List with increasing skip until
// totalCount items have been read, starting at opts.Skip, in pages of
// opts.Take (MaxTake when 0). The other options apply to every page.
//
// A server that answers an empty page, or a page of items already read,
// before totalCount is reached would make this loop forever; AllItems then
// stops with an error matching ErrBadResponse. When the container changes
// during the read, items may be missed or repeated, as with any offset
// pagination.
func (c *Client) AllItems(ctx context.Context, locale, referenceName string, opts ListOptions) ([]Item, error) {
	if opts.Take <= 0 {
		opts.Take = MaxTake
	}
	items := []Item{}
	seen := map[int64]bool{}
	for {
		at := opts.Skip
		page, err := c.List(ctx, locale, referenceName, opts)
		if err != nil {
			return nil, err
		}
		items = append(items, page.Items...)
		opts.Skip += len(page.Items)
		if opts.Skip >= page.TotalCount {
			return items, nil
		}
		fresh := false
		for _, it := range page.Items {
			if !seen[it.ContentID] {
				seen[it.ContentID], fresh = true, true
			}
		}
		if !fresh {
			return nil, fmt.Errorf("edgecms: list %q in %s: %w: the page at skip %d brought no new item, %d of %d read",
				referenceName, locale, ErrBadResponse, at, len(items), page.TotalCount)
		}
	}
}
