package client

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/hashicorp/go-retryablehttp"

	"github.com/edgecms/edgecms/problem"
)

// Version is the version of this client, sent in the User-Agent header as
// edgecms-go/<Version>.
const Version = "0.1.0"

// The retry settings used when Options leaves them zero.
const (
	DefaultMaxRetries   = 3
	DefaultRetryWaitMin = 250 * time.Millisecond
	DefaultRetryWaitMax = 10 * time.Second
)

// DefaultTimeout bounds one attempt of a request made with the default
// HTTP client (the whole call, with retries, is bounded by its context).
const DefaultTimeout = 30 * time.Second

// Options configures a Client. The zero value is usable: it reads the live
// flavour without an API key, with the default retry settings.
type Options struct {
	// FetchKey is the API key sent with live (fetch) requests.
	FetchKey string
	// PreviewKey is the API key sent with preview requests.
	PreviewKey string
	// Preview selects the preview flavour (working content) instead of
	// the live one (published content).
	Preview bool

	// HTTPClient makes the requests. When nil, the client uses its own
	// http.Client with DefaultTimeout that follows redirects only within
	// the same host (so that the API key never travels to another host).
	HTTPClient *http.Client
	// UserAgent, when set, is put before the client's own product token:
	// "myapp/1.2 edgecms-go/0.1.0".
	UserAgent string
	// Logger receives go-retryablehttp's debug and error messages about
	// attempts and retries. Nil means silent.
	Logger *slog.Logger

	// MaxRetries is how many times a failed attempt is retried: 0 means
	// DefaultMaxRetries, a negative value turns retries off.
	MaxRetries int
	// RetryWaitMin is the base of the exponential backoff (default
	// DefaultRetryWaitMin).
	RetryWaitMin time.Duration
	// RetryWaitMax is the longest wait between two attempts, whatever the
	// Backoff policy or a Retry-After header asks for (default
	// DefaultRetryWaitMax).
	RetryWaitMax time.Duration
	// CheckRetry decides whether an attempt is retried (default
	// DefaultCheckRetry).
	CheckRetry CheckRetry
	// Backoff decides how long to wait before a retry (default
	// DefaultBackoff).
	Backoff Backoff
}

// Client reads one edgecms instance through the Fetch API. It is safe for
// concurrent use.
type Client struct {
	base       string // {base}/{guid} without a trailing slash
	fetchKey   string
	previewKey string
	preview    bool
	userAgent  string
	http       *http.Client
	logger     *slog.Logger

	retryMax   int
	waitMin    time.Duration
	waitMax    time.Duration
	checkRetry CheckRetry
	backoff    Backoff

	// wait is the seam through which every computed backoff passes before
	// go-retryablehttp sleeps it; tests record the value and return 0.
	wait func(time.Duration) time.Duration
}

// New returns a client for the instance guid served at baseURL, for example
// New("https://cdn.example.com", "a1b2c3d4", opts). baseURL may carry a path
// prefix ("https://example.com/v1"). When the host name already identifies
// the instance, guid may be empty and paths start at the API type.
func New(baseURL, guid string, opts Options) (*Client, error) {
	u, err := url.Parse(baseURL)
	if err != nil {
		return nil, problem.Field("baseURL", "not a URL: %v", err)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return nil, problem.Field("baseURL", "scheme must be http or https, not %q", u.Scheme)
	}
	if u.Host == "" {
		return nil, problem.Field("baseURL", "has no host")
	}
	if u.RawQuery != "" || u.Fragment != "" || u.User != nil {
		return nil, problem.Field("baseURL", "must not carry a query, a fragment or user information")
	}
	if strings.Contains(guid, "/") {
		return nil, problem.Field("guid", "must not contain a slash")
	}
	base := strings.TrimRight(u.String(), "/")
	if guid != "" {
		base += "/" + url.PathEscape(guid)
	}

	c := &Client{
		base:       base,
		fetchKey:   opts.FetchKey,
		previewKey: opts.PreviewKey,
		preview:    opts.Preview,
		http:       opts.HTTPClient,
		logger:     opts.Logger,
		retryMax:   opts.MaxRetries,
		waitMin:    opts.RetryWaitMin,
		waitMax:    opts.RetryWaitMax,
		checkRetry: opts.CheckRetry,
		backoff:    opts.Backoff,
		wait:       func(d time.Duration) time.Duration { return d },
	}
	c.userAgent = "edgecms-go/" + Version
	if opts.UserAgent != "" {
		c.userAgent = opts.UserAgent + " " + c.userAgent
	}
	if c.http == nil {
		c.http = defaultHTTPClient()
	}
	switch {
	case c.retryMax == 0:
		c.retryMax = DefaultMaxRetries
	case c.retryMax < 0:
		c.retryMax = 0
	}
	if c.waitMin <= 0 {
		c.waitMin = DefaultRetryWaitMin
	}
	if c.waitMax <= 0 {
		c.waitMax = DefaultRetryWaitMax
	}
	if c.waitMax < c.waitMin {
		return nil, problem.Field("RetryWaitMax", "%v is below RetryWaitMin %v", c.waitMax, c.waitMin)
	}
	if c.checkRetry == nil {
		c.checkRetry = DefaultCheckRetry
	}
	if c.backoff == nil {
		c.backoff = DefaultBackoff
	}
	return c, nil
}

// WithPreview returns a client for the preview flavour (preview true) or the
// live flavour (false) of the same instance, sharing c's HTTP client and
// settings.
func (c *Client) WithPreview(preview bool) *Client {
	d := *c
	d.preview = preview
	return &d
}

// defaultHTTPClient is an http.Client with a per-attempt timeout that does not
// carry the APIKey header to another host or down from https to http.
func defaultHTTPClient() *http.Client {
	var transport http.RoundTripper = http.DefaultTransport
	if t, ok := transport.(*http.Transport); ok {
		transport = t.Clone()
	}
	return &http.Client{
		Timeout:       DefaultTimeout,
		Transport:     transport,
		CheckRedirect: sameHostRedirect,
	}
}

func sameHostRedirect(req *http.Request, via []*http.Request) error {
	if len(via) >= 10 {
		return errors.New("stopped after 10 redirects")
	}
	from := via[0].URL
	if req.URL.Host != from.Host || (from.Scheme == "https" && req.URL.Scheme != "https") {
		return http.ErrUseLastResponse
	}
	return nil
}

// apiType is the path segment of the flavour.
func (c *Client) apiType() string {
	if c.preview {
		return "preview"
	}
	return "fetch"
}

// url builds {base}/{apitype}/{segments...}?{query}, escaping every segment.
func (c *Client) url(query url.Values, segments ...string) string {
	var b strings.Builder
	b.WriteString(c.base)
	b.WriteString("/")
	b.WriteString(c.apiType())
	for _, s := range segments {
		b.WriteString("/")
		b.WriteString(url.PathEscape(s))
	}
	if len(query) > 0 {
		b.WriteString("?")
		b.WriteString(query.Encode())
	}
	return b.String()
}

// get fetches the URL made of query and segments, decodes its JSON body
// into v and returns the URL, for errors about the content.
func (c *Client) get(ctx context.Context, v any, query url.Values, segments ...string) (string, error) {
	u := c.url(query, segments...)
	body, err := c.do(ctx, u)
	if err != nil {
		return u, err
	}
	if err := decode(body, v); err != nil {
		return u, fmt.Errorf("edgecms: GET %s: %w", u, err)
	}
	return u, nil
}

// badResponse is the error of a well-formed answer that lacks what it must
// hold.
func badResponse(u, why string) error {
	return fmt.Errorf("edgecms: GET %s: %w: %s", u, ErrBadResponse, why)
}

// do sends one GET with retries and returns the body of a 2xx answer, or an
// error: an *Error for any other status.
func (c *Client) do(ctx context.Context, u string) ([]byte, error) {
	req, err := retryablehttp.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, fmt.Errorf("edgecms: GET %s: %w", u, err)
	}
	key := c.fetchKey
	if c.preview {
		key = c.previewKey
	}
	if key != "" {
		req.Header.Set("APIKey", key)
	}
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", c.userAgent)

	attempts := 0
	rc := &retryablehttp.Client{
		HTTPClient:     c.http,
		RetryWaitMin:   c.waitMin,
		RetryWaitMax:   c.waitMax,
		RetryMax:       c.retryMax,
		CheckRetry:     retryablehttp.CheckRetry(c.checkRetry),
		Backoff:        c.cappedBackoff,
		ErrorHandler:   retryablehttp.PassthroughErrorHandler,
		RequestLogHook: func(retryablehttp.Logger, *http.Request, int) { attempts++ },
	}
	if c.logger != nil {
		rc.Logger = c.logger
	}
	resp, err := rc.Do(req)
	if err != nil {
		if resp != nil {
			drain(resp.Body)
		}
		return nil, fmt.Errorf("edgecms: GET %s (%s): %w", u, plural(attempts, "attempt"), err)
	}
	defer drain(resp.Body)
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return nil, newError(http.MethodGet, u, resp, attempts)
	}
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, fmt.Errorf("edgecms: GET %s: read body: %w", u, err)
	}
	return body, nil
}

// cappedBackoff asks the Backoff policy for a wait and keeps it within
// [0, RetryWaitMax].
func (c *Client) cappedBackoff(min, max time.Duration, attempt int, resp *http.Response) time.Duration {
	d := c.backoff(min, max, attempt, resp)
	d = clamp(d, 0, max)
	return c.wait(d)
}

func clamp(d, lo, hi time.Duration) time.Duration {
	return min(max(d, lo), hi)
}

// drain reads what is left of a body (a little) so the connection can be
// reused, then closes it.
func drain(body io.ReadCloser) {
	_, _ = io.Copy(io.Discard, io.LimitReader(body, 64<<10))
	_ = body.Close()
}

func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return fmt.Sprintf("%d %ss", n, word)
}

// decode unmarshals a whole JSON body into v. An empty body, a JSON null,
// malformed JSON, a value of the wrong shape or trailing data are errors
// matching ErrBadResponse.
func decode(body []byte, v any) error {
	body = bytes.TrimSpace(body)
	switch {
	case len(body) == 0:
		return fmt.Errorf("%w: empty body", ErrBadResponse)
	case bytes.Equal(body, []byte("null")):
		return fmt.Errorf("%w: body is null", ErrBadResponse)
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("%w: %w", ErrBadResponse, err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return fmt.Errorf("%w: data after the JSON value", ErrBadResponse)
	}
	return nil
}

// need checks required arguments, given as name, value pairs, and returns an
// Invalid problem naming the first one that is empty.
func need(args ...string) error {
	for i := 0; i+1 < len(args); i += 2 {
		if args[i+1] == "" {
			return problem.Field(args[i], "must not be empty")
		}
	}
	return nil
}
