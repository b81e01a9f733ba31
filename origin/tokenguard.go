package origin

import (
	"context"
	"crypto/sha256"
	"errors"
	"sync"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/edgecms/edgecms/content"
	"github.com/edgecms/edgecms/problem"
	"github.com/edgecms/edgecms/throttle"
)

// DefaultTokenThrottle limits failed management-token attempts per client
// address when Config.TokenThrottle is zero: a client that fails 30 times
// within a minute is refused (429) for 5 minutes, whatever token it sends.
var DefaultTokenThrottle = throttle.Policy{Name: "token-addr", Max: 30, Window: time.Minute, Block: 5 * time.Minute,
	Detail: "too many failed management-token attempts from this address; retry after the Retry-After seconds"}

// tokenMissTTL is how long a token found in no instance is remembered as
// such: a new token's secret is random, so no guess made before it existed
// can be its secret, and the cache cannot hide it.
const tokenMissTTL = 10 * time.Second

// maxTokenMemory bounds each of tokenGuard's maps, against a flood of
// made-up tokens or addresses.
const maxTokenMemory = 100_000

// tokenGuard makes guessing management tokens costly and cheap to refuse:
// failures count per client address in the shared throttle table (the
// same limiter type as sign-in, under its own name, so that one address's
// flood never blocks another), an address found blocked is refused from
// memory until its block ends, and a token found in no instance is
// remembered briefly, so that a flood of one wrong token is not a database
// query each.
type tokenGuard struct {
	limiter *throttle.Limiter
	detail  string // of the problem of a blocked address
	now     func() time.Time

	mu      sync.Mutex
	blocked map[string]time.Time   // client address -> end of its block
	misses  map[[32]byte]time.Time // guid and secret -> end of the memory
}

func newTokenGuard(l *throttle.Limiter, detail string) *tokenGuard {
	if detail == "" {
		detail = "too many failed attempts; retry after the Retry-After seconds"
	}
	return &tokenGuard{limiter: l, detail: detail, now: time.Now, blocked: map[string]time.Time{}, misses: map[[32]byte]time.Time{}}
}

// refused returns the RateLimited problem of addr while it is known to be
// blocked.
func (g *tokenGuard) refused(addr string) error {
	now := g.now()
	g.mu.Lock()
	until, ok := g.blocked[addr]
	if ok && !now.Before(until) {
		delete(g.blocked, addr)
		ok = false
	}
	g.mu.Unlock()
	if !ok {
		return nil
	}
	wait := int(until.Sub(now).Seconds() + 0.999)
	return &problem.Error{Kind: problem.RateLimited, RetryAfter: max(wait, 1), Detail: g.detail}
}

// authenticate looks up the token secret of instance guid for a client at
// addr, refusing addresses that failed too often.
func (g *tokenGuard) authenticate(ctx context.Context, store *content.Store, guid, secret, addr string) (content.Token, error) {
	if err := g.refused(addr); err != nil {
		return content.Token{}, err
	}
	id := sha256.Sum256([]byte(guid + "\x00" + secret))
	now := g.now()
	g.mu.Lock()
	until, missed := g.misses[id]
	g.mu.Unlock()
	var t content.Token
	var err error
	if missed && now.Before(until) {
		err = problem.Unauthorizedf("the token is not valid for instance %q", guid)
	} else {
		t, err = store.Authenticate(ctx, guid, secret)
	}
	if !problem.Is(err, problem.Unauthorized) {
		return t, err
	}
	g.mu.Lock()
	if len(g.misses) >= maxTokenMemory {
		clear(g.misses)
	}
	g.misses[id] = now.Add(tokenMissTTL)
	g.mu.Unlock()
	if ferr := g.limiter.Fail(ctx, addr); ferr != nil {
		return content.Token{}, ferr
	}
	// The failure that reaches the limit is still told 401, as sign-in
	// does; the attempts after it are refused from memory.
	cerr := g.limiter.Check(ctx, addr)
	var pe *problem.Error
	if errors.As(cerr, &pe) && pe.Kind == problem.RateLimited {
		g.mu.Lock()
		if len(g.blocked) >= maxTokenMemory {
			clear(g.blocked)
		}
		g.blocked[addr] = now.Add(time.Duration(pe.RetryAfter) * time.Second)
		g.mu.Unlock()
	} else if cerr != nil {
		return content.Token{}, cerr
	}
	return t, err
}

// tokenAuth is authenticate's bearer-token path.
func (s *Server) tokenAuth(c *fiber.Ctx, secret string) (content.Token, error) {
	return s.tokens.authenticate(c.UserContext(), s.store, c.Params("guid"), secret, s.clientAddr(c))
}
