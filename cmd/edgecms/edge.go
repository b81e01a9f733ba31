package main

import (
	"context"
	"errors"
	"flag"
	"log/slog"
	"net"
	"os"
	"sync"
	"time"

	"github.com/edgecms/edgecms/admin"
	"github.com/edgecms/edgecms/edge"
	"github.com/edgecms/edgecms/metrics"
	"github.com/edgecms/edgecms/origin"
	"github.com/edgecms/edgecms/store"
)

// openObjectStore opens the object store that EDGECMS_STORE names, with S3
// credentials from the environment.
// Its failed requests count in edgecms_store_errors_total.
func openObjectStore(ctx context.Context, cfg config) (store.Store, error) {
	st, err := store.Open(ctx, cfg.Store, store.Options{
		AccessKey:    os.Getenv("AWS_ACCESS_KEY_ID"),
		SecretKey:    os.Getenv("AWS_SECRET_ACCESS_KEY"),
		SessionToken: os.Getenv("AWS_SESSION_TOKEN"),
	})
	if err != nil {
		return nil, err
	}
	return metrics.Store(st), nil
}

// newEdge builds an edge on the configured store in front of originURL.
func newEdge(ctx context.Context, cfg config, originURL string, log *slog.Logger) (*edge.Server, error) {
	st, err := openObjectStore(ctx, cfg)
	if err != nil {
		return nil, err
	}
	return edge.New(cfg.edgeConfig(st, originURL), log)
}

// edgeConfig is the edge's configuration on st in front of originURL.
func (c config) edgeConfig(st store.Store, originURL string) edge.Config {
	return edge.Config{Store: st, OriginURL: originURL, CacheBytes: c.EdgeCacheBytes, FeedPoll: c.EdgeFeedPoll,
		UploadLimit: c.UploadMaxBytes, ImageSizes: c.ImageWidths, Conns: c.Conns,
		NoManagement: !c.EdgeManagement, CORS: c.CORS, AccessLog: c.EdgeAccessLog}
}

// runEdge runs an edge alone: no database, the store and the origin at
// EDGECMS_ORIGIN_URL only.
func runEdge(ctx context.Context, cfg config, _ *flag.FlagSet, log *slog.Logger) error {
	if cfg.OriginURL == "" {
		return errors.New("EDGECMS_ORIGIN_URL (--origin-url) is required: the origin the edge forwards misses, preview and management calls to")
	}
	log.Info("starting edge", "config", cfg.edgeLog())
	srv, err := newEdge(ctx, cfg, cfg.OriginURL, log.With("role", "edge"))
	if err != nil {
		return err
	}
	workers, stop := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); srv.Run(workers) }()
	defer func() { stop(); wg.Wait() }()
	// The admin server answers from the start: /readyz says 503 until the
	// feed is read.
	adm := adminServer{checks: []admin.Check{{Name: "edge", Func: srv.CheckReady}}, collectors: srv.Collectors()}
	stopAdmin, err := adm.serve(cfg, log)
	if err != nil {
		return err
	}
	defer stopAdmin()
	<-srv.Ready() // the feed is read before anything is served and cached
	errc := make(chan error, 1)
	go func() { errc <- listen(srv, cfg, log) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	log.Info("shutting down")
	sctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	return srv.Shutdown(sctx)
}

// server is what listen serves: the origin or an edge, whose own
// listeners survive floods of connections (guard.Listener).
type server interface {
	Listen(addr string) error
	ListenTLS(addr, certFile, keyFile string) error
}

var (
	_ server = (*origin.Server)(nil)
	_ server = (*edge.Server)(nil)
)

// listen serves srv on cfg.Addr, with TLS when configured.
func listen(srv server, cfg config, log *slog.Logger) error {
	log.Info("listening", "addr", cfg.Addr, "tls", cfg.TLSCert != "")
	if cfg.TLSCert != "" {
		return srv.ListenTLS(cfg.Addr, cfg.TLSCert, cfg.TLSKey)
	}
	return srv.Listen(cfg.Addr)
}

// startFront puts an edge in front of the origin srv for serve: the origin
// listens on an internal loopback port, the edge (started by the caller on
// EDGECMS_ADDR) forwards to it everything it does not serve from the
// store. The edge follows the change feed until workers is cancelled; it
// returns once the edge has read the feed (or given up waiting for it).
func startFront(ctx, workers context.Context, wg *sync.WaitGroup, cfg config, srv *origin.Server, errc chan<- error, log *slog.Logger) (*edge.Server, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	front, err := newEdge(ctx, cfg, "http://"+ln.Addr().String(), log.With("role", "edge"))
	if err != nil {
		ln.Close()
		return nil, err
	}
	log.Info("origin listening behind the edge", "addr", ln.Addr().String())
	go func() { errc <- srv.Serve(ln) }()
	wg.Add(1)
	go func() { defer wg.Done(); front.Run(workers) }()
	<-front.Ready() // the feed is read before anything is served and cached
	return front, nil
}

// edgeLog is what an edge logs of the configuration: no database.
func (c config) edgeLog() slog.Value {
	return slog.GroupValue(
		slog.String("addr", c.Addr), slog.String("store", redactStore(c.Store)), slog.String("origin", redactURL(c.OriginURL)),
		slog.Bool("tls", c.TLSCert != ""), slog.Int64("edgeCacheBytes", c.EdgeCacheBytes),
		slog.Duration("edgeFeedPoll", c.EdgeFeedPoll), slog.String("adminAddr", c.AdminAddr),
		slog.Bool("management", c.EdgeManagement), slog.String("cors", c.CORS.String()),
		slog.String("accessLog", c.EdgeAccessLog.String()),
	)
}
