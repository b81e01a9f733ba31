package content

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/jmoiron/sqlx"

	"github.com/edgecms/edgecms/eventlog"
	"github.com/edgecms/edgecms/internal/pg"
	"github.com/edgecms/edgecms/problem"
)

// Page types.
const (
	PageStatic  = "static"
	PageDynamic = "dynamic"
	PageLink    = "link"
	PageFolder  = "folder"
)

// Visible says whether a page shows in menus and in the sitemap.
type Visible struct {
	Menu    bool `json:"menu"`
	Sitemap bool `json:"sitemap"`
}

// SEO is a page's search engine data.
type SEO struct {
	MetaDescription string `json:"metaDescription"`
	MetaKeywords    string `json:"metaKeywords"`
	MetaHTML        string `json:"metaHTML"`
	MenuVisible     *bool  `json:"menuVisible"`
	SitemapVisible  *bool  `json:"sitemapVisible"`
}

// Scripts are a page's custom scripts.
type Scripts struct {
	ExcludedFromGlobal bool    `json:"excludedFromGlobal"`
	Top                *string `json:"top"`
	Bottom             *string `json:"bottom"`
}

// PageDoc is the editable part of a page copy.
type PageDoc struct {
	Title                  string  `json:"title"`
	MenuText               string  `json:"menuText"`
	Visible                Visible `json:"visible"`
	SEO                    SEO     `json:"seo"`
	Scripts                Scripts `json:"scripts"`
	RedirectURL            string  `json:"redirectUrl"`
	SecurePage             bool    `json:"securePage"`
	ExcludeFromOutputCache bool    `json:"excludeFromOutputCache"`
}

// Scan implements sql.Scanner.
func (d *PageDoc) Scan(src any) error { return scanJSON(src, d) }

// Zones maps a zone name to the contentIDs of its components, in order.
type Zones map[string][]int64

// Scan implements sql.Scanner.
func (z *Zones) Scan(src any) error { return scanJSON(src, z) }

// Dynamic binds a dynamic page to a container: the page stands for each of
// its items, at a path made from the item's PathField.
type Dynamic struct {
	ReferenceName string `json:"referenceName"`
	PathField     string `json:"pathField"`
	// TitleField is the text field whose value titles each item's sitemap
	// node (title and menuText); empty: the model's field named title
	// (case-insensitively) when it has one, else the path value.
	TitleField string `json:"titleField,omitempty"`
}

// PageInput is what a create or save of a page may set. Nil members are
// left as they are (on create: defaults).
type PageInput struct {
	Title                  *string         `json:"title"`
	PageModel              *string         `json:"pageModel"`
	Channel                *string         `json:"channel"`
	ParentPageID           json.RawMessage `json:"parentPageID"`
	MenuText               *string         `json:"menuText"`
	Visible                *Visible        `json:"visible"`
	SEO                    *SEO            `json:"seo"`
	Scripts                *Scripts        `json:"scripts"`
	RedirectURL            *string         `json:"redirectUrl"`
	SecurePage             *bool           `json:"securePage"`
	ExcludeFromOutputCache *bool           `json:"excludeFromOutputCache"`
	Folder                 *bool           `json:"folder"`
	Dynamic                *Dynamic        `json:"dynamic"`
	// PageType, when set, makes the page static, link, folder or dynamic
	// whatever it was (folder and dynamic only turn a page into one).
	PageType *string `json:"pageType"`
	// Name is the page's URL-safe name in the copy's locale: chosen on
	// create (else made from the title), changed on save (the old path
	// then redirects to the new one).
	Name *string `json:"name"`
}

// Page is one locale's copy of a page as the management API shows it.
type Page struct {
	PageID       int64          `json:"pageID"`
	Locale       string         `json:"locale"`
	Name         string         `json:"name"`
	Path         string         `json:"path"`
	Channel      string         `json:"channel"`
	ParentPageID *int64         `json:"parentPageID"`
	PageModel    string         `json:"pageModel"`
	PageType     string         `json:"pageType"`
	Dynamic      *Dynamic       `json:"dynamic"`
	State        State          `json:"state"`
	VersionID    int64          `json:"versionID"`
	Modified     time.Time      `json:"modified"`
	Published    *PublishedInfo `json:"published"`
	PublishAt    *time.Time     `json:"publishAt"`
	UnpublishAt  *time.Time     `json:"unpublishAt"`
	PageDoc
	Zones map[string][]ZoneEntry `json:"zones"`
}

// ZoneEntry is a component in a zone.
type ZoneEntry struct {
	Module    string `json:"module"`
	ContentID int64  `json:"contentID"`
}

// pageHead is the locale-independent part of a page.
type pageHead struct {
	PageID             int64   `db:"page_id"`
	ChannelID          int64   `db:"channel_id"`
	Channel            string  `db:"channel"`
	ParentID           *int64  `db:"parent_id"`
	PageModelID        int64   `db:"page_model_id"`
	PageModel          string  `db:"page_model"`
	PageType           string  `db:"page_type"`
	DynamicContainerID *int64  `db:"dynamic_container_id"`
	DynamicContainer   *string `db:"dynamic_container"`
	DynamicPathField   *string `db:"dynamic_path_field"`
	DynamicTitleField  *string `db:"dynamic_title_field"`
}

// pageCopy is one page_copies row.
type pageCopy struct {
	Locale             string     `db:"locale"`
	Name               string     `db:"name"`
	State              State      `db:"state"`
	VersionID          int64      `db:"version_id"`
	Doc                PageDoc    `db:"doc"`
	Zones              Zones      `db:"zones"`
	Modified           time.Time  `db:"modified"`
	PublishedVersionID *int64     `db:"published_version_id"`
	PublishedDoc       *PageDoc   `db:"published_doc"`
	PublishedZones     *Zones     `db:"published_zones"`
	PublishedModified  *time.Time `db:"published_modified"`
	PublishAt          *time.Time `db:"publish_at"`
	UnpublishAt        *time.Time `db:"unpublish_at"`
}

const (
	pageHeadColumns = `p.page_id, p.channel_id, ch.name AS channel, p.parent_id, p.page_model_id, pm.name AS page_model,
		p.page_type, p.dynamic_container_id, dc.reference_name AS dynamic_container, p.dynamic_path_field, p.dynamic_title_field`
	pageHeadFrom = ` FROM pages p JOIN channels ch ON ch.id = p.channel_id JOIN page_models pm ON pm.id = p.page_model_id
		LEFT JOIN containers dc ON dc.id = p.dynamic_container_id`
	lockPageSQL     = `SELECT ` + pageHeadColumns + pageHeadFrom + ` WHERE p.instance_id = $1 AND p.page_id = $2 FOR UPDATE OF p`
	pageCopyColumns = `locale, name, state, version_id, doc, zones, modified, published_version_id, published_doc,
		published_zones, published_modified, publish_at, unpublish_at`
	selectPageCopySQL = `SELECT ` + pageCopyColumns + ` FROM page_copies WHERE page_id = $1 AND locale = $2`
	lockChannelSQL    = `SELECT id FROM channels WHERE id = $1 FOR UPDATE`
	siblingNamesSQL   = `SELECT lower(name) FROM page_copies WHERE channel_id = $1 AND coalesce(parent_id, 0) = coalesce($2::bigint, 0) AND locale = $3 AND state <> 3 AND page_id <> $4`
	insertPageSQL     = `INSERT INTO pages (instance_id, channel_id, parent_id, sort_order, page_model_id, page_type, dynamic_container_id, dynamic_path_field, dynamic_title_field)
		VALUES ($1, $2, $3, coalesce((SELECT max(sort_order) FROM pages WHERE channel_id = $2 AND coalesce(parent_id, 0) = coalesce($3::bigint, 0)), 0) + 1, $4, $5, $6, $7, $8)
		RETURNING page_id`
	insertPageCopySQL = `INSERT INTO page_copies (page_id, instance_id, locale, channel_id, parent_id, name, state, version_id, doc, zones, modified)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)`
	updatePageCopySQL = `UPDATE page_copies SET state = $3, version_id = $4, doc = $5, zones = $6, modified = $7,
			published_version_id = $8, published_doc = $9, published_zones = $10, published_modified = $11,
			publish_at = $12, unpublish_at = $13
		WHERE page_id = $1 AND locale = $2`
	updatePageHeadSQL = `UPDATE pages SET parent_id = $2, page_type = $3, dynamic_container_id = $4, dynamic_path_field = $5, dynamic_title_field = $6 WHERE page_id = $1`
	moveCopiesSQL     = `UPDATE page_copies SET parent_id = $2 WHERE page_id = $1`
	liveChildrenSQL   = `SELECT count(*) FROM pages p JOIN page_copies c ON c.page_id = p.page_id
		WHERE p.parent_id = $1 AND c.locale = $2 AND c.state <> 3`
	ancestorsSQL = `WITH RECURSIVE up(id, parent) AS (
			SELECT page_id, parent_id FROM pages WHERE page_id = $1
			UNION ALL SELECT p.page_id, p.parent_id FROM pages p JOIN up ON p.page_id = up.parent)
		SELECT id FROM up`
	pagePathSQL = `WITH RECURSIVE up(id, parent, depth) AS (
			SELECT page_id, parent_id, 0 FROM pages WHERE page_id = $1
			UNION ALL SELECT p.page_id, p.parent_id, up.depth + 1 FROM pages p JOIN up ON p.page_id = up.parent)
		SELECT coalesce(c.name, '') FROM up LEFT JOIN page_copies c ON c.page_id = up.id AND c.locale = $2 ORDER BY up.depth DESC`
)

func lockPage(ctx context.Context, tx *sqlx.Tx, inst Instance, pageID int64) (pageHead, error) {
	var h pageHead
	err := tx.GetContext(ctx, &h, lockPageSQL, inst.ID, pageID)
	return h, notFound(err, "page %d not found", pageID)
}

func loadPageCopy(ctx context.Context, q sqlx.QueryerContext, pageID int64, locale string) (pageCopy, error) {
	var c pageCopy
	err := sqlx.GetContext(ctx, q, &c, selectPageCopySQL, pageID, locale)
	return c, notFound(err, "page %d has no copy in locale %q", pageID, locale)
}

func writePageCopy(ctx context.Context, tx *sqlx.Tx, pageID int64, c pageCopy) error {
	doc, _ := json.Marshal(c.Doc)
	zones, _ := json.Marshal(c.Zones)
	var pdoc, pzones []byte
	if c.PublishedDoc != nil {
		pdoc, _ = json.Marshal(c.PublishedDoc)
		pzones, _ = json.Marshal(c.PublishedZones)
	}
	_, err := tx.ExecContext(ctx, updatePageCopySQL, pageID, c.Locale, c.State, c.VersionID, doc, zones, c.Modified,
		c.PublishedVersionID, pdoc, pzones, c.PublishedModified, c.PublishAt, c.UnpublishAt)
	return err
}

func pageEvent(pageID int64, locale string, state eventlog.State, version int64, at time.Time) eventlog.Event {
	if state == eventlog.Deleted {
		version = 0 // the spec: pageVersionID is always 0 when a page is deleted
	}
	return eventlog.Event{State: state, Subject: eventlog.SubjectPage, Locale: ptr(locale), PageID: ptr(pageID), VersionID: ptr(version), ChangeDate: at}
}

// applyDoc applies the editable members of in to d and validates the result.
func applyDoc(d *PageDoc, in PageInput) error {
	var errs []problem.FieldError
	if in.Title != nil {
		d.Title = strings.TrimSpace(*in.Title)
	}
	if d.Title == "" || utf8.RuneCountInString(d.Title) > 200 {
		errs = append(errs, problem.FieldError{Field: "title", Reason: "must be 1 to 200 characters"})
	}
	if in.MenuText != nil {
		d.MenuText = *in.MenuText
	}
	if in.Visible != nil {
		d.Visible = *in.Visible
	}
	if in.SEO != nil {
		d.SEO = *in.SEO
	}
	if in.Scripts != nil {
		d.Scripts = *in.Scripts
	}
	if in.RedirectURL != nil {
		d.RedirectURL = strings.TrimSpace(*in.RedirectURL)
		if u, err := url.Parse(d.RedirectURL); d.RedirectURL != "" && (err != nil || (u.Scheme != "http" && u.Scheme != "https" && !strings.HasPrefix(d.RedirectURL, "/") && !strings.HasPrefix(d.RedirectURL, "~/"))) {
			errs = append(errs, problem.FieldError{Field: "redirectUrl", Reason: "must be an http(s) URL or a site path starting with /"})
		}
	}
	if in.SecurePage != nil {
		d.SecurePage = *in.SecurePage
	}
	if in.ExcludeFromOutputCache != nil {
		d.ExcludeFromOutputCache = *in.ExcludeFromOutputCache
	}
	if d.MenuText == "" {
		d.MenuText = d.Title
	}
	return problem.Fields(errs)
}

// parentInput decodes parentPageID: absent (keep), null (root) or an id.
func parentInput(raw json.RawMessage) (set bool, id *int64, err error) {
	if len(raw) == 0 {
		return false, nil, nil
	}
	if string(raw) == "null" {
		return true, nil, nil
	}
	var n int64
	if err := json.Unmarshal(raw, &n); err != nil || n <= 0 {
		return false, nil, problem.Field("parentPageID", "must be a page id or null")
	}
	return true, &n, nil
}

// applyType sets the page type of h from the pageType, folder, dynamic and
// redirectUrl members of in; redirect is the copy's redirect URL once in is
// applied.
func applyType(ctx context.Context, tx *sqlx.Tx, inst Instance, h *pageHead, in PageInput, redirect string) error {
	if in.Folder != nil && *in.Folder && in.Dynamic != nil {
		return problem.Field("folder", "a page cannot be both a folder and dynamic")
	}
	if in.PageType != nil {
		return applyPageType(ctx, tx, inst, h, in, redirect)
	}
	switch {
	case in.Folder != nil && *in.Folder:
		h.PageType, h.DynamicContainerID, h.DynamicPathField, h.DynamicTitleField = PageFolder, nil, nil, nil
	case in.Dynamic != nil:
		return setDynamic(ctx, tx, inst, h, *in.Dynamic)
	// The type belongs to the page and the redirect to each copy: only a
	// save that sets the redirect (or a new page, or one that stops being a
	// folder) switches between static and link.
	case h.PageType == "" || (in.Folder != nil && !*in.Folder && h.PageType == PageFolder) ||
		(in.RedirectURL != nil && (h.PageType == PageStatic || h.PageType == PageLink)):
		h.PageType, h.DynamicContainerID, h.DynamicPathField, h.DynamicTitleField = PageStatic, nil, nil, nil
		if redirect != "" {
			h.PageType = PageLink
		}
	}
	return nil
}

// applyPageType sets the type in.PageType names, whatever the page was:
// the way back from a folder or a dynamic page to a plain one. The other
// members of in must agree with it.
func applyPageType(ctx context.Context, tx *sqlx.Tx, inst Instance, h *pageHead, in PageInput, redirect string) error {
	t := *in.PageType
	switch t {
	case PageStatic, PageLink, PageFolder, PageDynamic:
	default:
		return problem.Field("pageType", "must be static, link, folder or dynamic")
	}
	if in.Folder != nil && *in.Folder != (t == PageFolder) {
		return problem.Field("folder", "contradicts pageType %q", t)
	}
	if in.Dynamic != nil && t != PageDynamic {
		return problem.Field("dynamic", "only a page of pageType dynamic takes it, not %q", t)
	}
	switch t {
	case PageDynamic:
		if in.Dynamic != nil {
			return setDynamic(ctx, tx, inst, h, *in.Dynamic)
		}
		if h.PageType != PageDynamic {
			return problem.Field("dynamic", "is required to make a page dynamic: {referenceName, pathField, titleField?}")
		}
		return nil
	case PageStatic:
		if redirect != "" {
			return problem.Field("redirectUrl", `a static page has none: send "redirectUrl": "" with it, or pageType link`)
		}
	case PageLink:
		if redirect == "" {
			return problem.Field("redirectUrl", "is required for pageType link")
		}
	}
	h.PageType, h.DynamicContainerID, h.DynamicPathField, h.DynamicTitleField = t, nil, nil, nil
	return nil
}

// setDynamic makes h a dynamic page of the container and fields d names.
func setDynamic(ctx context.Context, tx *sqlx.Tx, inst Instance, h *pageHead, d Dynamic) error {
	c, err := containerByName(ctx, tx, inst, d.ReferenceName)
	if err != nil {
		return err
	}
	var m Model
	if err := tx.GetContext(ctx, &m, selectModelByIDSQL, c.ModelID); err != nil {
		return err
	}
	f, ok := m.Field(d.PathField)
	if !ok || f.Type != TypeText {
		return problem.Field("dynamic.pathField", "must be a text field of model %q", m.Name)
	}
	h.PageType, h.DynamicContainerID, h.DynamicPathField, h.DynamicTitleField = PageDynamic, &c.ID, &f.Name, nil
	if d.TitleField != "" {
		tf, ok := m.Field(d.TitleField)
		if !ok || (tf.Type != TypeText && tf.Type != TypeHTML) {
			return problem.Field("dynamic.titleField", "must be a text field of model %q", m.Name)
		}
		h.DynamicTitleField = &tf.Name
	}
	return nil
}

// takeName makes the name of a new page copy from its title, unique among
// the copy's live siblings in its locale.
func takeName(ctx context.Context, tx *sqlx.Tx, h pageHead, locale, title string) (string, error) {
	var names []string
	if err := tx.SelectContext(ctx, &names, siblingNamesSQL, h.ChannelID, h.ParentID, locale, h.PageID); err != nil {
		return "", err
	}
	taken := map[string]bool{}
	for _, n := range names {
		taken[n] = true
	}
	return uniqueName(PageName(title), taken), nil
}

// CreatePage creates a page from a page model with its first copy in locale.
// Its name is made from the title now and never changes.
func (s *Store) CreatePage(ctx context.Context, inst Instance, locale string, in PageInput) (Page, error) {
	var pageID int64
	err := s.transact(ctx, func(tx *sqlx.Tx) error {
		if in.PageModel == nil || *in.PageModel == "" {
			return problem.Field("pageModel", "is required")
		}
		pm, err := pageModelByName(ctx, tx, inst, *in.PageModel)
		if err != nil {
			return err
		}
		channel := "website"
		if in.Channel != nil {
			channel = *in.Channel
		}
		ch, err := channelByName(ctx, tx, inst, channel)
		if err != nil {
			return err
		}
		// One page at a time per channel, so sibling names and order stay unique.
		if _, err := tx.ExecContext(ctx, lockChannelSQL, ch.ID); err != nil {
			return err
		}
		h := pageHead{ChannelID: ch.ID, PageModelID: pm.ID}
		_, parent, err := parentInput(in.ParentPageID)
		if err != nil {
			return err
		}
		if parent != nil {
			ph, err := lockPage(ctx, tx, inst, *parent)
			if err != nil {
				return err
			}
			if ph.ChannelID != ch.ID {
				return problem.Field("parentPageID", "page %d is in channel %q", *parent, ph.Channel)
			}
			pc, err := loadPageCopy(ctx, tx, *parent, locale)
			if err != nil {
				return problem.Conflictf("parent page %d has no copy in locale %q; create it first", *parent, locale)
			}
			if pc.State == Deleted {
				return problem.Conflictf("parent page %d is deleted in locale %q", *parent, locale)
			}
			h.ParentID = parent
		}
		var doc PageDoc
		doc.Visible = Visible{Menu: true, Sitemap: true}
		if err := applyDoc(&doc, in); err != nil {
			return err
		}
		if err := applyType(ctx, tx, inst, &h, in, doc.RedirectURL); err != nil {
			return err
		}
		if err := tx.GetContext(ctx, &pageID, insertPageSQL, inst.ID, h.ChannelID, h.ParentID, h.PageModelID, h.PageType, h.DynamicContainerID, h.DynamicPathField, h.DynamicTitleField); err != nil {
			return err
		}
		h.PageID = pageID
		zones := Zones{}
		for _, z := range pm.Zones {
			zones[z] = []int64{}
		}
		return insertPageCopy(ctx, tx, inst, h, locale, in.Name, doc, zones, s.now())
	})
	if err != nil {
		return Page{}, fmt.Errorf("create page: %w", err)
	}
	return s.Page(ctx, inst, locale, pageID)
}

// insertPageCopy creates the copy of page h in locale, named chosen (or,
// when chosen is nil, from the title).
func insertPageCopy(ctx context.Context, tx *sqlx.Tx, inst Instance, h pageHead, locale string, chosen *string, doc PageDoc, zones Zones, now time.Time) error {
	var name string
	var err error
	if chosen != nil {
		name = *chosen
		if err := checkPageName(name); err != nil {
			return err
		}
		if err := nameFree(ctx, tx, h, locale, name); err != nil {
			return err
		}
	} else if name, err = takeName(ctx, tx, h, locale, doc.Title); err != nil {
		return err
	}
	v, err := nextVersion(ctx, tx)
	if err != nil {
		return err
	}
	docJSON, _ := json.Marshal(doc)
	zonesJSON, _ := json.Marshal(zones)
	if _, err := tx.ExecContext(ctx, insertPageCopySQL, h.PageID, inst.ID, locale, h.ChannelID, h.ParentID, name, Staging, v, docJSON, zonesJSON, now); err != nil {
		if pg.IsUniqueViolation(err) {
			return problem.Conflictf("a sibling page is already named %q", name)
		}
		return unknownLocale(err, locale)
	}
	return appendEvent(ctx, tx, inst, pageEvent(h.PageID, locale, eventlog.Saved, v, now))
}

// SavePage saves the editable fields of the copy of a page in locale, and
// moves it when parentPageID is given. For a locale with no copy yet it
// creates the copy (a title is then required). The name never changes.
func (s *Store) SavePage(ctx context.Context, inst Instance, locale string, pageID int64, in PageInput) (Page, error) {
	if in.PageModel != nil {
		return Page{}, problem.Field("pageModel", "the model of a page cannot change")
	}
	err := s.transact(ctx, func(tx *sqlx.Tx) error {
		h, err := lockPage(ctx, tx, inst, pageID)
		if err != nil {
			return err
		}
		if in.Channel != nil && !strings.EqualFold(*in.Channel, h.Channel) {
			return problem.Field("channel", "a page cannot move to another channel")
		}
		if _, err := tx.ExecContext(ctx, lockChannelSQL, h.ChannelID); err != nil {
			return err
		}
		moved, err := movePage(ctx, tx, inst, &h, in.ParentPageID)
		if err != nil {
			return err
		}
		if moved {
			// The page moves in every locale: each copy's sitemap changes.
			if err := appendMoveEvents(ctx, tx, inst, pageID, locale, s.now()); err != nil {
				return err
			}
		}
		c, err := loadPageCopy(ctx, tx, pageID, locale)
		if err == nil {
			err = checkIfMatch(ctx, c.VersionID, true)
		} else if problem.Is(err, problem.NotFound) {
			if err := checkIfMatch(ctx, 0, false); err != nil {
				return err
			}
		}
		if problem.Is(err, problem.NotFound) {
			var doc PageDoc
			doc.Visible = Visible{Menu: true, Sitemap: true}
			if err := applyDoc(&doc, in); err != nil {
				return err
			}
			if err := applyType(ctx, tx, inst, &h, in, doc.RedirectURL); err != nil {
				return err
			}
			if err := updateHead(ctx, tx, h); err != nil {
				return err
			}
			pm, err := pageModelByName(ctx, tx, inst, h.PageModel)
			if err != nil {
				return err
			}
			zones := Zones{}
			for _, z := range pm.Zones {
				zones[z] = []int64{}
			}
			return insertPageCopy(ctx, tx, inst, h, locale, in.Name, doc, zones, s.now())
		} else if err != nil {
			return err
		}
		next, err := Transition(c.State, c.PublishedVersionID != nil, ActionSave)
		if err != nil {
			return err
		}
		if err := applyDoc(&c.Doc, in); err != nil {
			return err
		}
		if err := applyType(ctx, tx, inst, &h, in, c.Doc.RedirectURL); err != nil {
			return err
		}
		if err := updateHead(ctx, tx, h); err != nil {
			return err
		}
		if in.Name != nil && *in.Name != c.Name {
			if err := renamePage(ctx, tx, inst, h, locale, c.Name, *in.Name, s.now()); err != nil {
				return err
			}
		}
		return savePageCopy(ctx, tx, inst, pageID, c, next, s.now())
	})
	if err != nil {
		return Page{}, fmt.Errorf("save page %d: %w", pageID, err)
	}
	return s.Page(ctx, inst, locale, pageID)
}

func updateHead(ctx context.Context, tx *sqlx.Tx, h pageHead) error {
	_, err := tx.ExecContext(ctx, updatePageHeadSQL, h.PageID, h.ParentID, h.PageType, h.DynamicContainerID, h.DynamicPathField, h.DynamicTitleField)
	return err
}

// savePageCopy writes c as a new version in state next and appends the Saved event.
func savePageCopy(ctx context.Context, tx *sqlx.Tx, inst Instance, pageID int64, c pageCopy, next State, now time.Time) error {
	v, err := nextVersion(ctx, tx)
	if err != nil {
		return err
	}
	c.State, c.VersionID, c.Modified = next, v, now
	if err := writePageCopy(ctx, tx, pageID, c); err != nil {
		return err
	}
	return appendEvent(ctx, tx, inst, pageEvent(pageID, c.Locale, eventlog.Saved, v, now))
}

// movePage moves a page under another parent (or to the root) when raw
// says so, and reports whether it moved.
func movePage(ctx context.Context, tx *sqlx.Tx, inst Instance, h *pageHead, raw json.RawMessage) (bool, error) {
	set, parent, err := parentInput(raw)
	if err != nil || !set {
		return false, err
	}
	if (parent == nil && h.ParentID == nil) || (parent != nil && h.ParentID != nil && *parent == *h.ParentID) {
		return false, nil
	}
	if parent != nil {
		ph, err := lockPage(ctx, tx, inst, *parent)
		if err != nil {
			return false, err
		}
		if ph.ChannelID != h.ChannelID {
			return false, problem.Field("parentPageID", "page %d is in channel %q", *parent, ph.Channel)
		}
		var up []int64
		if err := tx.SelectContext(ctx, &up, ancestorsSQL, *parent); err != nil {
			return false, err
		}
		for _, id := range up {
			if id == h.PageID {
				return false, problem.Field("parentPageID", "a page cannot move under itself or its descendants")
			}
		}
	}
	h.ParentID = parent
	if _, err := tx.ExecContext(ctx, moveCopiesSQL, h.PageID, parent); err != nil {
		if pg.IsUniqueViolation(err) {
			return false, problem.Conflictf("the new parent already has a child page with the same name")
		}
		return false, err
	}
	return true, nil
}

// otherCopiesSQL lists the live copies of a page in the locales but one.
const otherCopiesSQL = `SELECT locale, version_id FROM page_copies
	WHERE page_id = $1 AND locale <> $2 AND state <> 3 ORDER BY locale`

// appendMoveEvents writes a Saved event for every live copy of a moved page
// but the one in locale (whose save writes its own): the page's place in
// the tree, and so its path in each locale's sitemap, changed in every
// locale. The events carry each copy's current version, which the move
// does not change.
func appendMoveEvents(ctx context.Context, tx *sqlx.Tx, inst Instance, pageID int64, locale string, now time.Time) error {
	var copies []struct {
		Locale    string `db:"locale"`
		VersionID int64  `db:"version_id"`
	}
	if err := tx.SelectContext(ctx, &copies, otherCopiesSQL, pageID, locale); err != nil {
		return err
	}
	for _, c := range copies {
		if err := appendEvent(ctx, tx, inst, pageEvent(pageID, c.Locale, eventlog.Saved, c.VersionID, now)); err != nil {
			return err
		}
	}
	return nil
}

// PageAction takes a workflow action on the copy of a page in locale.
// Publishing a page also publishes the components in its zones.
func (s *Store) PageAction(ctx context.Context, inst Instance, locale string, pageID int64, a Action) (Status, error) {
	if a == ActionSave {
		return Status{}, problem.Invalidf("save is not an action; PUT the page")
	}
	var st Status
	err := s.transact(ctx, func(tx *sqlx.Tx) error {
		var err error
		st, err = pageAction(ctx, tx, inst, locale, pageID, a, s.now())
		return err
	})
	if err != nil {
		return Status{}, fmt.Errorf("%s page %d: %w", a, pageID, err)
	}
	return st, nil
}

func pageAction(ctx context.Context, tx *sqlx.Tx, inst Instance, locale string, pageID int64, a Action, now time.Time) (Status, error) {
	if _, err := lockPage(ctx, tx, inst, pageID); err != nil {
		return Status{}, err
	}
	c, err := loadPageCopy(ctx, tx, pageID, locale)
	if err != nil {
		return Status{}, err
	}
	if err := checkIfMatch(ctx, c.VersionID, true); err != nil {
		return Status{}, err
	}
	if a == ActionPublish && c.State == Published {
		// The page has no changes, but its components may: an edit of a
		// component in place saves the component, not the page, and the
		// editor then publishes the page.
		n, err := publishComponents(ctx, tx, inst, locale, c.Zones, now)
		if err != nil {
			return Status{}, err
		}
		if n > 0 {
			if err := appendEvent(ctx, tx, inst, pageEvent(pageID, locale, a.EventState(), c.VersionID, now)); err != nil {
				return Status{}, err
			}
			return Status{PageID: pageID, VersionID: c.VersionID, State: Published}, nil
		}
	}
	next, err := Transition(c.State, c.PublishedVersionID != nil, a)
	if err != nil {
		return Status{}, err
	}
	switch a {
	case ActionPublish:
		if _, err := publishComponents(ctx, tx, inst, locale, c.Zones, now); err != nil {
			return Status{}, err
		}
		c.PublishedVersionID, c.PublishedDoc, c.PublishedZones, c.PublishedModified = ptr(c.VersionID), ptr(c.Doc), ptr(c.Zones), ptr(c.Modified)
		c.PublishAt = nil
	case ActionUnpublish:
		c.PublishedVersionID, c.PublishedDoc, c.PublishedZones, c.PublishedModified = nil, nil, nil, nil
		c.UnpublishAt = nil
	case ActionDelete:
		var n int
		if err := tx.GetContext(ctx, &n, liveChildrenSQL, pageID, locale); err != nil {
			return Status{}, err
		}
		if n > 0 {
			return Status{}, problem.Conflictf("cannot delete: page %d has %d child pages in locale %q; delete or move them first", pageID, n, locale)
		}
		c.PublishedVersionID, c.PublishedDoc, c.PublishedZones, c.PublishedModified = nil, nil, nil, nil
		c.PublishAt, c.UnpublishAt = nil, nil
	}
	c.State = next
	if err := writePageCopy(ctx, tx, pageID, c); err != nil {
		return Status{}, err
	}
	if err := appendEvent(ctx, tx, inst, pageEvent(pageID, locale, a.EventState(), c.VersionID, now)); err != nil {
		return Status{}, err
	}
	return Status{PageID: pageID, VersionID: c.VersionID, State: next}, nil
}

// publishComponents publishes every component in zones whose copy in locale
// has changes that are not published, and returns how many it published.
func publishComponents(ctx context.Context, tx *sqlx.Tx, inst Instance, locale string, zones Zones, now time.Time) (int, error) {
	n := 0
	for _, ids := range zones {
		for _, id := range ids {
			h, _, err := lockItem(ctx, tx, inst, id)
			if err != nil {
				return 0, err
			}
			c, err := loadCopy(ctx, tx, id, locale)
			if err != nil {
				return 0, err
			}
			if c.State == Published || c.State == Deleted {
				continue
			}
			if _, err := applyItemAction(ctx, tx, inst, h, c, ActionPublish, now); err != nil {
				return 0, err
			}
			n++
		}
	}
	return n, nil
}

// DeletePage deletes the copy of a page in locale. A page with live child
// pages in that locale cannot be deleted.
func (s *Store) DeletePage(ctx context.Context, inst Instance, locale string, pageID int64) error {
	_, err := s.PageAction(ctx, inst, locale, pageID, ActionDelete)
	return err
}

// AddComponent creates a component of a component model with field values
// and appends it to a zone of the page copy in locale (a save of the page).
func (s *Store) AddComponent(ctx context.Context, inst Instance, locale string, pageID int64, zone, module string, fields map[string]json.RawMessage) (int64, int, error) {
	var id int64
	var pos int
	err := s.transact(ctx, func(tx *sqlx.Tx) error {
		c, zoneName, next, err := lockZone(ctx, tx, inst, locale, pageID, zone)
		if err != nil {
			return err
		}
		m, err := modelByName(ctx, tx, inst, module)
		if err != nil {
			return err
		}
		if m.Kind != "component" {
			return problem.Field("module", "model %q is a content model; zones hold component models", m.Name)
		}
		st, err := createItem(ctx, tx, inst, locale, m, nil, fields, s.now())
		if err != nil {
			return err
		}
		id = st.ContentID
		c.Zones[zoneName] = append(c.Zones[zoneName], id)
		pos = len(c.Zones[zoneName]) - 1
		return savePageCopy(ctx, tx, inst, pageID, c, next, s.now())
	})
	if err != nil {
		return 0, 0, fmt.Errorf("add component to page %d: %w", pageID, err)
	}
	return id, pos, nil
}

// lockZone locks a page, loads its copy in locale and resolves the zone name
// (case-insensitively). It returns the state a save moves the copy to.
func lockZone(ctx context.Context, tx *sqlx.Tx, inst Instance, locale string, pageID int64, zone string) (pageCopy, string, State, error) {
	h, err := lockPage(ctx, tx, inst, pageID)
	if err != nil {
		return pageCopy{}, "", 0, err
	}
	c, err := loadPageCopy(ctx, tx, pageID, locale)
	if err != nil {
		return pageCopy{}, "", 0, err
	}
	if err := checkIfMatch(ctx, c.VersionID, true); err != nil {
		return pageCopy{}, "", 0, err
	}
	next, err := Transition(c.State, c.PublishedVersionID != nil, ActionSave)
	if err != nil {
		return pageCopy{}, "", 0, err
	}
	for name := range c.Zones {
		if strings.EqualFold(name, zone) {
			return c, name, next, nil
		}
	}
	return pageCopy{}, "", 0, problem.NotFoundf("page model %q has no zone %q", h.PageModel, zone)
}

// RemoveComponent removes a component from a zone of the page copy in locale
// and deletes the component's copy.
func (s *Store) RemoveComponent(ctx context.Context, inst Instance, locale string, pageID int64, zone string, contentID int64) error {
	err := s.transact(ctx, func(tx *sqlx.Tx) error {
		c, zoneName, next, err := lockZone(ctx, tx, inst, locale, pageID, zone)
		if err != nil {
			return err
		}
		ids := c.Zones[zoneName]
		i := indexOf(ids, contentID)
		if i < 0 {
			return problem.NotFoundf("zone %q of page %d has no component %d", zoneName, pageID, contentID)
		}
		c.Zones[zoneName] = append(ids[:i:i], ids[i+1:]...)
		if err := savePageCopy(ctx, tx, inst, pageID, c, next, s.now()); err != nil {
			return err
		}
		h, _, err := lockItem(ctx, tx, inst, contentID)
		if err != nil {
			return err
		}
		ic, err := loadCopy(ctx, tx, contentID, locale)
		if err != nil {
			return err
		}
		if ic.State == Deleted {
			return nil
		}
		_, err = applyItemAction(ctx, tx, inst, h, ic, ActionDelete, s.now())
		return err
	})
	if err != nil {
		return fmt.Errorf("remove component %d from page %d: %w", contentID, pageID, err)
	}
	return nil
}

// ReorderZone sets the order of a zone's components; contentIDs must list
// every component of the zone once.
func (s *Store) ReorderZone(ctx context.Context, inst Instance, locale string, pageID int64, zone string, contentIDs []int64) error {
	err := s.transact(ctx, func(tx *sqlx.Tx) error {
		c, zoneName, next, err := lockZone(ctx, tx, inst, locale, pageID, zone)
		if err != nil {
			return err
		}
		have := c.Zones[zoneName]
		if len(contentIDs) != len(have) {
			return problem.Field("contentIDs", "must list each of the zone's %d components once", len(have))
		}
		seen := map[int64]bool{}
		for _, id := range contentIDs {
			if indexOf(have, id) < 0 || seen[id] {
				return problem.Field("contentIDs", "must list each of the zone's %d components once (%d is not in the zone or repeated)", len(have), id)
			}
			seen[id] = true
		}
		c.Zones[zoneName] = contentIDs
		return savePageCopy(ctx, tx, inst, pageID, c, next, s.now())
	})
	if err != nil {
		return fmt.Errorf("reorder zone %q of page %d: %w", zone, pageID, err)
	}
	return nil
}

func indexOf(ids []int64, id int64) int {
	for i, v := range ids {
		if v == id {
			return i
		}
	}
	return -1
}
