package store

import (
	"bytes"
	"context"
	"io"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/edgecms/edgecms/problem"
)

// Memory is a Store that keeps objects in a map, for unit tests of the code
// that uses a Store. It behaves like the real stores (the same key rules,
// ETags and skipped unchanged writes) and passes the same conformance suite.
type Memory struct {
	now func() time.Time
	mu  sync.RWMutex
	obj map[string]Object
}

// NewMemory returns an empty in-memory store. now is its clock; nil means
// time.Now.
func NewMemory(now func() time.Time) *Memory {
	if now == nil {
		now = time.Now
	}
	return &Memory{now: now, obj: map[string]Object{}}
}

// Get implements Store.
func (m *Memory) Get(ctx context.Context, key string) (Object, error) {
	if err := CheckKey(key); err != nil {
		return Object{}, err
	}
	m.mu.RLock()
	o, ok := m.obj[key]
	m.mu.RUnlock()
	if !ok {
		return Object{}, problem.NotFoundf("object %s not found", key)
	}
	o.Body = slices.Clone(o.Body)
	o.Tags = slices.Clone(o.Tags)
	return o, nil
}

// Stat implements Store.
func (m *Memory) Stat(ctx context.Context, key string) (Info, error) {
	o, err := m.Get(ctx, key)
	if err != nil {
		return Info{}, err
	}
	return o.Info(), nil
}

// Put implements Store.
func (m *Memory) Put(ctx context.Context, o Object) (bool, error) {
	o, err := prepare(o)
	if err != nil {
		return false, err
	}
	o.Body = slices.Clone(o.Body)
	m.mu.Lock()
	defer m.mu.Unlock()
	if cur, ok := m.obj[o.Key]; ok && sameMeta(cur.Info(), o) {
		return false, nil
	}
	o.Modified = second(m.now())
	m.obj[o.Key] = o
	return true, nil
}

// PutListed implements Store.
func (m *Memory) PutListed(ctx context.Context, o Object, listed *Info) (bool, error) {
	p, err := prepare(o)
	if err != nil {
		return false, err
	}
	if listedSame(listed, p) {
		return false, nil
	}
	return m.Put(ctx, o)
}

// PutFrom implements Store. A memory store holds bodies in memory anyway.
func (m *Memory) PutFrom(ctx context.Context, o Object, r io.Reader, size int64) (bool, error) {
	o, err := prepareStream(o, size)
	if err != nil {
		return false, err
	}
	var buf bytes.Buffer
	if _, _, err := copyBody(&buf, r, size); err != nil {
		return false, err
	}
	o.Body = buf.Bytes()
	return m.Put(ctx, o)
}

// Open implements Store.
func (m *Memory) Open(ctx context.Context, key string) (io.ReadCloser, Info, error) {
	o, err := m.Get(ctx, key)
	if err != nil {
		return nil, Info{}, err
	}
	return io.NopCloser(bytes.NewReader(o.Body)), o.Info(), nil
}

// Delete implements Store.
func (m *Memory) Delete(ctx context.Context, key string) error {
	if err := CheckKey(key); err != nil {
		return err
	}
	m.mu.Lock()
	delete(m.obj, key)
	m.mu.Unlock()
	return nil
}

// List implements Store. It lists a snapshot taken when it starts, so fn may
// use the store.
func (m *Memory) List(ctx context.Context, prefix string, fn func(Info) error) error {
	if !listable(prefix) {
		return nil
	}
	m.mu.RLock()
	var list []Info
	for key, o := range m.obj {
		if strings.HasPrefix(key, prefix) {
			info := o.Info()
			info.Tags = slices.Clone(info.Tags)
			list = append(list, info)
		}
	}
	m.mu.RUnlock()
	slices.SortFunc(list, func(a, b Info) int { return strings.Compare(a.Key, b.Key) })
	for _, info := range list {
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := fn(info); err != nil {
			return err
		}
	}
	return nil
}
