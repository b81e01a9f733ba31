package origin

import (
	"context"
	"database/sql/driver"
	"errors"
	"io"
	"log/slog"
	"net"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/lib/pq"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/edgecms/edgecms/cors"
	"github.com/edgecms/edgecms/delivery"
	"github.com/edgecms/edgecms/logging"
	"github.com/edgecms/edgecms/metrics"
	"github.com/edgecms/edgecms/problem"
)

// observe is the origin's outermost middleware: it gives the request its
// id (the client's X-Request-ID, or a new one, echoed in the answer),
// answers CORS preflights, and after the answer is made (by the handler or
// the error handler) adds the CORS headers, counts it in the metrics and
// writes the access line: one per request, whatever its status.
func (s *Server) observe(c *fiber.Ctx) error {
	start := time.Now()
	id := logging.RequestID(c.Request().Header.Peek(logging.RequestIDHeader))
	c.Set(logging.RequestIDHeader, id)
	fc := c.Context()
	route := ""
	applies := cors.Applies(fc.Path())
	if s.cfg.CORS != nil && applies && cors.Preflight(fc) {
		s.cfg.CORS.Answer(fc)
		c.Set(logging.RequestIDHeader, id)
		route = "preflight"
	} else {
		if err := c.Next(); err != nil {
			// The error handler makes the answer now, so that its status
			// is counted and logged.
			if herr := s.handleError(c, err); herr != nil {
				c.Status(fiber.StatusInternalServerError)
			}
		}
		route = c.Route().Path
		if applies {
			s.cfg.CORS.Decorate(fc)
		}
	}
	status := c.Response().StatusCode()
	elapsed := time.Since(start)
	metrics.HTTPRequests.WithLabelValues("origin", route, strconv.Itoa(status)).Inc()
	metrics.HTTPDuration.WithLabelValues("origin", route).Observe(elapsed.Seconds())
	level := slog.LevelInfo
	if route == delivery.FeedWaitPath && status == fiber.StatusOK {
		// Every edge waits there all the time: a line each 20 s or feed.
		level = slog.LevelDebug
	}
	s.log.LogAttrs(context.Background(), level, "request",
		slog.String("method", c.Method()), slog.String("route", route), slog.String("path", c.Path()),
		slog.Int("status", status), slog.Duration("duration", elapsed), slog.String("request_id", id))
	return nil
}

// dbUnavailable reports whether err says that Postgres cannot be reached
// or refuses work for now (down, restarting, out of connections), rather
// than a bug: such a request is answered 503, to be retried, never 500.
func dbUnavailable(err error) bool {
	var pe *pq.Error
	if errors.As(err, &pe) {
		// 08: connection exception; 57P01-57P03: shutting down or
		// starting; 53300: too many connections.
		return strings.HasPrefix(string(pe.Code), "08") || pe.Code == "57P01" || pe.Code == "57P02" || pe.Code == "57P03" || pe.Code == "53300"
	}
	var ne net.Error
	return errors.As(err, &ne) || errors.Is(err, driver.ErrBadConn) || errors.Is(err, syscall.ECONNREFUSED) ||
		errors.Is(err, syscall.ECONNRESET) || errors.Is(err, io.ErrUnexpectedEOF)
}

// errDBUnavailable is what a client is told when Postgres is down.
var errDBUnavailable = &problem.Error{Kind: problem.Unavailable, Detail: "the database is unavailable; retry later"}

// Collectors returns the origin's scrape-time gauges, for its admin
// server's registry: the fetch requests waiting on a render that another
// request of the same answer started (answer), which climbs when a
// costly answer (a sitemap or a page by path behind a large dynamic page)
// is missed by many edges or readers at once.
func (s *Server) Collectors() []prometheus.Collector {
	return []prometheus.Collector{
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Namespace: metrics.Namespace, Name: "origin_renders_waiting",
			Help: "Fetch API requests waiting on a render of their answer, their own or one they share."},
			func() float64 { return float64(s.waiting.Load()) }),
	}
}
