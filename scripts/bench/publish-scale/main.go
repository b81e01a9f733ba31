//go:build unix

// Command publish-scale measures the publisher at real size (issue 11): what
// one publish costs in a container of N items behind a dynamic page, how
// long it takes to reach every edge and the webhook receiver, whether the
// publisher keeps up with a sustained rate, and how a full republish scales.
//
// For each size N (-n 1000,10000,100000) and each binary under test (-src
// builds one from a checkout, -bin takes a built one; several of either are
// measured one after the other in the same run, so that they see the same
// machine), it:
//
//  1. creates a scratch database (on a throwaway Postgres cluster it starts
//     itself, or on -database-url) and migrates it with the binary;
//  2. creates, through the management API of the binary's origin, a model,
//     one container "posts", a page tree in channel website (Home, About,
//     Contact, Blog and, under Blog, a dynamic page over posts by Slug), one
//     published post and a webhook to a receiver in this process;
//  3. copies that post N-1 times with one INSERT ... SELECT (published, no
//     events: seeding 100,000 items takes seconds, not the hours of N API
//     calls), and runs `edgecms republish` (timed: full republish objects/s);
//  4. starts origin, publisher, dispatcher and -edges edges as separate
//     processes on a folder store (or `serve`, with -mode serve);
//  5. measures, one publish at a time: edits of existing items and new
//     items (objects rendered and written, publish -> every edge serving it,
//     -> webhook received, and for new items when the rest of the fan-out,
//     list pages and sitemaps, is done);
//  6. sustains -rate publishes/s (a mix of edits and new items) for
//     -sustain, and reports publish -> edge and webhook latency over time,
//     and the publisher's CPU time per publish;
//  7. reads the peak RSS (VmHWM) of every process and runs `edgecms verify
//     --guid G` when the binary has it.
//
// Latencies start when the publish call is sent (its own duration is
// included) and end when the driver's poll first sees the new state: each
// is late by at most one poll interval plus one request. Objects rendered
// are counted from the objects table (rows whose render number moved past
// the one before the publish), objects written from object_changes and,
// independently of the schema, from the folder store's file mtimes.
//
// Run it through scripts/bench/publish-scale.sh.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

func main() {
	var cfg config
	var srcs, bins multiFlag
	flag.Var(&srcs, "src", "build the binary under test from this checkout: DIR or LABEL=DIR (repeatable; default: the repo this runs in)")
	flag.Var(&bins, "bin", "an edgecms binary under test: PATH or LABEL=PATH (repeatable)")
	sizes := flag.String("n", "1000", "container sizes, comma-separated (1k, 10k, 100k allowed)")
	flag.IntVar(&cfg.Edits, "edits", 20, "measured edits of existing items, one at a time")
	flag.IntVar(&cfg.News, "news", 20, "measured new items, one at a time")
	flag.DurationVar(&cfg.Sustain, "sustain", 5*time.Minute, "length of the sustained phase (0: skip it)")
	flag.Float64Var(&cfg.Rate, "rate", 10, "publishes per second in the sustained phase")
	flag.Float64Var(&cfg.NewShare, "new-share", 0.5, "share of new items among the sustained publishes")
	flag.IntVar(&cfg.Edges, "edges", 2, "edge processes (with -mode split)")
	flag.StringVar(&cfg.Mode, "mode", "split", "split: origin, publisher, dispatcher and edges as separate processes; serve: one edgecms serve")
	flag.StringVar(&cfg.DatabaseURL, "database-url", "", "Postgres server to use (a scratch database bench_p3_* is created and dropped); empty: start a throwaway cluster on -pg-port")
	flag.IntVar(&cfg.PGPort, "pg-port", 22010, "port of the throwaway Postgres cluster")
	flag.IntVar(&cfg.BasePort, "base-port", 22100, "first of the ports the processes and the webhook receiver listen on (about 20 are used)")
	flag.DurationVar(&cfg.Timeout, "timeout", 60*time.Second, "give up waiting for one measured publish after this long (counted as a timeout)")
	flag.DurationVar(&cfg.SettleTimeout, "settle-timeout", 10*time.Minute, "wait at most this long for the publisher to go quiet between measured publishes")
	flag.DurationVar(&cfg.RepublishTimeout, "republish-timeout", 30*time.Minute, "give up on a size (and go on with the next run) when the seed's full republish takes longer")
	flag.DurationVar(&cfg.Quiet, "quiet", time.Second, "the publisher counts as quiet after this long without work (between the one-at-a-time publishes)")
	flag.DurationVar(&cfg.Poll, "poll", 5*time.Millisecond, "how often the driver polls edges, files and the receiver in the one-at-a-time phases")
	flag.StringVar(&cfg.Dir, "dir", "", "working folder (stores, logs, cluster); default a new temporary one, removed at the end unless -keep")
	flag.BoolVar(&cfg.Keep, "keep", false, "keep the working folder and the scratch databases")
	flag.Parse()
	log.SetFlags(0)

	for _, s := range strings.Split(*sizes, ",") {
		n, err := parseSize(s)
		if err != nil {
			log.Fatalf("publish-scale: -n: %v", err)
		}
		cfg.Sizes = append(cfg.Sizes, n)
	}
	if len(srcs) == 0 && len(bins) == 0 {
		srcs = multiFlag{"."}
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	cfg.Out = os.Stdout
	if cfg.Dir == "" {
		d, err := os.MkdirTemp("", "publish-scale")
		check(err)
		cfg.Dir = d
		if !cfg.Keep {
			defer os.RemoveAll(d)
		}
	}
	for _, s := range srcs {
		label, dir := labelled(s)
		dir, err := filepath.Abs(dir)
		check(err)
		if label == "" {
			label = filepath.Base(dir)
		}
		path := filepath.Join(cfg.Dir, "edgecms-"+label)
		fmt.Printf("building %s from %s\n", path, dir)
		check(build(ctx, dir, path))
		cfg.Bins = append(cfg.Bins, binary{Label: label, Path: path})
	}
	for _, b := range bins {
		label, path := labelled(b)
		if label == "" {
			label = filepath.Base(path)
		}
		cfg.Bins = append(cfg.Bins, binary{Label: label, Path: path})
	}
	if _, err := Run(ctx, cfg); err != nil {
		log.Print("publish-scale: ", err)
		os.Exit(1)
	}
}

// multiFlag collects a repeated flag.
type multiFlag []string

func (m *multiFlag) String() string     { return strings.Join(*m, ",") }
func (m *multiFlag) Set(v string) error { *m = append(*m, v); return nil }

// labelled splits LABEL=VALUE; a value alone has no label.
func labelled(s string) (label, value string) {
	if l, v, ok := strings.Cut(s, "="); ok && !strings.ContainsAny(l, "/.") {
		return l, v
	}
	return "", s
}

// parseSize reads 1000, 10k or 100k.
func parseSize(s string) (int, error) {
	s = strings.ToLower(strings.TrimSpace(s))
	mult := 1
	if strings.HasSuffix(s, "k") {
		mult, s = 1000, strings.TrimSuffix(s, "k")
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 {
		return 0, fmt.Errorf("bad size %q", s)
	}
	return n * mult, nil
}

// build builds ./cmd/edgecms of the checkout dir into path, without writing
// anything into the checkout.
func build(ctx context.Context, dir, path string) error {
	return runCmd(ctx, dir, nil, io.Discard, "go", "build", "-o", path, "./cmd/edgecms")
}

func check(err error) {
	if err != nil {
		log.Fatal("publish-scale: ", err)
	}
}
