// Package admin is the operators' side door of every edgecms role: a small
// HTTP server on its own address (EDGECMS_ADMIN_ADDR, never the public
// port) that answers
//
//   - GET /livez: 200 while the process runs, whatever its dependencies;
//   - GET /readyz: 200 when every readiness check of the role passes, else
//     503 with a problem document naming the failing check;
//   - GET /metrics: the Prometheus exposition of the role's registry.
//
// Liveness and readiness are kept apart on purpose: an orchestrator restarts
// a process whose /livez fails, and takes out of rotation one whose /readyz
// fails. A database outage must do the second, never the first.
//
// Probe is the client side, used by `edgecms health` as a Docker
// HEALTHCHECK (distroless images have no curl).
package admin

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/edgecms/edgecms/metrics"
	"github.com/edgecms/edgecms/problem"
)

// Off is the EDGECMS_ADMIN_ADDR value that turns the admin server off.
const Off = "off"

// DefaultAddr is the admin address when none is configured.
const DefaultAddr = "127.0.0.1:9090"

// checkTimeout bounds one readiness check, so that a hung dependency
// answers 503 before the prober gives up.
const checkTimeout = 3 * time.Second

// Check is one readiness condition of a role: Func returns nil when the
// dependency Name answers.
type Check struct {
	Name string
	Func func(ctx context.Context) error
}

// Handler serves /livez, /readyz (running checks) and /metrics (gathering
// from g; nil serves no /metrics).
func Handler(checks []Check, g prometheus.Gatherer) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /livez", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "no-store")
		io.WriteString(w, "ok\n")
	})
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "no-store")
		if err := Ready(r.Context(), checks); err != nil {
			body, _ := json.Marshal(problem.DocumentOf(err))
			w.Header().Set("Content-Type", problem.ContentType)
			w.WriteHeader(http.StatusServiceUnavailable)
			w.Write(body)
			return
		}
		io.WriteString(w, "ok\n")
	})
	if g != nil {
		mux.Handle("GET /metrics", promhttp.HandlerFor(g, promhttp.HandlerOpts{}))
	}
	return mux
}

// NewRegistry returns the registry of a role's /metrics: the shared
// edgecms series, the Go runtime's and the process's, and extra (the
// role's scrape-time collectors).
func NewRegistry(extra ...prometheus.Collector) (*prometheus.Registry, error) {
	r := prometheus.NewRegistry()
	cs := append([]prometheus.Collector{
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
	}, metrics.Shared()...)
	for _, c := range append(cs, extra...) {
		if err := r.Register(c); err != nil {
			return nil, err
		}
	}
	return r, nil
}

// Ready runs every check at once, each bounded by a few seconds, and
// returns a problem.Unavailable naming those that failed, or nil.
func Ready(ctx context.Context, checks []Check) error {
	errs := make([]error, len(checks))
	var wg sync.WaitGroup
	for i, c := range checks {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cctx, cancel := context.WithTimeout(ctx, checkTimeout)
			defer cancel()
			if err := c.Func(cctx); err != nil {
				errs[i] = fmt.Errorf("%s: %w", c.Name, err)
			}
		}()
	}
	wg.Wait()
	var failed []string
	for _, err := range errs {
		if err != nil {
			failed = append(failed, err.Error())
		}
	}
	if len(failed) == 0 {
		return nil
	}
	return problem.New(problem.Unavailable, "not ready: %s", strings.Join(failed, "; "))
}

// Serve serves h on addr until stop is called, which shuts the server down
// and waits for it; addr "off" (or empty) serves nothing. It returns an
// error when addr cannot be listened on.
func Serve(addr string, h http.Handler, log *slog.Logger) (stop func(), err error) {
	if addr == "" || addr == Off {
		return func() {}, nil
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("admin address (EDGECMS_ADMIN_ADDR): %w", err)
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second, IdleTimeout: 2 * time.Minute}
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Error("admin server", "err", err)
		}
	}()
	log.Info("admin listening", "addr", ln.Addr().String())
	return func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		srv.Shutdown(ctx)
		<-done
	}, nil
}

// Probe asks the admin server at addr for /livez, or /readyz when ready is
// set, and returns nil on a 200, else an error with the answer's detail.
// An address listening on every interface is probed on loopback.
func Probe(ctx context.Context, addr string, ready bool) error {
	if addr == "" || addr == Off {
		return errors.New("the admin server is off (EDGECMS_ADMIN_ADDR=off): nothing to probe")
	}
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("admin address %q: %w", addr, err)
	}
	if ip := net.ParseIP(host); host == "" || ip != nil && ip.IsUnspecified() {
		host = "127.0.0.1"
		if ip != nil && ip.To4() == nil {
			host = "::1"
		}
	}
	path := "/livez"
	if ready {
		path = "/readyz"
	}
	u := "http://" + net.JoinHostPort(host, port) + path
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return err
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("GET %s: %w", u, err)
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(res.Body, 4096))
	if res.StatusCode == http.StatusOK {
		return nil
	}
	var doc struct{ Detail string }
	if json.Unmarshal(body, &doc) == nil && doc.Detail != "" {
		return fmt.Errorf("GET %s: %s: %s", u, res.Status, doc.Detail)
	}
	return fmt.Errorf("GET %s: %s", u, res.Status)
}
