//go:build unix

package main

import (
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"sync"
	"time"
)

// receiver is the webhook receiver: it records when each item's Published
// deliveries arrive.
type receiver struct {
	srv *http.Server
	url string

	mu        sync.Mutex
	published map[int64][]time.Time // contentID -> arrivals
	total     int
}

func startReceiver(addr string) (*receiver, error) {
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	r := &receiver{url: "http://" + addr + "/hook", published: map[int64][]time.Time{}}
	r.srv = &http.Server{Handler: r, ReadHeaderTimeout: 10 * time.Second}
	go r.srv.Serve(l)
	return r, nil
}

func (r *receiver) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	at := time.Now()
	b, _ := io.ReadAll(req.Body)
	var p struct {
		State     string `json:"state"`
		ContentID int64  `json:"contentID"`
	}
	json.Unmarshal(b, &p)
	r.mu.Lock()
	r.total++
	if p.State == "Published" && p.ContentID != 0 {
		r.published[p.ContentID] = append(r.published[p.ContentID], at)
	}
	r.mu.Unlock()
	w.WriteHeader(http.StatusNoContent)
}

// arrival is the first Published delivery for id that arrived at or after
// since.
func (r *receiver) arrival(id int64, since time.Time) (time.Time, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, t := range r.published[id] {
		if !t.Before(since) {
			return t, true
		}
	}
	return time.Time{}, false
}

// wait waits for arrival(id, since), polling every poll, until ctx ends.
func (r *receiver) wait(ctx context.Context, id int64, since time.Time, poll time.Duration) (time.Duration, bool) {
	t := time.NewTicker(poll)
	defer t.Stop()
	for {
		if at, ok := r.arrival(id, since); ok {
			return at.Sub(since), true
		}
		select {
		case <-ctx.Done():
			return 0, false
		case <-t.C:
		}
	}
}

func (r *receiver) close() {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	r.srv.Shutdown(ctx)
}
