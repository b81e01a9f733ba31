package client

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strings"
	"time"
)

// ErrBadResponse is matched (with errors.Is) by the error returned when a
// 2xx answer does not have the shape the API promises: an empty body, a JSON
// null, malformed JSON, or a list or sync batch without its items.
var ErrBadResponse = errors.New("unexpected response")

// Error is a non-2xx answer of the Fetch API. The problem members come from
// the RFC 9457 problem document in the body, when there is one.
type Error struct {
	// Method and URL are those of the request.
	Method, URL string
	// StatusCode is the HTTP status of the last attempt.
	StatusCode int
	// Type is the problem type URI ("/problems/not-found"), or empty.
	Type string
	// Title is the problem title, or the standard status text when the
	// body is not a problem document.
	Title string
	// Detail explains this occurrence, safe to show to a person.
	Detail string
	// Instance is the problem instance URI, or empty.
	Instance string
	// RetryAfter is the wait the server asked for in a Retry-After
	// header, not capped by RetryWaitMax (but at most 24 hours), or 0.
	RetryAfter time.Duration
	// Attempts is how many requests were made, retries included.
	Attempts int
	// Body holds up to 64 KiB of the response body, for problem members
	// beyond the standard ones.
	Body []byte
}

// Error describes the failure in one line, with the number of attempts when
// there were retries:
// "edgecms: GET <url>: 503 Service unavailable: database down (4 attempts)".
func (e *Error) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "edgecms: %s %s: %d %s", e.Method, e.URL, e.StatusCode, e.Title)
	if e.Detail != "" {
		b.WriteString(": ")
		b.WriteString(e.Detail)
	}
	if e.Attempts > 1 {
		fmt.Fprintf(&b, " (%s)", plural(e.Attempts, "attempt"))
	}
	return b.String()
}

// maxErrorBody bounds how much of an error body is read and kept.
const maxErrorBody = 64 << 10

// newError builds the *Error of a non-2xx response and reads its body.
func newError(method, url string, resp *http.Response, attempts int) *Error {
	body, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
	e := &Error{
		Method:     method,
		URL:        url,
		StatusCode: resp.StatusCode,
		Attempts:   attempts,
		Body:       body,
	}
	if d, ok := retryAfter(resp.Header, timeNow()); ok {
		e.RetryAfter = d
	}
	if media, _, err := mime.ParseMediaType(resp.Header.Get("Content-Type")); err == nil &&
		(media == "application/problem+json" || media == "application/json") {
		var doc struct {
			Type     string `json:"type"`
			Title    string `json:"title"`
			Detail   string `json:"detail"`
			Instance string `json:"instance"`
		}
		// A body that is not a problem document leaves the members empty.
		if json.Unmarshal(body, &doc) == nil {
			e.Type, e.Title, e.Detail, e.Instance = doc.Type, doc.Title, doc.Detail, doc.Instance
		}
	}
	if e.Title == "" {
		e.Title = http.StatusText(resp.StatusCode)
	}
	return e
}

// StatusCode returns the HTTP status of the *Error in err's chain, or 0 when
// err is not an answer of the server.
func StatusCode(err error) int {
	var e *Error
	if errors.As(err, &e) {
		return e.StatusCode
	}
	return 0
}

// IsNotFound reports whether err is a 404 answer: an unknown or unpublished
// item or page, an unknown container, channel or locale.
func IsNotFound(err error) bool { return StatusCode(err) == http.StatusNotFound }

// IsUnauthorized reports whether err is a 401 answer: a missing, unknown,
// disabled or expired API key.
func IsUnauthorized(err error) bool { return StatusCode(err) == http.StatusUnauthorized }

// IsForbidden reports whether err is a 403 answer: a valid key of the wrong
// kind for the flavour, for example a fetch key on a preview request.
func IsForbidden(err error) bool { return StatusCode(err) == http.StatusForbidden }

// IsBadRequest reports whether err is a 400 answer: a parameter out of
// bounds or a filter or sort the server cannot read.
func IsBadRequest(err error) bool { return StatusCode(err) == http.StatusBadRequest }

// IsRateLimited reports whether err is a 429 answer that was still refused
// after the retries; Error.RetryAfter says how long the server asked to wait.
func IsRateLimited(err error) bool { return StatusCode(err) == http.StatusTooManyRequests }

// IsTemporary reports whether err is an answer that DefaultCheckRetry would
// retry (408, 429, 5xx but 501): trying again later may succeed.
func IsTemporary(err error) bool {
	code := StatusCode(err)
	return code != 0 && retryableStatus(code)
}
