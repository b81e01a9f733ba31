//go:build unix

package main

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"sync"
	"sync/atomic"
	"time"
)

// sustained is one publish of the sustained phase.
type sustained struct {
	at     time.Duration // publish call sent, from the phase's start
	isNew  bool
	edge   time.Duration // publish call -> every edge serves it
	edgeOK bool
	hook   time.Duration
	hookOK bool
	err    error
}

// sustain publishes at cfg.Rate for cfg.Sustain, open loop (a publish
// starts on time whether or not earlier ones are done), and measures each.
func (r *run) sustain(ctx context.Context) error {
	interval := time.Duration(float64(time.Second) / r.cfg.Rate)
	pool := make(chan int64, len(r.ids))
	for _, i := range rand.Perm(len(r.ids)) {
		pool <- r.ids[i]
	}
	base := r.published.Load()
	var newReturned atomic.Int64
	poll := max(r.cfg.Poll, 25*time.Millisecond)

	var mu sync.Mutex
	var samples []sustained
	record := func(s sustained) {
		mu.Lock()
		samples = append(samples, s)
		mu.Unlock()
	}
	op := func(i int, phaseStart time.Time) {
		s := sustained{isNew: rand.Float64() < r.cfg.NewShare}
		var id int64
		if !s.isNew {
			select {
			case id = <-pool:
				defer func() { pool <- id }()
			default:
				s.isNew = true // every item is in flight: publish a new one
			}
		}
		var marker, slug string
		var want int64
		if s.isNew {
			slug = fmt.Sprintf("sus-%d-%d", i, time.Now().UnixNano())
			marker = "Sustained " + slug
			var err error
			if id, err = r.createItem(ctx, marker, slug); err != nil {
				s.err = err
				record(s)
				return
			}
			want = base + newReturned.Load() + 1
		} else {
			marker = fmt.Sprintf("Sustained edit %d at %d", i, time.Now().UnixNano())
			b, _ := json.Marshal(map[string]any{"fields": map[string]string{"title": marker}})
			if _, err := r.call(ctx, http.MethodPut, r.manageURL("/items/%d", id), string(b)); err != nil {
				s.err = err
				record(s)
				return
			}
		}
		start := time.Now()
		s.at = start.Sub(phaseStart)
		if _, err := r.call(ctx, http.MethodPost, r.manageURL("/items/%d/publish", id), ""); err != nil {
			s.err = err
			record(s)
			return
		}
		if s.isNew {
			newReturned.Add(1)
		}
		wctx, cancel := context.WithTimeout(ctx, r.cfg.Timeout)
		defer cancel()
		var wg sync.WaitGroup
		wg.Add(2)
		go func() {
			defer wg.Done()
			if !s.isNew {
				s.edge, s.edgeOK = r.waitEdges(wctx, itemPath(id), start, poll, contains(marker))
				return
			}
			// A new item: its own object in the store (an edge would
			// forward a miss to the origin, which answers from
			// Postgres), and list page 0 with the new count on
			// every edge.
			var d1, d2 time.Duration
			var ok1, ok2 bool
			var inner sync.WaitGroup
			inner.Add(2)
			go func() {
				defer inner.Done()
				d1, ok1 = waitFile(wctx, r.objectPath(fmt.Sprintf("item/%d/d1.json", id)), start, poll, contains(marker))
			}()
			go func() {
				defer inner.Done()
				d2, ok2 = r.waitEdges(wctx, r.listPath(0), start, poll, countAtLeast(want))
			}()
			inner.Wait()
			s.edge, s.edgeOK = max(d1, d2), ok1 && ok2
		}()
		go func() {
			defer wg.Done()
			s.hook, s.hookOK = r.rcv.wait(wctx, id, start, poll)
		}()
		wg.Wait()
		record(s)
	}

	pubCPU, originCPU, pgCPU := cpuSeconds(r.publisher.pid()), r.roleCPU("origin"), childrenCPU(pgPostmaster)
	phaseStart := time.Now()
	var wg sync.WaitGroup
	for i := 0; ; i++ {
		next := phaseStart.Add(time.Duration(i) * interval)
		if next.Sub(phaseStart) >= r.cfg.Sustain {
			break
		}
		select {
		case <-ctx.Done():
			wg.Wait()
			return ctx.Err()
		case <-time.After(time.Until(next)):
		}
		wg.Add(1)
		go func() { defer wg.Done(); op(i, phaseStart) }()
	}
	loadEnd := time.Now()
	wg.Wait()
	drained := time.Duration(-1)
	if _, err := r.settle(ctx); err == nil {
		drained = time.Since(loadEnd) - r.cfg.Quiet
	} else if ctx.Err() != nil {
		return err
	}
	pubCPU, originCPU, pgCPU = cpuSeconds(r.publisher.pid())-pubCPU, r.roleCPU("origin")-originCPU, childrenCPU(pgPostmaster)-pgCPU
	r.published.Add(newReturned.Load())

	res := &r.res.Sustained
	res.Duration, res.Rate, res.Drain = r.cfg.Sustain, r.cfg.Rate, drained
	ok := 0
	for _, s := range samples {
		if s.err != nil {
			res.Errors++
			if res.FirstError == "" {
				res.FirstError = s.err.Error()
			}
			continue
		}
		ok++
		res.Edge.addDur(s.edge, s.edgeOK)
		res.Webhook.addDur(s.hook, s.hookOK)
		if s.isNew {
			res.News++
		} else {
			res.Edits++
		}
	}
	if ok > 0 {
		res.PublisherCPU = pubCPU / float64(ok)
		res.OriginCPU = originCPU / float64(ok)
		res.PostgresCPU = pgCPU / float64(ok)
	}
	// Lag over time: ten windows by publish time, and the slope of the
	// latency over the phase.
	const windows = 10
	width := r.cfg.Sustain / windows
	res.Windows = make([]series, windows)
	var xs, ys []float64
	for _, s := range samples {
		if s.err != nil {
			continue
		}
		w := min(int(s.at/width), windows-1)
		res.Windows[w].addDur(s.edge, s.edgeOK)
		if s.edgeOK {
			xs = append(xs, s.at.Minutes())
			ys = append(ys, float64(s.edge)/float64(time.Millisecond))
		}
	}
	res.Slope = slope(xs, ys)
	res.WindowWidth = width
	return nil
}

// roleCPU is the CPU time of the named role's process (0 if not running).
func (r *run) roleCPU(name string) float64 {
	for _, p := range r.procs {
		if p.name == name {
			return cpuSeconds(p.pid())
		}
	}
	return 0
}
