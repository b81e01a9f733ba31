package main

import (
	"fmt"
	"log/slog"
	"strconv"
	"time"

	"github.com/edgecms/edgecms/webhooks"
)

// webhookConfig is how dispatchers share the delivery work fairly: the
// connect timeout, the caps on deliveries in flight and the breaker.
type webhookConfig struct {
	ConnectTimeout      time.Duration
	EndpointConcurrency int
	InstanceConcurrency int
	BreakerTimeouts     int

	connectTimeout string // EDGECMS_WEBHOOK_CONNECT_TIMEOUT as given
	endpoint       string // EDGECMS_WEBHOOK_ENDPOINT_CONCURRENCY as given
	instance       string // EDGECMS_WEBHOOK_INSTANCE_CONCURRENCY as given
	breaker        string // EDGECMS_WEBHOOK_BREAKER_TIMEOUTS as given
}

// check parses the settings as given; attempt is the attempt timeout, which
// the connect timeout must not exceed.
func (w *webhookConfig) check(attempt time.Duration) error {
	d, err := time.ParseDuration(w.connectTimeout)
	if err != nil || d < 100*time.Millisecond || d > attempt {
		return fmt.Errorf("EDGECMS_WEBHOOK_CONNECT_TIMEOUT: want a duration between 100ms and EDGECMS_WEBHOOK_TIMEOUT (%s), got %q", attempt, w.connectTimeout)
	}
	w.ConnectTimeout = d
	for _, n := range []struct {
		env, raw string
		lo, hi   int
		dst      *int
	}{
		{"EDGECMS_WEBHOOK_ENDPOINT_CONCURRENCY", w.endpoint, 1, 64, &w.EndpointConcurrency},
		{"EDGECMS_WEBHOOK_INSTANCE_CONCURRENCY", w.instance, 1, 4096, &w.InstanceConcurrency},
		{"EDGECMS_WEBHOOK_BREAKER_TIMEOUTS", w.breaker, 1, 1000, &w.BreakerTimeouts},
	} {
		v, err := strconv.Atoi(n.raw)
		if err != nil || v < n.lo || v > n.hi {
			return fmt.Errorf("%s: want a whole number from %d to %d, got %q", n.env, n.lo, n.hi, n.raw)
		}
		*n.dst = v
	}
	return nil
}

// LogValue shows the settings in the configuration logged at start.
func (w webhookConfig) LogValue() slog.Value {
	return slog.GroupValue(slog.Duration("connectTimeout", w.ConnectTimeout),
		slog.Int("endpointConcurrency", w.EndpointConcurrency), slog.Int("instanceConcurrency", w.InstanceConcurrency),
		slog.Int("breakerTimeouts", w.BreakerTimeouts))
}

// storeOptions are the webhooks store's options these settings make.
func (w webhookConfig) storeOptions(o webhooks.Options) webhooks.Options {
	o.ConnectTimeout, o.BreakerTimeouts = w.ConnectTimeout, w.BreakerTimeouts
	return o
}

// dispatcherConfig are the dispatcher's settings these make.
func (w webhookConfig) dispatcherConfig(d webhooks.DispatcherConfig) webhooks.DispatcherConfig {
	d.EndpointConcurrency, d.InstanceConcurrency = w.EndpointConcurrency, w.InstanceConcurrency
	return d
}
