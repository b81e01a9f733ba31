// Package problem is edgecms's one error vocabulary: a handful of kinds that
// every package returns, mapped to HTTP status codes in exactly one table, and
// rendered as RFC 9457 problem documents by the HTTP layers (origin and edge).
//
// Code that fails for a reason a caller can act on returns a *problem.Error
// (built with the constructors below); anything else is an internal error and
// reaches clients only as a 500 with a generic message.
package problem

import (
	"errors"
	"fmt"
	"net/http"
)

// Kind classifies an error by what the caller should do about it.
type Kind int

// The kinds of error. The zero Kind is Internal.
const (
	Internal     Kind = iota // a bug or an outage the caller cannot fix
	Invalid                  // the request is malformed or a value is out of bounds
	Unauthorized             // no credential, or one that is unknown, disabled or expired
	Forbidden                // a valid credential without the right to do this
	NotFound                 // the thing named does not exist (or is not visible)
	Conflict                 // the request clashes with the current state
	TooLarge                 // the request body is over the limit
	RateLimited              // too many requests; retry later
	Unavailable              // a dependency is down; retry later
	BadGateway               // an upstream answered badly
	// MethodNotAllowed: the path exists, but not with this method.
	MethodNotAllowed
	// PreconditionFailed: an If-Match names a version that is no longer
	// current.
	PreconditionFailed
)

var kinds = [...]struct {
	status int
	title  string
	slug   string
}{
	Internal:           {http.StatusInternalServerError, "Internal error", "internal"},
	Invalid:            {http.StatusBadRequest, "Invalid request", "invalid"},
	Unauthorized:       {http.StatusUnauthorized, "Unauthorized", "unauthorized"},
	Forbidden:          {http.StatusForbidden, "Forbidden", "forbidden"},
	NotFound:           {http.StatusNotFound, "Not found", "not-found"},
	Conflict:           {http.StatusConflict, "Conflict", "conflict"},
	TooLarge:           {http.StatusRequestEntityTooLarge, "Request body too large", "too-large"},
	RateLimited:        {http.StatusTooManyRequests, "Too many requests", "rate-limited"},
	Unavailable:        {http.StatusServiceUnavailable, "Service unavailable", "unavailable"},
	BadGateway:         {http.StatusBadGateway, "Bad gateway", "bad-gateway"},
	MethodNotAllowed:   {http.StatusMethodNotAllowed, "Method not allowed", "method-not-allowed"},
	PreconditionFailed: {http.StatusPreconditionFailed, "Precondition failed", "precondition-failed"},
}

// Status is the HTTP status code of the kind.
func (k Kind) Status() int { return kinds[k].status }

// Title is the short, fixed, human-readable summary of the kind.
func (k Kind) Title() string { return kinds[k].title }

// Type is the problem type URI of the kind (a relative reference, as RFC 9457 allows).
func (k Kind) Type() string { return "/problems/" + kinds[k].slug }

// FieldError names one invalid input field and why it is invalid.
type FieldError struct {
	Field  string `json:"field"`
	Reason string `json:"reason"`
}

// Error is an error a client can act on: its Kind decides the HTTP status and
// Detail is safe to show to the client.
type Error struct {
	Kind   Kind
	Detail string
	// Fields lists invalid input fields, for Invalid errors.
	Fields []FieldError
	// Extra holds additional members of the problem document (for example
	// the configured locales on an unknown-locale error).
	Extra map[string]any
	// RetryAfter, in seconds, is sent as a Retry-After header when positive.
	RetryAfter int
}

func (e *Error) Error() string { return e.Detail }

// New returns an *Error of kind k with a formatted detail.
func New(k Kind, format string, args ...any) *Error {
	return &Error{Kind: k, Detail: fmt.Sprintf(format, args...)}
}

// Invalidf returns an Invalid error.
func Invalidf(format string, args ...any) *Error { return New(Invalid, format, args...) }

// NotFoundf returns a NotFound error.
func NotFoundf(format string, args ...any) *Error { return New(NotFound, format, args...) }

// Conflictf returns a Conflict error.
func Conflictf(format string, args ...any) *Error { return New(Conflict, format, args...) }

// Unauthorizedf returns an Unauthorized error.
func Unauthorizedf(format string, args ...any) *Error { return New(Unauthorized, format, args...) }

// Forbiddenf returns a Forbidden error.
func Forbiddenf(format string, args ...any) *Error { return New(Forbidden, format, args...) }

// Field returns an Invalid error about one input field.
func Field(field, format string, args ...any) *Error {
	reason := fmt.Sprintf(format, args...)
	return &Error{Kind: Invalid, Detail: field + ": " + reason, Fields: []FieldError{{Field: field, Reason: reason}}}
}

// Fields collects several field errors into one Invalid error, or returns nil
// when there are none.
func Fields(errs []FieldError) error {
	if len(errs) == 0 {
		return nil
	}
	detail := errs[0].Field + ": " + errs[0].Reason
	if len(errs) > 1 {
		detail += fmt.Sprintf(" (and %d more)", len(errs)-1)
	}
	return &Error{Kind: Invalid, Detail: detail, Fields: errs}
}

// KindOf returns the Kind of err: the kind of the first *Error in its chain,
// or Internal.
func KindOf(err error) Kind {
	var pe *Error
	if errors.As(err, &pe) {
		return pe.Kind
	}
	return Internal
}

// Is reports whether err is an *Error of kind k.
func Is(err error, k Kind) bool { return err != nil && KindOf(err) == k }

// ContentType is the media type of a problem document.
const ContentType = "application/problem+json"

// DocumentOf builds the public problem document for err. Internal errors get a
// generic detail so that nothing internal (SQL, file paths) leaks. The
// returned map holds the document's members, including any Extra members.
func DocumentOf(err error) map[string]any {
	var pe *Error
	if !errors.As(err, &pe) {
		pe = &Error{Kind: Internal, Detail: "an internal error occurred; it has been logged"}
	}
	doc := map[string]any{}
	for k, v := range pe.Extra {
		doc[k] = v
	}
	doc["type"] = pe.Kind.Type()
	doc["title"] = pe.Kind.Title()
	doc["status"] = pe.Kind.Status()
	doc["detail"] = pe.Detail
	if len(pe.Fields) > 0 {
		doc["errors"] = pe.Fields
	}
	return doc
}

// RetryAfter returns the Retry-After seconds carried by err, or 0.
func RetryAfter(err error) int {
	var pe *Error
	if errors.As(err, &pe) {
		return pe.RetryAfter
	}
	return 0
}

// CacheControl is the Cache-Control policy for an error response of kind k:
// deterministic client errors may be cached briefly; credentials, rate limits
// and server failures never, so that a CDN never pins an outage.
func (k Kind) CacheControl() string {
	switch k {
	case Invalid, NotFound:
		return "public, max-age=5, s-maxage=5"
	default:
		return "no-store"
	}
}
