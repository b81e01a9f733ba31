package origin

import (
	"crypto/hkdf"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/edgecms/edgecms/fetch"
	"github.com/edgecms/edgecms/problem"
)

// Preview links open a page's draft on the editors' site. Each channel may
// have a preview URL template (PATCH /channels/{name}), such as
//
//	https://site.example/api/preview?slug={path}&key={previewLink}
//
// POST /{locale}/pages/{id}/preview-link fills it in for one page: {path}
// is the page's path in the locale, {previewLink} a signed token that
// expires after Config.PreviewLinkTTL, {locale}, {pageID}, {contentID}
// and {channel} what they say. The site's preview route sends the token,
// with the site's preview key, to POST /api/v1/preview/verify, which
// answers what it opens (instance, locale, page, path) or 401; the site
// then turns on its draft mode and reads with its preview key. The token
// is never a credential to read content: it only tells a site that holds
// a preview key of the instance that an editor asked for that preview.

// DefaultPreviewLinkTTL is how long a preview link works when
// Config.PreviewLinkTTL is 0.
const DefaultPreviewLinkTTL = 10 * time.Minute

// previewPrefix starts every preview token: the format's version.
const previewPrefix = "pv1."

// previewToken is what a preview link's token says.
type previewToken struct {
	Guid      string `json:"g"`
	Locale    string `json:"l"`
	Channel   string `json:"ch"`
	PageID    int64  `json:"p"`
	ContentID int64  `json:"c,omitempty"`
	Path      string `json:"path"`
	Expires   int64  `json:"exp"` // Unix seconds
}

// previewKey derives the key that signs preview tokens from the service's
// secret key, so that the secret itself signs nothing (it also seals
// webhook secrets). Nil without a secret.
func previewKey(secret []byte) []byte {
	if len(secret) == 0 {
		return nil
	}
	k, err := hkdf.Key(sha256.New, secret, nil, "edgecms preview token v1", 32)
	if err != nil {
		panic(err) // only for lengths far beyond 32 bytes
	}
	return k
}

// signPreview makes the token of t: the version, the claims as base64url
// JSON and the HMAC-SHA256 of both.
func signPreview(key []byte, t previewToken) string {
	claims, _ := json.Marshal(t)
	body := previewPrefix + base64.RawURLEncoding.EncodeToString(claims)
	return body + "." + base64.RawURLEncoding.EncodeToString(previewMAC(key, body))
}

func previewMAC(key []byte, body string) []byte {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(body))
	return m.Sum(nil)
}

// verifyPreview checks a token's signature, then its expiry, and returns
// its claims. A token that was changed, made with another key, or is not a
// token at all is "not valid"; a valid one past its time "has expired".
func verifyPreview(key []byte, token string, now time.Time) (previewToken, error) {
	invalid := problem.Unauthorizedf("the preview link is not valid: ask the Studio for a new one")
	dot := strings.LastIndexByte(token, '.')
	if !strings.HasPrefix(token, previewPrefix) || dot < len(previewPrefix) {
		return previewToken{}, invalid
	}
	body := token[:dot]
	mac, err := base64.RawURLEncoding.DecodeString(token[dot+1:])
	if err != nil || !hmac.Equal(mac, previewMAC(key, body)) {
		return previewToken{}, invalid
	}
	claims, err := base64.RawURLEncoding.DecodeString(body[len(previewPrefix):])
	var t previewToken
	if err != nil || json.Unmarshal(claims, &t) != nil || t.Guid == "" || t.PageID <= 0 {
		return previewToken{}, invalid
	}
	if now.Unix() >= t.Expires {
		return previewToken{}, problem.Unauthorizedf("the preview link has expired (links work for a few minutes): open the preview from the Studio again")
	}
	return t, nil
}

// previewPlaceholders are what a preview URL template may hold.
var previewPlaceholders = []string{"{path}", "{previewLink}", "{locale}", "{pageID}", "{contentID}", "{channel}"}

var placeholderPattern = regexp.MustCompile(`\{[A-Za-z]*\}`)

// checkPreviewTemplate validates a preview URL template: an absolute http
// or https URL, at most 2,000 characters, with {previewLink} and no
// placeholder it does not know.
func checkPreviewTemplate(tmpl string) error {
	const field = "previewUrl"
	if len(tmpl) > 2000 {
		return problem.Field(field, "must be at most 2000 characters")
	}
	for _, p := range placeholderPattern.FindAllString(tmpl, -1) {
		known := false
		for _, k := range previewPlaceholders {
			known = known || p == k
		}
		if !known {
			return problem.Field(field, "has the unknown placeholder %s; use %s", p, strings.Join(previewPlaceholders, ", "))
		}
	}
	if !strings.Contains(tmpl, "{previewLink}") {
		return problem.Field(field, "must hold {previewLink}, where the signed preview token goes (e.g. https://site.example/api/preview?slug={path}&key={previewLink})")
	}
	u, err := url.Parse(expandPreview(tmpl, map[string]string{"{path}": "/a", "{previewLink}": "t", "{locale}": "en-us",
		"{pageID}": "1", "{contentID}": "1", "{channel}": "website"}))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return problem.Field(field, "must be an absolute http:// or https:// URL")
	}
	return nil
}

// expandPreview fills in the placeholders of tmpl with values, escaped for
// where each one is: as path segments (keeping the slashes of {path})
// before the query, as query values after it.
func expandPreview(tmpl string, values map[string]string) string {
	query := strings.IndexAny(tmpl, "?#")
	var b strings.Builder
	last := 0
	for _, m := range placeholderPattern.FindAllStringIndex(tmpl, -1) {
		v, ok := values[tmpl[m[0]:m[1]]]
		if !ok {
			continue
		}
		b.WriteString(tmpl[last:m[0]])
		if query >= 0 && m[0] > query {
			b.WriteString(url.QueryEscape(v))
		} else {
			segs := strings.Split(v, "/")
			for i, s := range segs {
				segs[i] = url.PathEscape(s)
			}
			b.WriteString(strings.Join(segs, "/"))
		}
		last = m[1]
	}
	b.WriteString(tmpl[last:])
	return b.String()
}

// previewRoutes registers the exchange of preview tokens, outside the
// instance's management routes: a site authenticates it with its preview
// key, not a management token.
func (s *Server) previewRoutes() {
	s.app.Post("/api/v1/preview/verify", noStore, s.verifyPreviewLink)
}

// updateChannel sets a channel's preview URL template: PATCH
// /channels/{name} {previewUrl} (null or "" clears it).
func (s *Server) updateChannel(c *fiber.Ctx) error {
	var in struct {
		PreviewURL *string `json:"previewUrl"`
	}
	if err := decode(c, &in); err != nil {
		return err
	}
	if in.PreviewURL != nil {
		*in.PreviewURL = strings.TrimSpace(*in.PreviewURL)
		if *in.PreviewURL == "" {
			in.PreviewURL = nil
		} else if err := checkPreviewTemplate(*in.PreviewURL); err != nil {
			return err
		}
	}
	ch, err := s.store.SetChannelPreviewURL(c.UserContext(), instance(c), c.Params("name"), in.PreviewURL)
	if err != nil {
		return err
	}
	return c.JSON(ch)
}

// previewLink makes the preview link of a page in a locale: POST
// /{locale}/pages/{id}/preview-link {contentID?} (contentID: the item a
// dynamic page shows).
func (s *Server) previewLink(c *fiber.Ctx) error {
	n, err := id(c, "id")
	if err != nil {
		return err
	}
	var in struct {
		ContentID int64 `json:"contentID"`
	}
	if len(c.Body()) > 0 {
		if err := decode(c, &in); err != nil {
			return err
		}
	}
	if s.previewKey == nil {
		return problem.New(problem.Unavailable, "this origin has no secret key to sign preview links with (EDGECMS_SECRET_KEY)")
	}
	ctx, inst, loc := c.UserContext(), instance(c), locale(c)
	page, err := s.store.Page(ctx, inst, loc, n)
	if err != nil {
		return err
	}
	switch {
	case in.ContentID < 0:
		return problem.Field("contentID", "must be a positive integer")
	case in.ContentID > 0 && page.Dynamic == nil:
		return problem.Field("contentID", "only a dynamic page shows an item; page %d is not one", n)
	case in.ContentID > 0:
		it, err := s.store.Item(ctx, inst, loc, in.ContentID)
		if err != nil {
			return err
		}
		if !strings.EqualFold(it.ReferenceName, page.Dynamic.ReferenceName) {
			return problem.Field("contentID", "item %d is not in %s, the container of the dynamic page", in.ContentID, page.Dynamic.ReferenceName)
		}
	}
	tmpl, err := s.store.ChannelPreviewURL(ctx, inst, page.Channel)
	if err != nil {
		return err
	}
	if tmpl == "" {
		return problem.Conflictf("the channel %s has no preview URL: set one (PATCH /channels/%s, or the Studio's Settings, Channels) to preview its pages", page.Channel, page.Channel)
	}
	expires := s.now().Add(s.cfg.PreviewLinkTTL).Truncate(time.Second)
	t := previewToken{Guid: inst.Guid, Locale: loc, Channel: page.Channel, PageID: n, ContentID: in.ContentID, Path: page.Path, Expires: expires.Unix()}
	token := signPreview(s.previewKey, t)
	contentID := ""
	if in.ContentID > 0 {
		contentID = strconv.FormatInt(in.ContentID, 10)
	}
	link := expandPreview(tmpl, map[string]string{"{path}": page.Path, "{previewLink}": token, "{locale}": loc,
		"{pageID}": strconv.FormatInt(n, 10), "{contentID}": contentID, "{channel}": page.Channel})
	return c.JSON(fiber.Map{"url": link, "token": token, "expiresAt": expires.UTC(), "path": page.Path,
		"locale": loc, "pageID": n, "contentID": in.ContentID, "channel": page.Channel})
}

// previewAnswer is what POST /api/v1/preview/verify answers: what the
// link opens.
type previewAnswer struct {
	Guid      string    `json:"guid"`
	Locale    string    `json:"locale"`
	Channel   string    `json:"channel"`
	PageID    int64     `json:"pageID"`
	ContentID int64     `json:"contentID"`
	Path      string    `json:"path"`
	ExpiresAt time.Time `json:"expiresAt"`
}

// verifyPreviewLink checks a preview token for a site: POST
// /api/v1/preview/verify {token} with the APIKey header holding a preview
// key of the token's instance.
func (s *Server) verifyPreviewLink(c *fiber.Ctx) error {
	var in struct {
		Token string `json:"token"`
	}
	if err := decode(c, &in); err != nil {
		return err
	}
	if strings.TrimSpace(in.Token) == "" {
		return problem.Field("token", "is required: the token of the preview link (its {previewLink})")
	}
	if s.previewKey == nil {
		return problem.New(problem.Unavailable, "this origin has no secret key to check preview links with (EDGECMS_SECRET_KEY)")
	}
	t, err := verifyPreview(s.previewKey, strings.TrimSpace(in.Token), s.now())
	if err != nil {
		return err
	}
	ctx := c.UserContext()
	keyID, err := s.keys.check(ctx, t.Guid, c.Get("APIKey"), fetch.Preview)
	if err != nil {
		return err
	}
	if err := s.limit(ctx, fetch.Preview, keyID); err != nil {
		return err
	}
	return c.JSON(previewAnswer{Guid: t.Guid, Locale: t.Locale, Channel: t.Channel, PageID: t.PageID, ContentID: t.ContentID,
		Path: t.Path, ExpiresAt: time.Unix(t.Expires, 0).UTC()})
}

func (s *Server) now() time.Time {
	if s.cfg.Now != nil {
		return s.cfg.Now()
	}
	return time.Now()
}
