package fetch

import (
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"
)

// Op is the operator of a filter clause.
type Op uint8

// The filter operators. Le and Ge of older clients parse as Lte and Gte.
const (
	Eq       Op = iota + 1 // equal
	Ne                     // not equal; also true when the property is missing
	Lt                     // less than
	Lte                    // less than or equal
	Gt                     // greater than
	Gte                    // greater than or equal
	Like                   // substring, or a whole-value pattern with % or * wildcards
	In                     // equal to one of a comma list
	Contains               // a comma-separated property value has the value as one element
	Range                  // min <= value <= max
)

var opNames = [...]string{
	Eq: "eq", Ne: "ne", Lt: "lt", Lte: "lte", Gt: "gt", Gte: "gte",
	Like: "like", In: "in", Contains: "contains", Range: "range",
}

// String is the operator's canonical name, as written between brackets.
func (o Op) String() string {
	if int(o) < len(opNames) && opNames[o] != "" {
		return opNames[o]
	}
	return fmt.Sprintf("op(%d)", int(o))
}

func lookupOp(s string) Op {
	switch {
	case strings.EqualFold(s, "le"):
		return Lte
	case strings.EqualFold(s, "ge"):
		return Gte
	}
	for o, name := range opNames {
		if name != "" && strings.EqualFold(s, name) {
			return Op(o)
		}
	}
	return 0
}

// Filter is a parsed list filter: a clause "property[op]value", or a group of
// filters joined by AND or OR. Build filters with ParseFilter and treat them
// as read-only: ParseFilter brings them into canonical form (lower case,
// nested groups of the same kind flattened, terms sorted and without
// duplicates, in-lists sorted) and prepares them for Match.
//
// Matching is case-insensitive throughout, so the canonical form lower-cases
// values too; see Match.
type Filter struct {
	// Or and Terms describe a group: its Terms joined by OR when Or is set,
	// else by AND. Terms is nil for a clause.
	Or    bool
	Terms []*Filter

	// Property, Op and Values describe a clause.
	Property string // dotted path, lower-cased, for example "fields.title"
	Op       Op
	Values   []string // lower-cased: one value; the list of In; min and max of Range

	str  string   // canonical form, set by ParseFilter
	path []string // Property split at '.'
	vals []scalar // Values, classified
}

// Limits of filters.
const (
	maxFilterLen   = 4096
	maxFilterDepth = 32
)

// SyntaxError is an error in the text of a filter.
type SyntaxError struct {
	Offset int    // byte offset in the filter text at which the error was found
	Msg    string // what was wrong
}

func (e *SyntaxError) Error() string { return fmt.Sprintf("at offset %d: %s", e.Offset, e.Msg) }

// ParseFilter parses a filter: clauses "<property>[<op>]<value>" joined by
// AND and OR (any case, with space around them), grouped with brackets; AND
// binds tighter than OR. The property is a dotted path (fields.title,
// properties.modified, contentID). The operator is one of eq ne lt lte gt
// gte like in contains range, or the older le and ge. A value is a
// double-quoted string (with \" and \\ escapes) or bare text; bare text ends
// at a ")" or at space followed by AND or OR, and cannot hold '"', '(',
// '[' or ']'. "in" takes a comma list of values and "range" takes two, min,max.
// An error is a *SyntaxError carrying the byte offset.
func ParseFilter(s string) (*Filter, error) {
	if len(s) > maxFilterLen {
		return nil, &SyntaxError{maxFilterLen, fmt.Sprintf("longer than %d bytes", maxFilterLen)}
	}
	if !utf8.ValidString(s) {
		i := 0
		for i < len(s) {
			r, n := utf8.DecodeRuneInString(s[i:])
			if r == utf8.RuneError && n == 1 {
				break
			}
			i += n
		}
		return nil, &SyntaxError{i, "invalid UTF-8"}
	}
	p := parser{s: s}
	f, err := p.or()
	if err != nil {
		return nil, err
	}
	p.space()
	if p.pos < len(s) {
		if s[p.pos] == ')' {
			return nil, p.errorf("unbalanced ')'")
		}
		return nil, p.errorf("expected AND, OR or the end of the filter")
	}
	return normalize(f), nil
}

type parser struct {
	s     string
	pos   int
	depth int
}

func (p *parser) errorf(format string, args ...any) error {
	return &SyntaxError{p.pos, fmt.Sprintf(format, args...)}
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

func (p *parser) space() {
	for p.pos < len(p.s) && isSpace(p.s[p.pos]) {
		p.pos++
	}
}

// keywordAt returns the length of an AND or OR keyword at i (followed by
// space, '(' or the end), or 0.
func keywordAt(s string, i int) int {
	for _, w := range [...]string{"and", "or"} {
		end := i + len(w)
		if end <= len(s) && strings.EqualFold(s[i:end], w) && (end == len(s) || isSpace(s[end]) || s[end] == '(') {
			return len(w)
		}
	}
	return 0
}

// keyword consumes the keyword w (after space, or right after ')' or '"'),
// and reports whether it was there.
func (p *parser) keyword(w string) bool {
	start := p.pos
	p.space()
	if p.pos == start && (start == 0 || (p.s[start-1] != ')' && p.s[start-1] != '"')) {
		return false
	}
	if n := keywordAt(p.s, p.pos); n == len(w) && strings.EqualFold(p.s[p.pos:p.pos+n], w) {
		p.pos += n
		return true
	}
	p.pos = start
	return false
}

func (p *parser) or() (*Filter, error) {
	return p.group(true)
}

// group parses terms joined by OR (or), or by AND (!or).
func (p *parser) group(or bool) (*Filter, error) {
	word, next := "and", p.primary
	if or {
		word, next = "or", func() (*Filter, error) { return p.group(false) }
	}
	first, err := next()
	if err != nil {
		return nil, err
	}
	terms := []*Filter{first}
	for p.keyword(word) {
		t, err := next()
		if err != nil {
			return nil, err
		}
		terms = append(terms, t)
	}
	if len(terms) == 1 {
		return first, nil
	}
	return &Filter{Or: or, Terms: terms}, nil
}

func (p *parser) primary() (*Filter, error) {
	p.space()
	if p.pos < len(p.s) && p.s[p.pos] == '(' {
		if p.depth == maxFilterDepth {
			return nil, p.errorf("brackets nested deeper than %d", maxFilterDepth)
		}
		p.depth++
		p.pos++
		f, err := p.or()
		if err != nil {
			return nil, err
		}
		p.space()
		if p.pos == len(p.s) || p.s[p.pos] != ')' {
			return nil, p.errorf("expected ')'")
		}
		p.pos++
		p.depth--
		return f, nil
	}
	return p.clause()
}

func (p *parser) clause() (*Filter, error) {
	start := p.pos
	for p.pos < len(p.s) && (isAlnum(p.s[p.pos]) || strings.IndexByte("._-", p.s[p.pos]) >= 0) {
		p.pos++
	}
	prop := p.s[start:p.pos]
	if prop == "" {
		if p.pos == len(p.s) {
			return nil, p.errorf("expected a property name, found the end of the filter")
		}
		return nil, p.errorf("expected a property name, found %q", p.s[p.pos:p.pos+1])
	}
	if !validPropertyPath(prop) {
		return nil, &SyntaxError{start, fmt.Sprintf("%q is not a dotted property path", prop)}
	}
	if p.pos == len(p.s) || p.s[p.pos] != '[' {
		return nil, p.errorf("expected '[' and an operator after %q", prop)
	}
	p.pos++
	opStart := p.pos
	for p.pos < len(p.s) && p.s[p.pos] != ']' && p.pos-opStart <= 8 {
		p.pos++
	}
	if p.pos == len(p.s) || p.s[p.pos] != ']' {
		return nil, &SyntaxError{opStart, "expected an operator and ']'"}
	}
	op := lookupOp(p.s[opStart:p.pos])
	if op == 0 {
		return nil, &SyntaxError{opStart, fmt.Sprintf("unknown operator %q (want eq, ne, lt, lte, gt, gte, like, in, contains or range)", p.s[opStart:p.pos])}
	}
	p.pos++
	f := &Filter{Property: strings.ToLower(prop), Op: op}
	list := op == In || op == Range
	valStart := p.pos
	for {
		v, err := p.value(list)
		if err != nil {
			return nil, err
		}
		f.Values = append(f.Values, strings.ToLower(v))
		if !list {
			break
		}
		save := p.pos
		p.space()
		if p.pos < len(p.s) && p.s[p.pos] == ',' {
			p.pos++
			continue
		}
		p.pos = save
		break
	}
	if op == Range && len(f.Values) != 2 {
		return nil, &SyntaxError{valStart, fmt.Sprintf("range takes two values, min,max; got %d", len(f.Values))}
	}
	return f, nil
}

// value parses one quoted or bare value. In a list, a bare value also ends
// at ','.
func (p *parser) value(list bool) (string, error) {
	p.space()
	if p.pos < len(p.s) && p.s[p.pos] == '"' {
		return p.quoted()
	}
	start, end := p.pos, p.pos
	for p.pos < len(p.s) {
		c := p.s[p.pos]
		if c == ')' || list && c == ',' {
			break
		}
		if isSpace(c) {
			i := p.pos
			for i < len(p.s) && isSpace(p.s[i]) {
				i++
			}
			if keywordAt(p.s, i) > 0 {
				break
			}
			p.pos = i
			continue
		}
		if c == '"' || c == '(' || c == '[' || c == ']' {
			return "", p.errorf("%q in a value: quote the value", string(c))
		}
		if c < 0x20 || c == 0x7f {
			return "", p.errorf("control character in a value")
		}
		p.pos++
		end = p.pos
	}
	if end == start {
		return "", &SyntaxError{start, "expected a value"}
	}
	p.pos = end
	return p.s[start:end], nil
}

func (p *parser) quoted() (string, error) {
	start := p.pos
	p.pos++
	var b strings.Builder
	from := p.pos
	for p.pos < len(p.s) {
		switch c := p.s[p.pos]; {
		case c == '"':
			b.WriteString(p.s[from:p.pos])
			p.pos++
			return b.String(), nil
		case c == '\\':
			if p.pos+1 == len(p.s) || (p.s[p.pos+1] != '"' && p.s[p.pos+1] != '\\') {
				return "", p.errorf(`unknown escape: only \" and \\ are allowed`)
			}
			b.WriteString(p.s[from:p.pos])
			b.WriteByte(p.s[p.pos+1])
			p.pos += 2
			from = p.pos
		case (c < 0x20 || c == 0x7f) && !isSpace(c):
			return "", p.errorf("control character in a value")
		default:
			p.pos++
		}
	}
	return "", &SyntaxError{start, "unterminated string"}
}

// normalize brings a parsed filter into canonical form and prepares it for
// Match: groups of the same kind are flattened, terms sorted by their
// canonical text and deduplicated, in-lists sorted and deduplicated, an
// in-list of one value and a range of one value made equality tests.
func normalize(f *Filter) *Filter {
	if f.Terms == nil {
		if f.Op == In {
			slices.Sort(f.Values)
			f.Values = slices.Compact(f.Values)
		}
		// Spellings of an equality test: in with one value, range from a
		// value to itself.
		if f.Op == In && len(f.Values) == 1 || f.Op == Range && len(f.Values) == 2 && f.Values[0] == f.Values[1] {
			f.Op, f.Values = Eq, f.Values[:1]
		}
		f.path = strings.Split(f.Property, ".")
		f.vals = make([]scalar, len(f.Values))
		for i, v := range f.Values {
			f.vals[i] = classify(v)
		}
		f.str = clauseString(f)
		return f
	}
	terms := make([]*Filter, 0, len(f.Terms))
	for _, t := range f.Terms {
		t = normalize(t)
		if t.Terms != nil && t.Or == f.Or {
			terms = append(terms, t.Terms...)
		} else {
			terms = append(terms, t)
		}
	}
	slices.SortStableFunc(terms, func(a, b *Filter) int { return strings.Compare(a.str, b.str) })
	terms = slices.CompactFunc(terms, func(a, b *Filter) bool { return a.str == b.str })
	if len(terms) == 1 {
		return terms[0]
	}
	f.Terms = terms
	f.str = groupString(f)
	return f
}

// String is the filter's canonical text: ParseFilter(f.String()) gives a
// filter with the same String and the same matches. It is lower case, with
// " and " and " or " between terms and brackets only around an OR group
// inside an AND group.
func (f *Filter) String() string {
	switch {
	case f == nil:
		return ""
	case f.str != "":
		return f.str
	case f.Terms == nil:
		return clauseString(f)
	}
	return groupString(f)
}

func groupString(f *Filter) string {
	sep := " and "
	if f.Or {
		sep = " or "
	}
	var b strings.Builder
	for i, t := range f.Terms {
		if i > 0 {
			b.WriteString(sep)
		}
		if !f.Or && t.Terms != nil && t.Or {
			b.WriteByte('(')
			b.WriteString(t.String())
			b.WriteByte(')')
		} else {
			b.WriteString(t.String())
		}
	}
	return b.String()
}

func clauseString(f *Filter) string {
	var b strings.Builder
	b.WriteString(f.Property)
	b.WriteByte('[')
	b.WriteString(f.Op.String())
	b.WriteByte(']')
	for i, v := range f.Values {
		if i > 0 {
			b.WriteByte(',')
		}
		writeValue(&b, v)
	}
	return b.String()
}

// writeValue writes v bare when it is made of [a-z0-9._:+-] only, else
// quoted.
func writeValue(b *strings.Builder, v string) {
	bare := v != ""
	for i := 0; i < len(v) && bare; i++ {
		c := v[i]
		bare = 'a' <= c && c <= 'z' || '0' <= c && c <= '9' || strings.IndexByte("._:+-", c) >= 0
	}
	if bare {
		b.WriteString(v)
		return
	}
	b.WriteByte('"')
	for i := 0; i < len(v); i++ {
		if v[i] == '"' || v[i] == '\\' {
			b.WriteByte('\\')
		}
		b.WriteByte(v[i])
	}
	b.WriteByte('"')
}
