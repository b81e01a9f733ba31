package origin

import (
	"io"
	"net/http"
	"net/http/httptest"
	"time"

	"github.com/gofiber/fiber/v2"
)

// ActorOf authenticates a GET on instance guid with the headers hdr as the
// management routes do, and returns the request's Actor.
func ActorOf(s *Server, guid string, hdr http.Header) string {
	app := fiber.New(fiber.Config{ErrorHandler: s.handleError})
	app.Get("/:guid", s.authenticate, func(c *fiber.Ctx) error { return c.SendString(Actor(c)) })
	req := httptest.NewRequest(http.MethodGet, "/"+guid, nil)
	req.Header = hdr
	res, err := app.Test(req, -1)
	if err != nil {
		return err.Error()
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return string(b)
}

// SetRateClock sets the clock of the origin's Fetch API rate limits.
func SetRateClock(s *Server, now func() time.Time) {
	s.limits.fetch.Now, s.limits.preview.Now = now, now
}

// WatchedEvent returns the id of the last event the origin's render cache
// has read from the event log.
func WatchedEvent(s *Server) int64 { return s.watched.Load() }

// AnswersWaiting is how many fetch requests wait on a render now.
func AnswersWaiting(s *Server) int64 { return s.waiting.Load() }
