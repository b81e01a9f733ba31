// Package media knows the files editors upload (assets): which types are
// accepted and how their type and pixel size are read from their bytes,
// where their bytes live in the object store, the URLs they are served at,
// the headers they are served with, and the image transforms a URL may ask
// for (transform.go). It uses no database, so that edges, which serve assets
// straight from the store, share it with the origin.
//
// An asset's bytes are stored under {guid}/assets/{sha256}.{ext}: the same
// bytes always have the same key, so they never change and are cached for
// good. They are served at the same path below the public URL
// (EDGECMS_PUBLIC_URL): {public URL}/{guid}/assets/{sha256}.{ext}, by edges
// from the store and by the origin. Transformed variants are stored under
// {guid}/assets/v/{sha256}/{transform}.{ext} (see Transform.Key).
package media

import (
	"net/url"
	"strings"
)

// Type is an accepted type of asset.
type Type struct {
	// ContentType is the media type the bytes are served with.
	ContentType string
	// Ext is the extension of the bytes' key (without the dot).
	Ext string
	// Raster is true for the images that transforms can decode (PNG, JPEG,
	// GIF, WebP).
	Raster bool
	// Attachment is true for the types that browsers are told to download
	// rather than show in place (Content-Disposition: attachment).
	Attachment bool
}

// The accepted types. AVIF is shown in place but not transformed (no
// pure-Go decoder exists); SVG is shown in place under a policy that keeps
// its scripts from running (see Headers); PDF is downloaded.
var (
	PNG  = Type{ContentType: "image/png", Ext: "png", Raster: true}
	JPEG = Type{ContentType: "image/jpeg", Ext: "jpg", Raster: true}
	GIF  = Type{ContentType: "image/gif", Ext: "gif", Raster: true}
	WebP = Type{ContentType: "image/webp", Ext: "webp", Raster: true}
	AVIF = Type{ContentType: "image/avif", Ext: "avif"}
	SVG  = Type{ContentType: "image/svg+xml", Ext: "svg"}
	PDF  = Type{ContentType: "application/pdf", Ext: "pdf", Attachment: true}
)

// Types lists every accepted type.
var Types = []Type{PNG, JPEG, GIF, WebP, AVIF, SVG, PDF}

// TypeOfExt returns the type whose key extension is ext.
func TypeOfExt(ext string) (Type, bool) {
	for _, t := range Types {
		if t.Ext == ext {
			return t, true
		}
	}
	return Type{}, false
}

// Accepted describes the accepted types for messages.
const Accepted = "PNG, JPEG, GIF, WebP and AVIF images, SVG drawings and PDF documents"

// Name is the file name of bytes in the store: {sha256}.{ext}.
func Name(sha256Hex string, t Type) string { return sha256Hex + "." + t.Ext }

// AssetKey is the object key of the asset file name (as Name makes it) of
// instance guid: {guid}/assets/{name}.
func AssetKey(guid, name string) string { return strings.ToLower(guid) + "/assets/" + name }

// ParseName reads an asset file name: 64 lower-case hex digits, a dot and
// the extension of an accepted type. It returns the hash and the type.
func ParseName(name string) (hash string, t Type, ok bool) {
	hash, ext, found := strings.Cut(name, ".")
	if !found || len(hash) != 64 || strings.Trim(hash, "0123456789abcdef") != "" {
		return "", Type{}, false
	}
	t, ok = TypeOfExt(ext)
	return hash, t, ok
}

// ParseKey reads the object key of asset bytes, {guid}/assets/{name}, as
// AssetKey makes it. The guid is returned as it is in the key (lower case);
// validGuid checks it.
func ParseKey(key string) (guid, hash string, t Type, ok bool) {
	guid, rest, found := strings.Cut(key, "/assets/")
	if !found || !validGuid(guid) || strings.Contains(rest, "/") {
		return "", "", Type{}, false
	}
	hash, t, ok = ParseName(rest)
	return guid, hash, t, ok
}

// validGuid accepts the lower-case form of an instance guid: letters,
// digits and hyphens, as content.NormalizeGuid makes it.
func validGuid(g string) bool {
	if g == "" || len(g) > 64 || g[0] == '-' {
		return false
	}
	for i := 0; i < len(g); i++ {
		c := g[i]
		if !('a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '-') {
			return false
		}
	}
	return true
}

// Headers are the headers asset bytes of type t are served with, beside
// Content-Type and the cache policy: nosniff always, so that no browser
// takes them for another type; for SVG a Content-Security-Policy that
// keeps a drawing opened on its own from running scripts or loading
// anything (an <img> runs none anyway); attachment for the types browsers
// should download rather than show.
func Headers(t Type) [][2]string {
	h := [][2]string{{"X-Content-Type-Options", "nosniff"}}
	if t == SVG {
		h = append(h, [2]string{"Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'"})
	}
	if t.Attachment {
		h = append(h, [2]string{"Content-Disposition", "attachment"})
	}
	return h
}

// CacheControl is the cache policy of asset bytes and their variants:
// their address is their content hash, so they never change.
const CacheControl = "public, max-age=31536000, immutable"

// PublicURL is the absolute URL (scheme, host, optional path) that asset
// keys are served below: EDGECMS_PUBLIC_URL.
type PublicURL string

// ParsePublicURL checks a public URL: http or https, a host, no query,
// fragment or credentials. A trailing slash is dropped.
func ParsePublicURL(raw string) (PublicURL, error) {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil ||
		u.RawQuery != "" || u.Fragment != "" || strings.HasSuffix(raw, "?") || strings.HasSuffix(raw, "#") {
		return "", errBadPublicURL
	}
	return PublicURL(strings.TrimRight(raw, "/")), nil
}

type constError string

func (e constError) Error() string { return string(e) }

const errBadPublicURL = constError("want an absolute http:// or https:// URL with a host and no query, such as https://cdn.example.com")

// URL is the absolute URL of an object key (keys need no escaping in a
// URL path; see store.CheckKey).
func (u PublicURL) URL(key string) string { return string(u) + "/" + key }

// Key returns the object key of an asset URL below u, or false when raw is
// not one. Used to recognise asset URLs in saved values.
func (u PublicURL) Key(raw string) (string, bool) {
	key, ok := strings.CutPrefix(raw, string(u)+"/")
	if !ok {
		return "", false
	}
	if _, _, _, ok := ParseKey(key); !ok {
		return "", false
	}
	return key, true
}
