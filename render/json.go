package render

import (
	"io"
	"strconv"
	"time"
	"unicode/utf8"
)

// writer appends JSON to a byte slice. It tracks only whether the next
// member or element needs a comma, so callers write keys and values in the
// order the output must have: the order of keys is the order of calls,
// which is what makes output deterministic (no map iteration anywhere).
type writer struct {
	b     []byte
	comma bool // a value was written at the current level
	// out, when set, receives what is written whenever more than
	// flushBytes are held (flush), so that a long answer (a sitemap) is
	// never held whole; err is the first error it gave.
	out io.Writer
	err error
}

// flushBytes is what a writer with an out holds before handing it on.
const flushBytes = 32 << 10

// flush hands what the writer holds to out once it holds more than
// flushBytes; the comma state stays, so writing goes on as if nothing
// happened.
func (w *writer) flush() {
	if w.out != nil && len(w.b) >= flushBytes {
		w.drain()
	}
}

// drain hands everything the writer holds to out.
func (w *writer) drain() {
	if w.err == nil && len(w.b) > 0 {
		_, w.err = w.out.Write(w.b)
	}
	w.b = w.b[:0]
}

func (w *writer) sep() {
	if w.comma {
		w.b = append(w.b, ',')
	}
}

// open starts an object ('{') or an array ('[').
func (w *writer) open(c byte) {
	w.sep()
	w.b = append(w.b, c)
	w.comma = false
}

// close ends an object ('}') or an array (']').
func (w *writer) close(c byte) {
	w.b = append(w.b, c)
	w.comma = true
}

// key writes an object member name.
func (w *writer) key(k string) {
	w.sep()
	w.b = appendString(w.b, k)
	w.b = append(w.b, ':')
	w.comma = false
}

func (w *writer) str(s string) {
	w.sep()
	w.b = appendString(w.b, s)
	w.comma = true
}

func (w *writer) int(n int64) {
	w.sep()
	w.b = strconv.AppendInt(w.b, n, 10)
	w.comma = true
}

// intString writes n as a JSON string, the v1 form of numbers and ids.
func (w *writer) intString(n int64) {
	w.sep()
	w.b = append(w.b, '"')
	w.b = strconv.AppendInt(w.b, n, 10)
	w.b = append(w.b, '"')
	w.comma = true
}

func (w *writer) bool(v bool) {
	w.sep()
	w.b = strconv.AppendBool(w.b, v)
	w.comma = true
}

func (w *writer) null() {
	w.sep()
	w.b = append(w.b, "null"...)
	w.comma = true
}

// raw writes a complete, valid JSON value as it is.
func (w *writer) raw(v []byte) {
	w.sep()
	w.b = append(w.b, v...)
	w.comma = true
}

// quoted writes raw text between double quotes; the text must need no
// escaping (a JSON number or boolean token).
func (w *writer) quoted(v []byte) {
	w.sep()
	w.b = append(w.b, '"')
	w.b = append(w.b, v...)
	w.b = append(w.b, '"')
	w.comma = true
}

// modifiedLayout is the form of properties.modified: UTC, milliseconds, no
// zone designator.
const modifiedLayout = "2006-01-02T15:04:05.000"

func (w *writer) modified(t time.Time) {
	w.sep()
	w.b = append(w.b, '"')
	w.b = t.UTC().AppendFormat(w.b, modifiedLayout)
	w.b = append(w.b, '"')
	w.comma = true
}

const hex = "0123456789abcdef"

// appendString appends s as a JSON string. It escapes what JSON requires
// plus U+2028 and U+2029 (so that output is also valid JavaScript), and
// replaces invalid UTF-8 with U+FFFD. It does not escape <, > and &: the
// Fetch API returns HTML in strings as it is.
func appendString(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hex[r&0xf])
			i += size
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}
