//go:build unix

package main

import (
	"fmt"
	"io"
	"math"
	"strings"
	"text/tabwriter"
	"time"
)

// result is everything one binary at one size measured.
type result struct {
	Label string
	N     int
	Mode  string
	Edges int

	SeedTime         time.Duration
	RepublishObjects int
	RepublishTime    time.Duration
	RepublishRSS     int64 // KiB

	Edit struct {
		phaseCosts
		Call, Edges, Webhook, Quiet series
	}
	New struct {
		phaseCosts
		Call                            series
		ItemEdges, ListEdges, PageEdges series
		ItemStore, ListStore            series
		Served, Stored                  series // the slowest of the edge ones, of the store ones
		Webhook, Fanout, Quiet          series
		RenderedByWebhook               series // objects rendered when the webhook had arrived
	}
	Sustained sustainedResult
	RSS       map[string]int64 // KiB, by process
	ServeRSS  int64            // KiB: edgecms serve after 5 edits and 5 new items
	RSSOrder  []string
	Verify    string
}

// phaseCosts are the per-publish object counts of a phase.
type phaseCosts struct {
	Rendered, Written, Files, Logged series
}

func (p *phaseCosts) addCosts(c costs) {
	if c.haveRendered {
		p.Rendered.add(float64(c.rendered))
		p.Written.add(float64(c.written))
	}
	if c.haveLogged {
		p.Logged.add(float64(c.logged))
	}
	p.Files.add(float64(c.files))
}

func (p *phaseCosts) print(w io.Writer) {
	if len(p.Logged.vals) > 0 {
		fmt.Fprintf(w, "  objects rendered (publisher log)          %s\n", p.Logged.line(""))
	}
	if len(p.Rendered.vals) > 0 {
		fmt.Fprintf(w, "  objects rendered (render numbers)         %s\n", p.Rendered.line(""))
		fmt.Fprintf(w, "  objects changed (object_changes)          %s\n", p.Written.line(""))
	}
	fmt.Fprintf(w, "  files written (store mtimes)              %s\n", p.Files.line(""))
}

func (r *result) republishRate() float64 {
	if r.RepublishTime == 0 {
		return 0
	}
	return float64(r.RepublishObjects) / r.RepublishTime.Seconds()
}

func (r *result) print(w io.Writer) {
	fmt.Fprintf(w, "-- %s, N = %d: figures (latencies from the publish call being sent; each late by at most one poll)\n", r.Label, r.N)
	fmt.Fprintf(w, "full republish: %d objects in %v = %.0f objects/s; peak RSS of the republish process %.0f MiB\n",
		r.RepublishObjects, r.RepublishTime.Round(time.Millisecond), r.republishRate(), mib(r.RepublishRSS))
	e := &r.Edit
	fmt.Fprintf(w, "edit of an existing item (one at a time):\n")
	e.phaseCosts.print(w)
	fmt.Fprintf(w, "  publish -> every edge serves it           %s\n", e.Edges.line("ms"))
	fmt.Fprintf(w, "  publish -> webhook received               %s\n", e.Webhook.line("ms"))
	fmt.Fprintf(w, "  publish -> publisher quiet                %s\n", e.Quiet.line("ms"))
	fmt.Fprintf(w, "  (the publish call itself)                 %s\n", e.Call.line("ms"))
	n := &r.New
	fmt.Fprintf(w, "new item (one at a time):\n")
	n.phaseCosts.print(w)
	if len(n.RenderedByWebhook.vals) > 0 {
		fmt.Fprintf(w, "  of them rendered once the webhook arrived %s\n", n.RenderedByWebhook.line(""))
	}
	fmt.Fprintf(w, "  publish -> item + list page 0 + its page-by-path served by every edge\n")
	fmt.Fprintf(w, "                                            %s\n", n.Served.line("ms"))
	fmt.Fprintf(w, "    item, every edge (a miss goes to the origin) %s\n", n.ItemEdges.line("ms"))
	fmt.Fprintf(w, "    list page 0 with the new totalCount     %s\n", n.ListEdges.line("ms"))
	fmt.Fprintf(w, "    page by path, every edge (miss: origin) %s\n", n.PageEdges.line("ms"))
	fmt.Fprintf(w, "  publish -> item + list page 0 in the store %s\n", n.Stored.line("ms"))
	fmt.Fprintf(w, "  publish -> webhook received               %s\n", n.Webhook.line("ms"))
	fmt.Fprintf(w, "  publish -> rest of the fan-out in the store (sitemaps, every list page)\n")
	fmt.Fprintf(w, "                                            %s\n", n.Fanout.line("ms"))
	fmt.Fprintf(w, "  publish -> publisher quiet                %s\n", n.Quiet.line("ms"))
	fmt.Fprintf(w, "  (the publish call itself)                 %s\n", n.Call.line("ms"))
	if s := &r.Sustained; s.Duration > 0 {
		fmt.Fprintf(w, "sustained %.0f publishes/s for %v (%d edits, %d new, %d failed calls", s.Rate, s.Duration, s.Edits, s.News, s.Errors)
		if s.FirstError != "" {
			fmt.Fprintf(w, "; first: %.200s", s.FirstError)
		}
		fmt.Fprintf(w, "):\n")
		fmt.Fprintf(w, "  publish -> every edge (edit: item; new: item in store + list page 0 on every edge)\n")
		fmt.Fprintf(w, "                                            %s\n", s.Edge.line("ms"))
		fmt.Fprintf(w, "  publish -> webhook received               %s\n", s.Webhook.line("ms"))
		fmt.Fprintf(w, "  over time, windows of %v (publish -> edge):\n", s.WindowWidth)
		for i := range s.Windows {
			fmt.Fprintf(w, "    %5.1f-%5.1f s  %s\n", (time.Duration(i) * s.WindowWidth).Seconds(),
				(time.Duration(i+1) * s.WindowWidth).Seconds(), s.Windows[i].line("ms"))
		}
		fmt.Fprintf(w, "  trend: %+.1f ms per minute (least squares over the publishes that reached the edges); %s\n", s.Slope, s.trend())
		if s.Edge.timeouts*10 > len(s.Edge.vals)+s.Edge.timeouts {
			fmt.Fprintf(w, "  (more than 10 %% of the publishes timed out: the slope, of the others only, does not show the lag)\n")
		}
		if s.Drain < 0 {
			fmt.Fprintf(w, "  after the last publish the publisher was NOT quiet within the settle timeout\n")
		} else {
			fmt.Fprintf(w, "  after the last publish the publisher went quiet in %v\n", s.Drain.Round(time.Millisecond))
		}
		fmt.Fprintf(w, "  CPU per publish: publisher %.1f ms, origin %.1f ms, Postgres %.1f ms", 1000*s.PublisherCPU, 1000*s.OriginCPU, 1000*s.PostgresCPU)
		if r.Mode == "serve" {
			fmt.Fprintf(w, " (serve: the whole process)")
		}
		fmt.Fprintln(w)
	}
	var rss []string
	for _, name := range r.RSSOrder {
		rss = append(rss, fmt.Sprintf("%s %.0f MiB", name, mib(r.RSS[name])))
	}
	fmt.Fprintf(w, "peak RSS (VmHWM): %s\n", strings.Join(rss, ", "))
	if r.ServeRSS > 0 {
		fmt.Fprintf(w, "peak RSS of edgecms serve on the same instance after 5 edits and 5 new items: %.0f MiB\n", mib(r.ServeRSS))
	}
	fmt.Fprintf(w, "verify: %s\n", r.Verify)
}

// sustainedResult is what the sustained phase measured.
type sustainedResult struct {
	Duration, Drain, WindowWidth         time.Duration
	Rate                                 float64
	Edits, News, Errors                  int
	FirstError                           string
	Edge, Webhook                        series
	Windows                              []series
	Slope                                float64 // ms of publish -> edge per minute of the phase
	PublisherCPU, OriginCPU, PostgresCPU float64 // seconds per publish
}

// trend says whether the lag grew: the median of the last three windows
// against that of the first three.
func (s *sustainedResult) trend() string {
	if len(s.Windows) < 6 {
		return ""
	}
	var first, last series
	for _, w := range s.Windows[:3] {
		first.vals = append(first.vals, w.vals...)
		first.timeouts += w.timeouts
	}
	for _, w := range s.Windows[len(s.Windows)-3:] {
		last.vals = append(last.vals, w.vals...)
		last.timeouts += w.timeouts
	}
	return fmt.Sprintf("median of the first 3 windows %.0f ms (%d timed out), of the last 3 %.0f ms (%d timed out)",
		first.pct(0.5), first.timeouts, last.pct(0.5), last.timeouts)
}

// summary prints one line per run, for the README.
func summary(w io.Writer, rs []*result) {
	fmt.Fprintf(w, "\n== summary (ms; p99 \"timeout\" when more than 1 %% of the samples timed out)\n")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "binary\tN\tedit: rendered p50\tedit: edges p99\tedit: webhook p99\tnew: rendered p50\tnew: served p99\tnew: webhook p99\tnew: fan-out p50\tsustained: edge p99\tlag trend ms/min\tpublisher CPU ms/publish\trepublish obj/s\tpublisher RSS MiB\tserve RSS MiB\tverify")
	for _, r := range rs {
		pubRSS := r.RSS["publisher"]
		if r.Mode == "serve" {
			pubRSS = r.RSS["serve"]
		}
		sus, trend, cpu := "-", "-", "-"
		if r.Sustained.Duration > 0 {
			sus, trend, cpu = ms(r.Sustained.Edge.p99OrTimeout()), fmt.Sprintf("%+.0f", r.Sustained.Slope), fmt.Sprintf("%.1f", 1000*r.Sustained.PublisherCPU)
		}
		verify, _, _ := strings.Cut(r.Verify, ":")
		serveRSS := r.ServeRSS
		if r.Mode == "serve" {
			serveRSS = pubRSS
		}
		fmt.Fprintf(tw, "%s\t%d\t%.0f\t%s\t%s\t%.0f\t%s\t%s\t%s\t%s\t%s\t%s\t%.0f\t%.0f\t%.0f\t%s\n", r.Label, r.N,
			r.Edit.Rendered.pct(0.5), ms(r.Edit.Edges.p99OrTimeout()), ms(r.Edit.Webhook.p99OrTimeout()),
			r.New.Rendered.pct(0.5), ms(r.New.Served.p99OrTimeout()), ms(r.New.Webhook.p99OrTimeout()), ms(r.New.Fanout.pct(0.5)),
			sus, trend, cpu, r.republishRate(), mib(pubRSS), mib(serveRSS), verify)
	}
	tw.Flush()
}

func ms(v float64) string {
	switch {
	case math.IsNaN(v):
		return "-"
	case math.IsInf(v, 1):
		return "timeout"
	}
	return fmt.Sprintf("%.0f", v)
}
