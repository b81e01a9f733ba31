package metrics

import (
	"context"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/edgecms/edgecms/problem"
	"github.com/edgecms/edgecms/store"
)

// failing is a store whose every request fails with err.
type failing struct{ err error }

func (f failing) Get(context.Context, string) (store.Object, error) { return store.Object{}, f.err }
func (f failing) Stat(context.Context, string) (store.Info, error)  { return store.Info{}, f.err }
func (f failing) Put(context.Context, store.Object) (bool, error)   { return false, f.err }
func (f failing) PutListed(context.Context, store.Object, *store.Info) (bool, error) {
	return false, f.err
}
func (f failing) PutFrom(context.Context, store.Object, io.Reader, int64) (bool, error) {
	return false, f.err
}
func (f failing) Open(context.Context, string) (io.ReadCloser, store.Info, error) {
	return nil, store.Info{}, f.err
}
func (f failing) Delete(context.Context, string) error { return f.err }
func (f failing) List(context.Context, string, func(store.Info) error) error {
	return f.err
}

// TestStoreErrors checks that failed store requests count by operation,
// every method included, and that a missing object does not.
func TestStoreErrors(t *testing.T) {
	ctx := context.Background()
	calls := func(st store.Store) {
		st.Get(ctx, "k")
		st.Stat(ctx, "k")
		st.Put(ctx, store.Object{Key: "k"})
		st.PutListed(ctx, store.Object{Key: "k"}, nil)
		st.PutFrom(ctx, store.Object{Key: "k"}, strings.NewReader("x"), 1)
		st.Open(ctx, "k")
		st.Delete(ctx, "k")
		st.List(ctx, "", func(store.Info) error { return nil })
	}
	before := map[string]float64{}
	for _, op := range []string{"get", "stat", "put", "open", "delete", "list"} {
		before[op] = testutil.ToFloat64(StoreErrors.WithLabelValues(op))
	}
	calls(Store(failing{problem.NotFoundf("no object")}))
	calls(Store(failing{context.Canceled}))
	for op, n := range before {
		if got := testutil.ToFloat64(StoreErrors.WithLabelValues(op)); got != n {
			t.Errorf("store_errors_total{op=%q} moved by %v on not-found and cancelled requests", op, got-n)
		}
	}
	calls(Store(failing{errors.New("connection refused")}))
	want := map[string]float64{"get": 1, "stat": 1, "put": 3, "open": 1, "delete": 1, "list": 1}
	for op, n := range want {
		if got := testutil.ToFloat64(StoreErrors.WithLabelValues(op)) - before[op]; got != n {
			t.Errorf("store_errors_total{op=%q} moved by %v, want %v", op, got, n)
		}
	}
	// A listing stopped by its callback is the caller's doing.
	mem := Store(store.NewMemory(nil))
	mem.Put(ctx, store.Object{Key: "a", Body: []byte("x")})
	stop := errors.New("stop")
	n := testutil.ToFloat64(StoreErrors.WithLabelValues("list"))
	if err := mem.List(ctx, "", func(store.Info) error { return stop }); !errors.Is(err, stop) {
		t.Fatalf("List = %v, want the callback's error", err)
	}
	if got := testutil.ToFloat64(StoreErrors.WithLabelValues("list")); got != n {
		t.Error("a listing stopped by its callback counted as a store error")
	}
}
