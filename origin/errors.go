package origin

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"reflect"
	"strconv"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/edgecms/edgecms/problem"
)

// fiberKinds maps the errors Fiber itself raises to problem kinds.
var fiberKinds = map[int]problem.Kind{
	fiber.StatusBadRequest:            problem.Invalid,
	fiber.StatusNotFound:              problem.NotFound,
	fiber.StatusMethodNotAllowed:      problem.MethodNotAllowed,
	fiber.StatusRequestEntityTooLarge: problem.TooLarge,
	fiber.StatusUnauthorized:          problem.Unauthorized,
	fiber.StatusForbidden:             problem.Forbidden,
	fiber.StatusTooManyRequests:       problem.RateLimited,
	fiber.StatusServiceUnavailable:    problem.Unavailable,
}

// handleError is the one place that turns an error into a response: an RFC
// 9457 problem document with the kind's status. Internal errors are logged
// here and nowhere else, and their text never reaches the client.
func (s *Server) handleError(c *fiber.Ctx, err error) error {
	var fe *fiber.Error
	if errors.As(err, &fe) {
		k, ok := fiberKinds[fe.Code]
		if !ok {
			k = problem.Internal
		}
		detail := fe.Message
		switch fe.Code {
		case fiber.StatusNotFound:
			detail = "no route " + c.Method() + " " + c.Path()
		case fiber.StatusRequestEntityTooLarge:
			detail = "the request body is larger than " + strconv.Itoa(s.cfg.BodyLimit) + " bytes"
		}
		err = &problem.Error{Kind: k, Detail: detail}
	}
	k := problem.KindOf(err)
	if k == problem.Internal && dbUnavailable(err) {
		s.log.Warn("request failed: database unavailable", "method", c.Method(), "path", c.Path(), "err", err)
		err, k = errDBUnavailable, problem.Unavailable
	}
	if k == problem.Internal {
		s.log.Error("request failed", "method", c.Method(), "path", c.Path(), "err", err)
	}
	if ra := problem.RetryAfter(err); ra > 0 {
		c.Set(fiber.HeaderRetryAfter, strconv.Itoa(ra))
	}
	if strings.HasPrefix(c.Path(), apiPrefix) {
		// Management answers depend on credentials and change with every
		// write: no cache may keep them, errors included.
		c.Set(fiber.HeaderCacheControl, "no-store")
	} else {
		c.Set(fiber.HeaderCacheControl, k.CacheControl())
	}
	body, _ := json.Marshal(problem.DocumentOf(err))
	c.Set(fiber.HeaderContentType, problem.ContentType)
	return c.Status(k.Status()).Send(body)
}

// decode reads a JSON request body into v strictly: malformed JSON, wrong
// types and unknown members are Invalid problems naming the field.
func decode(c *fiber.Ctx, v any) error {
	body := c.Body()
	if len(strings.TrimSpace(string(body))) == 0 {
		return problem.Invalidf("the request body must be a JSON object")
	}
	dec := json.NewDecoder(strings.NewReader(string(body)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return decodeError(err, v, body)
	}
	if dec.More() {
		return problem.Invalidf("the request body must hold one JSON value")
	}
	// Postgres text cannot hold NUL: refuse it here, as the client's mistake.
	if bytes.Contains(body, []byte(`\u0000`)) {
		if name := nulMember(body); name != "" {
			return problem.Field(name, "must not contain the NUL character (\\u0000)")
		}
	}
	return nil
}

// nulMember returns the top-level member of a JSON object body whose value
// (or the member name itself) holds a string with a NUL character, or "".
func nulMember(body []byte) string {
	var members map[string]json.RawMessage
	if json.Unmarshal(body, &members) != nil {
		return ""
	}
	for name, raw := range members {
		if strings.ContainsRune(name, 0) {
			return strings.ReplaceAll(name, "\x00", `\u0000`)
		}
		dec := json.NewDecoder(bytes.NewReader(raw))
		for {
			tok, err := dec.Token()
			if err != nil {
				break
			}
			if s, ok := tok.(string); ok && strings.ContainsRune(s, 0) {
				return name
			}
		}
	}
	return ""
}

// refuseNULQuery refuses a query string with a NUL character in a name or
// value, which Postgres text cannot hold.
func refuseNULQuery(c *fiber.Ctx) error {
	var bad string
	c.Context().QueryArgs().VisitAll(func(k, v []byte) {
		if bad == "" && (bytes.IndexByte(k, 0) >= 0 || bytes.IndexByte(v, 0) >= 0) {
			bad = strings.ReplaceAll(string(k), "\x00", `\u0000`)
		}
	})
	if bad != "" {
		return problem.Field(bad, "must not contain the NUL character")
	}
	return c.Next()
}

func decodeError(err error, v any, body []byte) error {
	var te *json.UnmarshalTypeError
	var se *json.SyntaxError
	switch {
	case errors.As(err, &te):
		field := te.Field
		if field == "" {
			return problem.Invalidf("the request body must be a JSON %s", jsonKind(te.Type.Kind().String()))
		}
		return problem.Field(field, "must be a %s, not %s", jsonKind(te.Type.Kind().String()), te.Value)
	case errors.As(err, &se):
		return problem.Invalidf("malformed JSON at byte %d: %v", se.Offset, se)
	case strings.HasPrefix(err.Error(), "json: unknown field "):
		name := strings.Trim(strings.TrimPrefix(err.Error(), "json: unknown field "), `"`)
		return problem.Field(name, "unknown field")
	case errors.Is(err, io.ErrUnexpectedEOF): // a truncated body: found before any UnmarshalJSON runs
		return problem.Invalidf("malformed JSON: the body ends too early")
	}
	var pe *problem.Error
	if errors.As(err, &pe) {
		return pe
	}
	// A value's own UnmarshalJSON (a date's) fails without naming the field.
	if name := failingMember(v, body); name != "" {
		var tpe *time.ParseError
		if errors.As(err, &tpe) || strings.Contains(err.Error(), "Time.UnmarshalJSON") {
			return problem.Field(name, "must be an RFC 3339 date like 2026-01-31T09:30:00Z")
		}
		return problem.Field(name, "invalid value")
	}
	return problem.Invalidf("malformed JSON: %v", err)
}

// failingMember returns the name of the first top-level member of body that
// does not decode into its field of v (a pointer to a struct), or "".
func failingMember(v any, body []byte) string {
	rv := reflect.ValueOf(v)
	if rv.Kind() != reflect.Pointer || rv.Elem().Kind() != reflect.Struct {
		return ""
	}
	var members map[string]json.RawMessage
	if json.Unmarshal(body, &members) != nil {
		return ""
	}
	rt := rv.Elem().Type()
	for i := range rt.NumField() {
		f := rt.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "" || name == "-" {
			continue
		}
		for member, raw := range members {
			if strings.EqualFold(member, name) && json.Unmarshal(raw, reflect.New(f.Type).Interface()) != nil {
				return member
			}
		}
	}
	return ""
}

func jsonKind(goKind string) string {
	switch goKind {
	case "string":
		return "string"
	case "bool":
		return "boolean"
	case "int", "int64", "int32", "float64", "uint", "uint64":
		return "number"
	case "slice", "array":
		return "array"
	case "map", "struct", "ptr":
		return "object"
	}
	return goKind
}

// id parses a positive integer path parameter.
func id(c *fiber.Ctx, name string) (int64, error) {
	n, err := strconv.ParseInt(c.Params(name), 10, 64)
	if err != nil || n <= 0 {
		return 0, problem.Field(name, "must be a positive integer")
	}
	return n, nil
}
