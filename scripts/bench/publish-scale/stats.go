//go:build unix

package main

import (
	"fmt"
	"math"
	"slices"
	"time"
)

// series is a set of measurements of one kind; timeouts are counted apart
// (a timed-out sample has no value, and percentiles are of the others).
type series struct {
	vals         []float64
	timeouts     int
	lastTimedOut bool
}

func (s *series) add(v float64) { s.vals = append(s.vals, v) }
func (s *series) addDur(d time.Duration, ok bool) {
	s.lastTimedOut = !ok
	if !ok {
		s.timeouts++
		return
	}
	s.vals = append(s.vals, float64(d)/float64(time.Millisecond))
}

// pct is the nearest-rank percentile (0 without values).
func (s *series) pct(p float64) float64 {
	if len(s.vals) == 0 {
		return 0
	}
	v := slices.Sorted(slices.Values(s.vals))
	i := int(math.Ceil(p*float64(len(v)))) - 1
	return v[max(0, min(i, len(v)-1))]
}

func (s *series) max() float64 {
	if len(s.vals) == 0 {
		return 0
	}
	return slices.Max(s.vals)
}

func (s *series) mean() float64 {
	if len(s.vals) == 0 {
		return 0
	}
	t := 0.0
	for _, v := range s.vals {
		t += v
	}
	return t / float64(len(s.vals))
}

// line formats the series: unit "ms" for latencies, "" for counts.
func (s *series) line(unit string) string {
	if len(s.vals) == 0 {
		return fmt.Sprintf("(none; %d timed out)", s.timeouts)
	}
	f := "%.0f"
	if unit == "ms" {
		f = "%.1f"
	}
	out := fmt.Sprintf("p50 "+f+"  p95 "+f+"  p99 "+f+"  max "+f+" %s (n=%d", s.pct(0.5), s.pct(0.95), s.pct(0.99), s.max(), unit, len(s.vals))
	if s.timeouts > 0 {
		out += fmt.Sprintf(", %d timed out", s.timeouts)
	}
	return out + ")"
}

// p99OrTimeout is the p99 in ms, or +Inf when more than 1 % of the samples
// timed out (then the p99 is above the timeout).
func (s *series) p99OrTimeout() float64 {
	n := len(s.vals) + s.timeouts
	if n == 0 {
		return math.NaN()
	}
	if float64(s.timeouts) > 0.01*float64(n) {
		return math.Inf(1)
	}
	return s.pct(0.99)
}

// slope is the least-squares slope of ys over xs.
func slope(xs, ys []float64) float64 {
	n := float64(len(xs))
	if n < 2 {
		return 0
	}
	var sx, sy, sxx, sxy float64
	for i := range xs {
		sx += xs[i]
		sy += ys[i]
		sxx += xs[i] * xs[i]
		sxy += xs[i] * ys[i]
	}
	d := n*sxx - sx*sx
	if d == 0 {
		return 0
	}
	return (n*sxy - sx*sy) / d
}

func mib(kb int64) float64 { return float64(kb) / 1024 }
