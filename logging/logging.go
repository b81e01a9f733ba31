// Package logging builds edgecms's one *slog.Logger from the configuration
// (EDGECMS_LOG_FORMAT, EDGECMS_LOG_LEVEL) and holds what the access logs of
// the origin and the edge share: request ids and the edge's sampling.
//
// Every role logs through the logger main builds and passes in; nothing
// writes to the default logger. The origin logs one line per request
// (method, route, status, duration, request_id); edges log none by default,
// because a busy edge answers tens of thousands of reads a second from
// memory and its CDN keeps access logs anyway (EDGECMS_EDGE_ACCESS_LOG
// samples them when wanted).
package logging

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"log/slog"
	mrand "math/rand/v2"
	"strconv"
	"strings"
)

// Formats of EDGECMS_LOG_FORMAT.
const (
	Text = "text"
	JSON = "json"
)

// RequestIDHeader is the header a request id is read from and echoed in.
const RequestIDHeader = "X-Request-ID"

// New returns a logger writing to w in format (text or json) from level
// (debug, info, warn or error) up.
func New(w io.Writer, format, level string) (*slog.Logger, error) {
	lv, err := ParseLevel(level)
	if err != nil {
		return nil, err
	}
	opts := &slog.HandlerOptions{Level: lv}
	switch format {
	case Text, "":
		return slog.New(slog.NewTextHandler(w, opts)), nil
	case JSON:
		return slog.New(slog.NewJSONHandler(w, opts)), nil
	}
	return nil, fmt.Errorf("EDGECMS_LOG_FORMAT: want text or json, got %q", format)
}

// ParseLevel reads a level name: debug, info, warn (or warning), error.
func ParseLevel(s string) (slog.Level, error) {
	switch strings.ToLower(s) {
	case "debug":
		return slog.LevelDebug, nil
	case "info", "":
		return slog.LevelInfo, nil
	case "warn", "warning":
		return slog.LevelWarn, nil
	case "error":
		return slog.LevelError, nil
	}
	return 0, fmt.Errorf("EDGECMS_LOG_LEVEL: want debug, info, warn or error, got %q", s)
}

// RequestID returns the request id of a request that carried given in its
// X-Request-ID header: given itself when it is a plausible id (1 to 128
// characters of letters, digits and -_.:/+=), so that a proxy's id follows
// the request through; otherwise (absent, or something that could forge a
// log line) a new random one.
func RequestID(given []byte) string {
	if validID(given) {
		return string(given)
	}
	return NewRequestID()
}

// NewRequestID returns a new random request id: 16 hex digits.
func NewRequestID() string {
	var b [8]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

func validID(b []byte) bool {
	if len(b) == 0 || len(b) > 128 {
		return false
	}
	for _, c := range b {
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		case strings.IndexByte("-_.:/+=", c) >= 0:
		default:
			return false
		}
	}
	return true
}

// Sampler decides which requests an edge logs (EDGECMS_EDGE_ACCESS_LOG):
// none, all, or a random fraction.
type Sampler struct {
	rate float64 // 0: none, 1: all
}

// ParseSampler reads EDGECMS_EDGE_ACCESS_LOG: "off" (or empty, or 0), "all"
// (or 1), or a fraction between 0 and 1 such as 0.01 for one request in a
// hundred.
func ParseSampler(s string) (Sampler, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "", "off", "0":
		return Sampler{}, nil
	case "all", "on", "1":
		return Sampler{rate: 1}, nil
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || f < 0 || f > 1 {
		return Sampler{}, fmt.Errorf("EDGECMS_EDGE_ACCESS_LOG: want off, all, or a fraction between 0 and 1 such as 0.01, got %q", s)
	}
	return Sampler{rate: f}, nil
}

// Off reports whether no request is ever logged.
func (s Sampler) Off() bool { return s.rate <= 0 }

// Take reports whether to log this request.
func (s Sampler) Take() bool {
	switch {
	case s.rate <= 0:
		return false
	case s.rate >= 1:
		return true
	}
	return mrand.Float64() < s.rate
}

// String is the setting as ParseSampler reads it.
func (s Sampler) String() string {
	switch {
	case s.rate <= 0:
		return "off"
	case s.rate >= 1:
		return "all"
	}
	return strconv.FormatFloat(s.rate, 'g', -1, 64)
}
