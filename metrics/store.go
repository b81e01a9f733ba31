package metrics

import (
	"context"
	"errors"
	"io"

	"github.com/edgecms/edgecms/problem"
	"github.com/edgecms/edgecms/store"
)

// Store wraps st so that its failed requests count in StoreErrors. A
// missing object, a body of the wrong length (the caller's mistake) and a
// cancelled request are not failures of the store.
func Store(st store.Store) store.Store { return &counted{st} }

type counted struct{ st store.Store }

func failed(op string, err error) {
	if err == nil || errors.Is(err, context.Canceled) || problem.Is(err, problem.NotFound) || problem.Is(err, problem.Invalid) {
		return
	}
	StoreErrors.WithLabelValues(op).Inc()
}

func (c *counted) Get(ctx context.Context, key string) (store.Object, error) {
	o, err := c.st.Get(ctx, key)
	failed("get", err)
	return o, err
}

func (c *counted) Stat(ctx context.Context, key string) (store.Info, error) {
	i, err := c.st.Stat(ctx, key)
	failed("stat", err)
	return i, err
}

func (c *counted) Put(ctx context.Context, o store.Object) (bool, error) {
	w, err := c.st.Put(ctx, o)
	failed("put", err)
	return w, err
}

func (c *counted) PutListed(ctx context.Context, o store.Object, listed *store.Info) (bool, error) {
	w, err := c.st.PutListed(ctx, o, listed)
	failed("put", err)
	return w, err
}

func (c *counted) PutFrom(ctx context.Context, o store.Object, r io.Reader, size int64) (bool, error) {
	w, err := c.st.PutFrom(ctx, o, r, size)
	failed("put", err)
	return w, err
}

func (c *counted) Open(ctx context.Context, key string) (io.ReadCloser, store.Info, error) {
	rc, info, err := c.st.Open(ctx, key)
	failed("open", err)
	if err != nil {
		return rc, info, err
	}
	return &countedReader{rc}, info, nil
}

func (c *counted) Delete(ctx context.Context, key string) error {
	err := c.st.Delete(ctx, key)
	failed("delete", err)
	return err
}

func (c *counted) List(ctx context.Context, prefix string, fn func(store.Info) error) error {
	// fn's own errors are the caller's, not the store's.
	var fnErr error
	err := c.st.List(ctx, prefix, func(i store.Info) error {
		fnErr = fn(i)
		return fnErr
	})
	if err != nil && (fnErr == nil || !errors.Is(err, fnErr)) {
		failed("list", err)
	}
	return err
}

// countedReader counts a body that fails while it is read (a store that
// went away mid-object).
type countedReader struct{ io.ReadCloser }

func (r *countedReader) Read(p []byte) (int, error) {
	n, err := r.ReadCloser.Read(p)
	if err != nil && err != io.EOF {
		failed("read", err)
	}
	return n, err
}
