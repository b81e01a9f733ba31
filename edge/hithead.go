package edge

import (
	"bytes"
	"strconv"
)

// hitRequest is what the event loops read of a request head: a GET or HEAD
// whose answer may be a cache hit.
type hitRequest struct {
	head                                 bool // HEAD, else GET
	uri, host, apiKey, guid, ifNoneMatch []byte
}

// maxHitHead is the longest request head the event loops read. It is the
// size of fasthttp's read buffer, so that a longer head gets fasthttp's own
// answer (431) once handed over.
const maxHitHead = 4096

// parseHitHead parses the request head at the start of b, a strict subset
// of HTTP/1.1: a GET or HEAD of an origin-form target, CRLF line ends, no
// body, no obsolete line folding, Connection absent or keep-alive, and at
// most one of each header the edge reads. It returns the head's length, or
// 0 when b holds only the start of a head. ok is false for anything outside
// that subset, which the event loops do not answer but hand over, with the
// connection, to the fasthttp server: it answers such requests (or rejects
// them) as the edge always has.
func parseHitHead(b []byte) (r hitRequest, n int, ok bool) {
	end := bytes.Index(b, []byte("\r\n\r\n"))
	if end < 0 {
		return hitRequest{}, 0, len(b) < maxHitHead && !bareLF(b)
	}
	n = end + 4
	if n > maxHitHead {
		return hitRequest{}, 0, false
	}
	head := b[:end+2] // each line with its CRLF
	line, head, _ := bytes.Cut(head, []byte("\r\n"))
	switch {
	case bytes.HasPrefix(line, []byte("GET ")):
		line = line[4:]
	case bytes.HasPrefix(line, []byte("HEAD ")):
		r.head, line = true, line[5:]
	default:
		return hitRequest{}, 0, false
	}
	uri, proto, found := bytes.Cut(line, []byte(" "))
	if !found || string(proto) != "HTTP/1.1" || len(uri) == 0 || uri[0] != '/' || !plainBytes(uri) {
		return hitRequest{}, 0, false
	}
	r.uri = uri
	var seen [4]bool // host, apikey, guid, if-none-match
	for len(head) > 0 {
		line, head, _ = bytes.Cut(head, []byte("\r\n"))
		name, value, found := bytes.Cut(line, []byte(":"))
		if !found || !token(name) || !plainBytes(value) {
			return hitRequest{}, 0, false
		}
		value = bytes.Trim(value, " ") // as fasthttp: spaces, not tabs
		var slot *[]byte
		var i int
		switch {
		case asciiEqualFold(name, "host"):
			slot, i = &r.host, 0
		case asciiEqualFold(name, "apikey"):
			slot, i = &r.apiKey, 1
		case asciiEqualFold(name, "guid"):
			slot, i = &r.guid, 2
		case asciiEqualFold(name, "if-none-match"):
			slot, i = &r.ifNoneMatch, 3
		case asciiEqualFold(name, "content-length"):
			if string(value) != "0" {
				return hitRequest{}, 0, false
			}
			continue
		case asciiEqualFold(name, "connection"):
			if !asciiEqualFold(value, "keep-alive") {
				return hitRequest{}, 0, false
			}
			continue
		case asciiEqualFold(name, "transfer-encoding"), asciiEqualFold(name, "expect"), asciiEqualFold(name, "upgrade"),
			asciiEqualFold(name, "trailer"): // fasthttp refuses some trailers
			return hitRequest{}, 0, false
		default:
			continue
		}
		if seen[i] {
			return hitRequest{}, 0, false // sent twice
		}
		seen[i], *slot = true, value
	}
	if len(r.host) == 0 {
		return hitRequest{}, 0, false
	}
	return r, n, true
}

// bareLF reports whether b holds a line feed without a carriage return
// before it: lines that fasthttp accepts and the loops leave to it. In a
// whole head the per-line checks below reject such a line anyway.
func bareLF(b []byte) bool {
	for i := bytes.IndexByte(b, '\n'); i >= 0; {
		if i == 0 || b[i-1] != '\r' {
			return true
		}
		j := bytes.IndexByte(b[i+1:], '\n')
		if j < 0 {
			break
		}
		i += 1 + j
	}
	return false
}

// plainBytes reports whether b holds no control character other than tab.
func plainBytes(b []byte) bool {
	for _, c := range b {
		if (c < ' ' && c != '\t') || c == 0x7f {
			return false
		}
	}
	return true
}

// token reports whether b is a header name: one or more token characters
// (RFC 9110), so no whitespace before the colon.
func token(b []byte) bool {
	if len(b) == 0 {
		return false
	}
	for _, c := range b {
		if c <= ' ' || c >= 0x7f || bytes.IndexByte([]byte(`"(),/:;<=>?@[\]{}`), c) >= 0 {
			return false
		}
	}
	return true
}

// asciiEqualFold reports whether b equals the lower-case s, ignoring ASCII
// case.
func asciiEqualFold(b []byte, s string) bool {
	if len(b) != len(s) {
		return false
	}
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != s[i] {
			return false
		}
	}
	return true
}

// appendHitHead appends the head of the hit response of e to dst, the
// same bytes as serveFetch's answer through fasthttp: 200 with the body's
// type and length, or 304 when the request's If-None-Match holds e's ETag.
// date is the Date header's value and now the time in Unix seconds (Age).
// It reports whether the body follows (a 200 to a GET).
func appendHitHead(dst []byte, r *hitRequest, e *entry, date []byte, now int64) ([]byte, bool) {
	notModified := len(r.ifNoneMatch) > 0 && etagMatch(r.ifNoneMatch, e.etag)
	if notModified {
		dst = append(dst, "HTTP/1.1 304 Not Modified\r\nDate: "...)
		dst = append(dst, date...)
	} else {
		dst = append(dst, "HTTP/1.1 200 OK\r\nDate: "...)
		dst = append(dst, date...)
		dst = append(dst, "\r\nContent-Type: "...)
		dst = append(dst, e.contentType...)
		dst = append(dst, "\r\nContent-Length: "...)
		dst = strconv.AppendInt(dst, int64(len(e.body)), 10)
	}
	dst = append(dst, "\r\nCache-Control: "...)
	dst = append(dst, e.cacheControl...)
	dst = append(dst, "\r\nEtag: "...)
	dst = append(dst, e.etag...)
	dst = append(dst, "\r\nAge: "...)
	dst = e.age(dst, now)
	dst = append(dst, "\r\nX-Cache: HIT"...)
	if e.surrogateKey != nil {
		dst = append(dst, "\r\nSurrogate-Key: "...)
		dst = append(dst, e.surrogateKey...)
	}
	dst = append(dst, "\r\n\r\n"...)
	return dst, !notModified && !r.head
}
