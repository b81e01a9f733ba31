package edge

import (
	"context"
	"log/slog"
	"strconv"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/valyala/fasthttp"

	"github.com/edgecms/edgecms/logging"
	"github.com/edgecms/edgecms/metrics"
)

// observed are the request counter and duration histogram of one route and
// status, looked up once: a hit is the edge's hot path, and the vectors'
// label hashing would cost more than the hit.
type observed struct {
	count    prometheus.Counter
	duration prometheus.Observer
}

// observers maps route*1000+status to its *observed.
var observers sync.Map

func observer(route, status int) *observed {
	k := route*1000 + status
	if o, ok := observers.Load(k); ok {
		return o.(*observed)
	}
	name := routeNames[route]
	o := &observed{
		count:    metrics.HTTPRequests.WithLabelValues("edge", name, strconv.Itoa(status)),
		duration: metrics.HTTPDuration.WithLabelValues("edge", name),
	}
	v, _ := observers.LoadOrStore(k, o)
	return v.(*observed)
}

// observe counts the answer of c in the metrics and, when the access log
// samples it, logs it.
func (s *Server) observe(c *fasthttp.RequestCtx, route int, start time.Time) {
	status := c.Response.StatusCode()
	elapsed := time.Since(start)
	o := observer(route, status)
	o.count.Inc()
	o.duration.Observe(elapsed.Seconds())
	if s.cfg.AccessLog.Take() {
		// The origin's id when it answered (it echoes or makes one), else
		// the client's.
		id := c.Response.Header.Peek(logging.RequestIDHeader)
		if len(id) == 0 {
			id = c.Request.Header.Peek(logging.RequestIDHeader)
		}
		s.log.LogAttrs(context.Background(), slog.LevelInfo, "request",
			slog.String("method", string(c.Method())), slog.String("route", routeNames[route]),
			slog.String("path", string(c.Path())), slog.Int("status", status),
			slog.Duration("duration", elapsed), slog.String("cache", string(c.Response.Header.PeekBytes(hXCache))),
			slog.String("request_id", string(id)))
	}
}

// Collectors returns the edge's scrape-time gauges, for its admin
// server's registry: the bytes and entries its cache holds.
func (s *Server) Collectors() []prometheus.Collector {
	return []prometheus.Collector{
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Namespace: metrics.Namespace, Name: "edge_cache_bytes",
			Help: "Bytes an edge's in-memory object cache holds (objects and their overhead)."},
			func() float64 { _, b := s.cache.stats(); return float64(b) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Namespace: metrics.Namespace, Name: "edge_cache_entries",
			Help: "Objects an edge's in-memory cache holds."},
			func() float64 { n, _ := s.cache.stats(); return float64(n) }),
	}
}
