package render

import (
	"hash/maphash"
	"strconv"
	"strings"
)

// namer makes the names of a sibling group of a sitemap unique, in sitemap
// order: a name already taken gets -2, -3, ... appended.
//
// An exact namer holds every name taken. A counting namer, for a group with
// a dynamic page over more items than a walk holds, is given the counts
// of every name the group wants (a first pass over its items) and holds
// only the names that may meet another. A name's candidates (name, name-2, name-3, ...) are equal to
// another name's only when the two names are equal, or one is the other
// followed by "-<digits>" (the digits after the last '-' are the number,
// so x-2 is never y-2 for another y). So a name is held when it is wanted
// twice (its second gets a number) or when it is another wanted name
// followed by -<digits> (that name's second may get it); any other is
// taken as it is: no other name's candidate is ever equal to it, and its
// only candidate is itself. The counts are a count-min filter of fixed
// size: it may count too much, which only makes the namer hold a name it
// need not, never too little.
type namer struct {
	taken  map[string]bool
	wanted *countFilter // nil: exact
}

// filterCounters (a variable for tests) is the number of counters of a
// counting namer's filter, a byte each. With 100,000 names in the group,
// some 3% of the names that meet no other are held anyway.
var filterCounters = 1 << 20

// newNamer returns an exact namer (wanted nil), or a counting one with the
// counts of the names the group wants. It only reads wanted.
func newNamer(wanted *countFilter) *namer {
	return &namer{taken: map[string]bool{}, wanted: wanted}
}

// mayMeet reports whether name may be equal to another name of the group
// or to one of its candidates.
func (n *namer) mayMeet(name string) bool {
	if n.wanted == nil || n.wanted.count(name) >= 2 {
		return true
	}
	s, ok := stem(name)
	return ok && n.wanted.count(s) >= 1
}

// take returns name, or name-2, name-3, ... if taken already, and takes it.
func (n *namer) take(name string) string {
	if !n.mayMeet(name) {
		return name
	}
	p := name
	for i := 2; n.taken[p]; i++ {
		p = name + "-" + strconv.Itoa(i)
	}
	n.taken[p] = true
	return p
}

// stem returns name without its last "-<digits>", and whether it had one.
func stem(name string) (string, bool) {
	i := strings.LastIndexByte(name, '-')
	if i < 0 || i == len(name)-1 {
		return "", false
	}
	for _, c := range []byte(name[i+1:]) {
		if c < '0' || c > '9' {
			return "", false
		}
	}
	return name[:i], true
}

// countFilter is a count-min sketch of two rows of saturating byte
// counters: count never says less than the times a string was added.
type countFilter struct {
	c    []uint8
	seed maphash.Seed
}

func newCountFilter(counters int) *countFilter {
	return &countFilter{c: make([]uint8, counters), seed: maphash.MakeSeed()}
}

func (f *countFilter) slots(s string) (int, int) {
	h := maphash.String(f.seed, s)
	half := uint64(len(f.c) / 2)
	return int(h % half), int(half + (h>>32)%half)
}

func (f *countFilter) add(s string) {
	a, b := f.slots(s)
	for _, i := range []int{a, b} {
		if f.c[i] < 255 {
			f.c[i]++
		}
	}
}

func (f *countFilter) count(s string) int {
	a, b := f.slots(s)
	return int(min(f.c[a], f.c[b]))
}
