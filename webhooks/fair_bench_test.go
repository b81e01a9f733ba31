package webhooks

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"testing"
	"time"
)

// BenchmarkHangingNeighbour measures what issue 19's finding 3 is about:
// the delivery latency of one instance while another instance's 100
// endpoints accept and never answer. Instance a has 100 webhooks to a
// server that holds every request (each attempt waits the default 15 s,
// then is retried, and the breakers open); once they hold what the
// dispatcher lets them, instance b saves 20 items a second for 20 s, each
// delivered to a receiver that answers at once. It reports b's latency from
// the save call to the receipt: p50, p99 and max. "fair" runs the
// dispatcher as edgecms serve does; "uncapped" lifts the caps on deliveries
// in flight, as before them.
//
//	go test ./webhooks -run X -bench HangingNeighbour -benchtime 1x
func BenchmarkHangingNeighbour(b *testing.B) {
	for _, c := range []struct {
		name string
		cfg  DispatcherConfig
	}{
		{"fair", DispatcherConfig{}},
		{"uncapped", DispatcherConfig{EndpointConcurrency: 1 << 20, InstanceConcurrency: 1 << 20}},
	} {
		b.Run(c.name, func(b *testing.B) {
			for range b.N {
				hangingNeighbour(b, c.cfg)
			}
		})
	}
}

func hangingNeighbour(b *testing.B, cfg DispatcherConfig) {
	const (
		endpoints = 100
		rate      = 20 // b's saves per second
		seconds   = 20
	)
	e := newEnvOpts(b, cfg, Options{Policy: loopback()})
	e.content.Now, e.store.Now = time.Now, time.Now
	e.d = NewDispatcher(e.store, DispatcherConfig{ListenURL: e.dsn, EndpointConcurrency: cfg.EndpointConcurrency,
		InstanceConcurrency: cfg.InstanceConcurrency}, e.d.log)
	hang := newHangingServer(b)
	for i := range endpoints {
		e.webhook(fmt.Sprintf("%s/h%d", hang.srv.URL, i), Input{ContentSaveEvents: ptr(true),
			RetriesEnabled: ptr(true), RetryCount: ptr(8), RetrySpeed: ptr(string(SpeedFast))})
	}
	for i := range 3 {
		e.createItem("en-us", fmt.Sprint("a", i))
	}
	other := e.addInstance("beta")
	var (
		mu       sync.Mutex
		received = map[int64]time.Time{}
	)
	rc := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var p struct {
			ContentID int64 `json:"contentID"`
		}
		json.NewDecoder(r.Body).Decode(&p)
		mu.Lock()
		if _, ok := received[p.ContentID]; !ok {
			received[p.ContentID] = time.Now()
		}
		mu.Unlock()
		w.WriteHeader(http.StatusNoContent)
	}))
	b.Cleanup(rc.Close)
	e.webhookOf(other, rc.URL+"/hook", Input{ContentSaveEvents: ptr(true)})

	ctx, cancel := context.WithCancel(context.Background())
	stopped := make(chan struct{})
	go func() { e.d.Run(ctx); close(stopped) }()
	defer func() { hang.Release(); cancel(); <-stopped }()
	for hang.stats().held < min(e.d.cfg.InstanceConcurrency, e.d.cfg.Workers) {
		time.Sleep(10 * time.Millisecond)
	}

	b.ResetTimer()
	sent := map[int64]time.Time{}
	tick := time.NewTicker(time.Second / rate)
	for range rate * seconds {
		<-tick.C
		start := time.Now()
		st, err := e.content.CreateItem(e.ctx, other, "en-us", "Articles", map[string]json.RawMessage{"title": jsonOf("b")})
		if err != nil {
			b.Fatal(err)
		}
		sent[st.ContentID] = start
	}
	tick.Stop()
	deadline := time.Now().Add(2 * time.Minute)
	for {
		mu.Lock()
		n := len(received)
		mu.Unlock()
		if n == len(sent) || time.Now().After(deadline) {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	b.StopTimer()
	mu.Lock()
	defer mu.Unlock()
	var lat []time.Duration
	for id, at := range sent {
		if got, ok := received[id]; ok {
			lat = append(lat, got.Sub(at))
		}
	}
	if len(lat) < len(sent) {
		b.Logf("%d of %d deliveries of b arrived within 2 minutes of the last save", len(lat), len(sent))
	}
	slices.Sort(lat)
	q := func(p float64) float64 {
		if len(lat) == 0 {
			return 0
		}
		return lat[min(len(lat)-1, int(p*float64(len(lat))))].Seconds() * 1000
	}
	s := hang.stats()
	b.ReportMetric(q(0.5), "p50-ms")
	b.ReportMetric(q(0.99), "p99-ms")
	b.ReportMetric(q(1), "max-ms")
	b.ReportMetric(float64(len(lat)), "delivered")
	b.ReportMetric(float64(s.maxHeld), "held-max")
	var paused int64
	e.db.Get(&paused, `SELECT count(*) FROM webhook_breakers WHERE open_until > now()`)
	b.ReportMetric(float64(paused), "paused-endpoints")
}
