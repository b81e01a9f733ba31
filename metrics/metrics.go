// Package metrics holds edgecms's Prometheus series and the registry each
// role's admin server exposes at /metrics (see package admin).
//
// The counters and histograms below are process-wide, as a Prometheus
// client's usually are: the packages that do the work (origin, edge,
// publisher, webhooks, store) add to them directly, so that no handler
// needs a metrics object passed in. What is measured at scrape time (queue
// depth, publisher lag, cache size, the Postgres pool) is a collector built
// by the role that owns the resource and added to its registry, so that a
// process exports only its own roles' gauges, each from its start, before
// any work.
package metrics

import (
	"context"
	"math"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Namespace prefixes every edgecms series.
const Namespace = "edgecms"

var (
	// HTTPRequests counts the requests answered, by role (origin, edge),
	// route (the route pattern, never the raw path, so that the series
	// stay few) and status code.
	HTTPRequests = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: Namespace, Name: "http_requests_total",
		Help: "HTTP requests answered, by role, route pattern and status code.",
	}, []string{"role", "route", "code"})
	// HTTPDuration is how long requests took, by role and route.
	HTTPDuration = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Namespace: Namespace, Name: "http_request_duration_seconds",
		Help:    "Time to answer an HTTP request, by role and route pattern.",
		Buckets: []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10},
	}, []string{"role", "route"})

	// EdgeCacheHits and EdgeCacheMisses count Fetch API reads an edge
	// answered from its memory, and those it had to read from the store or
	// the origin.
	EdgeCacheHits = prometheus.NewCounter(prometheus.CounterOpts{
		Namespace: Namespace, Name: "edge_cache_hits_total",
		Help: "Fetch API reads an edge answered from its in-memory cache.",
	})
	EdgeCacheMisses = prometheus.NewCounter(prometheus.CounterOpts{
		Namespace: Namespace, Name: "edge_cache_misses_total",
		Help: "Fetch API reads an edge answered from the object store or the origin.",
	})

	// PublisherObjectsWritten counts objects the publisher wrote to the
	// store (unchanged objects are not written, nor counted).
	PublisherObjectsWritten = prometheus.NewCounter(prometheus.CounterOpts{
		Namespace: Namespace, Name: "publisher_objects_written_total",
		Help: "Objects a publisher wrote to the object store.",
	})
	// PublisherErrors counts failed publisher batches (each is retried).
	PublisherErrors = prometheus.NewCounter(prometheus.CounterOpts{
		Namespace: Namespace, Name: "publisher_errors_total",
		Help: "Publisher batches that failed and are retried.",
	})

	// WebhookDeliveries counts webhook delivery attempts by result:
	// success, retry (failed, tried again later) or failure (given up).
	WebhookDeliveries = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: Namespace, Name: "webhook_deliveries_total",
		Help: "Webhook delivery attempts by result: success, retry (failed, will be retried) or failure (failed, given up).",
	}, []string{"result"})
	// WebhookFailures counts failed attempts by the class of the
	// receiver's answer: 3xx, 4xx, 5xx, or "error" when none came
	// (refused, timed out, TLS).
	WebhookFailures = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: Namespace, Name: "webhook_failures_total",
		Help: "Failed webhook delivery attempts by status class of the answer (1xx, 3xx, 4xx, 5xx, or error when none came).",
	}, []string{"class"})
	// WebhookBreaker counts the transitions of webhook endpoints' breakers:
	// opened (attempts kept timing out: deliveries wait) and closed (an
	// attempt got an answer again).
	WebhookBreaker = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: Namespace, Name: "webhook_breaker_transitions_total",
		Help: "Webhook endpoint breakers opened (attempts kept timing out; deliveries wait) and closed (the endpoint answered again).",
	}, []string{"to"})

	// StoreErrors counts object store requests that failed (a missing
	// object is not a failure), by operation.
	StoreErrors = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: Namespace, Name: "store_errors_total",
		Help: "Object store requests that failed (not counting missing objects), by operation.",
	}, []string{"op"})
)

// shared are the process-wide series every registry exposes.
var shared = []prometheus.Collector{
	HTTPRequests, HTTPDuration, EdgeCacheHits, EdgeCacheMisses,
	PublisherObjectsWritten, PublisherErrors, WebhookDeliveries, WebhookFailures, WebhookBreaker, StoreErrors,
}

func init() {
	// Results and classes exist from start, at 0, so that a rate or an
	// alert on them has a series before the first failure.
	for _, r := range []string{"success", "retry", "failure"} {
		WebhookDeliveries.WithLabelValues(r)
	}
	for _, c := range []string{"1xx", "3xx", "4xx", "5xx", "error"} {
		WebhookFailures.WithLabelValues(c)
	}
	for _, to := range []string{"opened", "closed"} {
		WebhookBreaker.WithLabelValues(to)
	}
	for _, op := range []string{"get", "stat", "put", "open", "read", "delete", "list"} {
		StoreErrors.WithLabelValues(op)
	}
}

// Shared returns the process-wide series, for a registry (see
// admin.NewRegistry, which adds the runtime's; they live there because
// their package brings database/sql, which edges must not link).
func Shared() []prometheus.Collector { return shared }

// StatusClass is the class of an HTTP status for WebhookFailures: "4xx"
// for 404, "error" for 0 (no answer).
func StatusClass(code int) string {
	if code < 100 || code > 599 {
		return "error"
	}
	return strconv.Itoa(code/100) + "xx"
}

// Gauge is a gauge measured at scrape time by f, bounded by a few seconds;
// when f fails (its database is down) the gauge reads NaN, so that the
// series stays and an alert on it sees no stale value.
func Gauge(name, help string, f func(ctx context.Context) (float64, error)) prometheus.Collector {
	return prometheus.NewGaugeFunc(prometheus.GaugeOpts{Namespace: Namespace, Name: name, Help: help}, func() float64 {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		v, err := f(ctx)
		if err != nil {
			return math.NaN()
		}
		return v
	})
}
