package publisher

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"
)

// Purger calls a CDN's purge-by-tag API after objects change: once they
// are in the store, the feed lists them and edges had the time to read it
// (Config.PurgeDelay). It is a generic HTTP request template that fits the
// usual APIs; in URL, header values and Body these placeholders are
// replaced:
//
//	{{tags}}       the tags, joined by spaces (in URL: query-escaped)
//	{{tags_json}}  the tags as a JSON array of strings
//	{{tags_csv}}   the tags, joined by commas (in URL: query-escaped)
//
// Examples (see README.md): Cloudflare (POST .../purge_cache, body
// {"tags":{{tags_json}}}), Fastly (POST .../purge with a Surrogate-Key:
// {{tags}} header), Varnish with xkey (PURGE with an xkey-purge: {{tags}}
// header).
type Purger struct {
	// Method is the HTTP method (default POST).
	Method string
	// URL is the purge endpoint.
	URL string
	// Header holds the request headers, such as credentials.
	Header http.Header
	// Body is the request body template; empty sends none.
	Body string
	// MaxTags is how many tags one request carries (default 30); more tags
	// take more requests.
	MaxTags int
	// Client sends the requests (default: a client with a 10 s timeout).
	Client *http.Client
	// Attempts is how many times a request is tried when it fails with a
	// network error, 429 or 5xx (default 3).
	Attempts int
}

// NewPurger checks a purge template as a configuration gives it: headers as
// lines of "Name: value" (a literal \n also separates lines). An empty
// URL means no purger (nil, nil).
func NewPurger(method, rawURL, headers, body string, maxTags int) (*Purger, error) {
	if rawURL == "" {
		return nil, nil
	}
	u, err := url.Parse(strings.NewReplacer("{{tags}}", "x", "{{tags_json}}", "x", "{{tags_csv}}", "x").Replace(rawURL))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("purge URL %q: want an http:// or https:// URL", rawURL)
	}
	if method == "" {
		method = http.MethodPost
	}
	for _, c := range method {
		if c < 'A' || c > 'Z' {
			return nil, fmt.Errorf("purge method %q: want an upper-case HTTP method such as POST or PURGE", method)
		}
	}
	h := http.Header{}
	for _, line := range strings.Split(strings.ReplaceAll(headers, `\n`, "\n"), "\n") {
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		name, value, ok := strings.Cut(line, ":")
		if !ok || strings.TrimSpace(name) == "" {
			return nil, fmt.Errorf("purge header %q: want Name: value", line)
		}
		h.Add(strings.TrimSpace(name), strings.TrimSpace(value))
	}
	if maxTags < 0 {
		return nil, fmt.Errorf("purge max tags %d: want a positive number", maxTags)
	}
	return &Purger{Method: method, URL: rawURL, Header: h, Body: body, MaxTags: maxTags}, nil
}

// Purge purges tags, MaxTags per request, and returns the first failure.
func (pg *Purger) Purge(ctx context.Context, tags []string) error {
	max := pg.MaxTags
	if max <= 0 {
		max = 30
	}
	for len(tags) > 0 {
		n := min(max, len(tags))
		if err := pg.send(ctx, tags[:n]); err != nil {
			return err
		}
		tags = tags[n:]
	}
	return nil
}

// send makes one purge request, retrying failures that may pass.
func (pg *Purger) send(ctx context.Context, tags []string) error {
	js, _ := json.Marshal(tags)
	raw := strings.NewReplacer("{{tags}}", strings.Join(tags, " "), "{{tags_json}}", string(js), "{{tags_csv}}", strings.Join(tags, ","))
	esc := strings.NewReplacer("{{tags}}", url.QueryEscape(strings.Join(tags, " ")), "{{tags_json}}", url.QueryEscape(string(js)),
		"{{tags_csv}}", url.QueryEscape(strings.Join(tags, ",")))
	client := pg.Client
	if client == nil {
		client = &http.Client{Timeout: 10 * time.Second}
	}
	attempts := pg.Attempts
	if attempts <= 0 {
		attempts = 3
	}
	method := pg.Method
	if method == "" {
		method = http.MethodPost
	}
	var last error
	for try := 0; try < attempts; try++ {
		if try > 0 {
			t := time.NewTimer(time.Duration(try) * 200 * time.Millisecond)
			select {
			case <-ctx.Done():
				t.Stop()
				return ctx.Err()
			case <-t.C:
			}
		}
		var body io.Reader
		if pg.Body != "" {
			body = bytes.NewReader([]byte(raw.Replace(pg.Body)))
		}
		req, err := http.NewRequestWithContext(ctx, method, esc.Replace(pg.URL), body)
		if err != nil {
			return fmt.Errorf("purge: %w", err)
		}
		for name, vs := range pg.Header {
			for _, v := range vs {
				req.Header.Add(name, raw.Replace(v))
			}
		}
		resp, err := client.Do(req)
		if err != nil {
			last = fmt.Errorf("purge: %w", err)
			continue
		}
		io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
		resp.Body.Close()
		switch {
		case resp.StatusCode < 300:
			return nil
		case resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode >= 500:
			last = fmt.Errorf("purge: %s answered %s", req.URL.Host, resp.Status)
		default:
			return fmt.Errorf("purge: %s answered %s", req.URL.Host, resp.Status)
		}
	}
	return last
}

// purgeQueue holds the tags to purge until edges have read the feed that
// lists their objects' changes: a CDN purged earlier could fetch the old
// object again from an edge that has not polled yet, and keep it.
type purgeQueue struct {
	mu   sync.Mutex
	tags map[string]bool
	due  time.Time // when the oldest queued tags may go
	wake chan struct{}
	now  func() time.Time
	wait time.Duration
}

func newPurgeQueue(wait time.Duration) *purgeQueue {
	return &purgeQueue{tags: map[string]bool{}, wake: make(chan struct{}, 1), now: time.Now, wait: wait}
}

// add queues tags, after the feed listing their changes was written.
func (q *purgeQueue) add(tags []string) {
	if len(tags) == 0 {
		return
	}
	q.mu.Lock()
	if len(q.tags) == 0 {
		q.due = q.now().Add(q.wait)
	}
	for _, t := range tags {
		q.tags[t] = true
	}
	q.mu.Unlock()
	poke(q.wake)
}

// take returns the queued tags, sorted, once they are due, and how long to
// wait when they are not (0 with none queued).
func (q *purgeQueue) take(force bool) ([]string, time.Duration) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if len(q.tags) == 0 {
		return nil, 0
	}
	if d := q.due.Sub(q.now()); d > 0 && !force {
		return nil, d
	}
	out := make([]string, 0, len(q.tags))
	for t := range q.tags {
		out = append(out, t)
	}
	clear(q.tags)
	slices.Sort(out)
	return out, 0
}

// followPurges sends the queued purges when they are due, until ctx ends.
func (p *Publisher) followPurges(ctx context.Context) {
	for {
		tags, wait := p.purges.take(false)
		if len(tags) > 0 {
			p.purge(ctx, tags)
			continue
		}
		var due <-chan time.Time
		var t *time.Timer
		if wait > 0 {
			t = time.NewTimer(wait)
			due = t.C
		}
		select {
		case <-ctx.Done():
		case <-p.purges.wake:
		case <-due:
		}
		if t != nil {
			t.Stop()
		}
		if ctx.Err() != nil {
			return
		}
	}
}

// drainPurges sends what is queued, once due.
func (p *Publisher) drainPurges(ctx context.Context) error {
	for {
		tags, wait := p.purges.take(false)
		if len(tags) > 0 {
			p.purge(ctx, tags)
			continue
		}
		if wait == 0 {
			return nil
		}
		if err := sleep(ctx, wait); err != nil {
			return err
		}
	}
}

// purge sends tags to the CDN. A failure is logged: the store is right,
// and a CDN keeps a stale copy at most s-maxage.
func (p *Publisher) purge(ctx context.Context, tags []string) {
	if p.cfg.Purger == nil {
		return
	}
	if err := p.cfg.Purger.Purge(ctx, tags); err != nil && ctx.Err() == nil {
		p.log.Error("publisher: CDN purge failed", "tags", len(tags), "err", err)
	}
}
