package store

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/edgecms/edgecms/problem"
)

// A folder store keeps each body as a plain file at <root>/<key>, so that a
// static web server can serve the folder as is, and the body's metadata in a
// sidecar JSON file at <root>/.edgecms/meta/<key>.
//
// Body and sidecar cannot be replaced together atomically, so the sidecar
// holds the metadata of the current version and of the one before, each with
// the content hash of its body, and readers pick the entry whose hash
// matches the body they read:
//
//   - Put writes and fsyncs both new files under temporary names in their
//     final folders, then, holding the key's lock, renames the sidecar
//     (current = new, previous = the replaced current), then the body.
//   - Between the two renames, and after a crash between them, the old body
//     is still in place and matches the previous entry, so readers see the
//     old version whole; after the second rename they see the new one.
//   - A reader that matches neither entry (it raced two writes) reads
//     again; a persistent mismatch means an interrupted write and reports
//     an error until the object is put again.
//
// Writers of one key are serialised by a striped lock (a mutex plus flock on
// a lock file under .edgecms/locks, so several processes may share a folder).
// Readers take no lock. Names starting with "." are never keys, so the
// .edgecms folder and temporary files cannot collide with objects.
type folder struct {
	root  string
	meta  string
	now   func() time.Time
	locks *locks
}

// sidecar is the JSON metadata file of one object.
type sidecar struct {
	Current  *metaEntry `json:"current"`
	Previous *metaEntry `json:"previous,omitempty"`
}

// metaEntry is the metadata of one version of a body.
type metaEntry struct {
	Hash         string    `json:"hash"`
	Size         int64     `json:"size"`
	ContentType  string    `json:"contentType"`
	CacheControl string    `json:"cacheControl,omitempty"`
	Tags         []string  `json:"tags,omitempty"`
	Modified     time.Time `json:"modified"`
}

const (
	folderPrivate = ".edgecms"
	tempPattern   = ".tmp-*"
	// readTries is how many times a reader retries without the lock before
	// it takes it.
	readTries = 3
)

// errDamaged reports a body that matches neither entry of its sidecar, or
// an unreadable sidecar: a race with writers when it passes, an interrupted
// write or a hand edit when it lasts.
var errDamaged = errors.New("damaged object")

func openFolder(root string, opts Options) (*folder, error) {
	f := &folder{
		root: root,
		meta: filepath.Join(root, folderPrivate, "meta"),
		now:  opts.now,
	}
	if err := os.MkdirAll(f.meta, 0o755); err != nil {
		return nil, fmt.Errorf("open store folder: %w", err)
	}
	var err error
	if f.locks, err = newLocks(filepath.Join(root, folderPrivate, "locks")); err != nil {
		return nil, fmt.Errorf("open store folder: %w", err)
	}
	return f, nil
}

func (f *folder) bodyPath(key string) string { return filepath.Join(f.root, filepath.FromSlash(key)) }
func (f *folder) metaPath(key string) string { return filepath.Join(f.meta, filepath.FromSlash(key)) }

func (f *folder) Get(ctx context.Context, key string) (Object, error) {
	if err := CheckKey(key); err != nil {
		return Object{}, err
	}
	if err := ctx.Err(); err != nil {
		return Object{}, err
	}
	return f.load(key)
}

func (f *folder) Stat(ctx context.Context, key string) (Info, error) {
	o, err := f.Get(ctx, key)
	if err != nil {
		return Info{}, err
	}
	return o.Info(), nil
}

// load reads a consistent body and metadata: optimistically, and then under
// the key's lock if concurrent writes kept getting in the way.
func (f *folder) load(key string) (Object, error) {
	for range readTries {
		o, err := f.read(key)
		if !errors.Is(err, errDamaged) {
			return o, err
		}
	}
	unlock, err := f.locks.lock(key)
	if err != nil {
		return Object{}, fmt.Errorf("get %s: %w", key, err)
	}
	defer unlock()
	o, err := f.read(key)
	if errors.Is(err, errDamaged) {
		return Object{}, fmt.Errorf("get %s: %w (an interrupted write or a hand edit?); put it again", key, err)
	}
	return o, err
}

// read reads the sidecar, then the body, and pairs the body with the
// sidecar entry of the same hash.
func (f *folder) read(key string) (Object, error) {
	sc, err := readSidecar(f.metaPath(key))
	if err != nil {
		if notExist(err) {
			return Object{}, problem.NotFoundf("object %s not found", key)
		}
		return Object{}, fmt.Errorf("get %s: %w", key, err)
	}
	body, err := os.ReadFile(f.bodyPath(key))
	if err != nil {
		if notExist(err) {
			return Object{}, problem.NotFoundf("object %s not found", key)
		}
		return Object{}, fmt.Errorf("get %s: %w", key, err)
	}
	e := sc.match(contentHash(body))
	if e == nil {
		return Object{}, fmt.Errorf("%w: the body matches none of its metadata", errDamaged)
	}
	return Object{
		Key:          key,
		Body:         body,
		ContentType:  e.ContentType,
		CacheControl: e.CacheControl,
		ETag:         quoteHash(e.Hash),
		Tags:         e.Tags,
		Modified:     e.Modified,
	}, nil
}

func (sc *sidecar) match(hash string) *metaEntry {
	for _, e := range []*metaEntry{sc.Current, sc.Previous} {
		if e != nil && e.Hash == hash {
			return e
		}
	}
	return nil
}

func readSidecar(path string) (*sidecar, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return parseSidecar(data)
}

func parseSidecar(data []byte) (*sidecar, error) {
	var sc sidecar
	if err := json.Unmarshal(data, &sc); err != nil {
		return nil, fmt.Errorf("%w: bad metadata: %v", errDamaged, err)
	}
	if sc.Current == nil {
		return nil, fmt.Errorf("%w: metadata without a current entry", errDamaged)
	}
	return &sc, nil
}

func (f *folder) Put(ctx context.Context, o Object) (bool, error) {
	o, err := prepare(o)
	if err != nil {
		return false, err
	}
	if err := ctx.Err(); err != nil {
		return false, err
	}
	cur, err := f.load(o.Key)
	switch {
	case err == nil:
		if sameMeta(cur.Info(), o) {
			return false, nil
		}
	case problem.Is(err, problem.NotFound), errors.Is(err, errDamaged):
		// Write it (a damaged object is repaired by writing it again).
	default:
		return false, err
	}
	if err := f.write(o); err != nil {
		return false, fmt.Errorf("put %s: %w", o.Key, err)
	}
	return true, nil
}

// PutListed implements Store: a listing that shows o spares reading its
// sidecar; anything else is a Put, whose read of the current object is
// cheap here.
func (f *folder) PutListed(ctx context.Context, o Object, listed *Info) (bool, error) {
	p, err := prepare(o)
	if err != nil {
		return false, err
	}
	if listedSame(listed, p) {
		return false, nil
	}
	return f.Put(ctx, o)
}

func (f *folder) write(o Object) error {
	if err := f.makeDirs(o.Key); err != nil {
		return err
	}
	bodyTemp, err := writeTemp(filepath.Dir(f.bodyPath(o.Key)), o.Body)
	if err != nil {
		return err
	}
	defer os.Remove(bodyTemp) // a no-op once renamed
	return f.commit(o, int64(len(o.Body)), bodyTemp)
}

// makeDirs creates the folders of key's body and sidecar, and refuses a key
// that a folder store cannot hold beside the others.
func (f *folder) makeDirs(key string) error {
	bodyPath := f.bodyPath(key)
	for _, dir := range []string{filepath.Dir(bodyPath), filepath.Dir(f.metaPath(key))} {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			if errors.Is(err, syscall.ENOTDIR) {
				return problem.Conflictf("object key %s is below another object's key (a folder store cannot hold both)", key)
			}
			return err
		}
	}
	if fi, err := os.Lstat(bodyPath); err == nil && fi.IsDir() {
		return problem.Conflictf("object key %s is a prefix of other objects' keys (a folder store cannot hold both)", key)
	}
	return nil
}

// commit makes the body written (and flushed) to bodyTemp, size bytes with
// the hash of o.ETag, the object o: it writes the sidecar and renames both
// files into place, under the key's lock.
func (f *folder) commit(o Object, size int64, bodyTemp string) error {
	bodyPath, metaPath := f.bodyPath(o.Key), f.metaPath(o.Key)
	bodyDir, metaDir := filepath.Dir(bodyPath), filepath.Dir(metaPath)
	entry := &metaEntry{
		Hash:         strings.Trim(o.ETag, `"`),
		Size:         size,
		ContentType:  o.ContentType,
		CacheControl: o.CacheControl,
		Tags:         o.Tags,
		Modified:     second(f.now()),
	}
	// Prepare the sidecar before taking the lock, from the sidecar as it
	// is now; under the lock, redo it only if another writer got there
	// first.
	old, _ := os.ReadFile(metaPath)
	metaTemp, err := writeSidecarTemp(metaDir, entry, old)
	if err != nil {
		return err
	}
	defer func() { os.Remove(metaTemp) }()

	unlock, err := f.locks.lock(o.Key)
	if err != nil {
		return err
	}
	if now, _ := os.ReadFile(metaPath); !bytes.Equal(now, old) {
		os.Remove(metaTemp)
		if metaTemp, err = writeSidecarTemp(metaDir, entry, now); err != nil {
			unlock()
			return err
		}
	}
	err = os.Rename(metaTemp, metaPath)
	if err == nil {
		err = os.Rename(bodyTemp, bodyPath)
	}
	unlock()
	if err != nil {
		return err
	}
	if err := syncDir(metaDir); err != nil {
		return err
	}
	return syncDir(bodyDir)
}

// writeSidecarTemp writes the sidecar that makes entry current and the
// current entry of old (the sidecar being replaced, possibly empty or
// unreadable) previous.
func writeSidecarTemp(dir string, entry *metaEntry, old []byte) (string, error) {
	sc := sidecar{Current: entry}
	if prev, err := parseSidecar(old); err == nil {
		sc.Previous = prev.Current
	}
	data, err := json.Marshal(sc)
	if err != nil {
		return "", err
	}
	return writeTemp(dir, data)
}

// writeTemp writes data to a new temporary file in dir, readable by all
// (a web server may serve the folder), flushed to disk, and returns its path.
func writeTemp(dir string, data []byte) (string, error) {
	return writeTempFrom(dir, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	})
}

// writeTempFrom is writeTemp with the content written by write.
func writeTempFrom(dir string, write func(io.Writer) error) (string, error) {
	t, err := os.CreateTemp(dir, tempPattern)
	if err != nil {
		return "", err
	}
	err = write(t)
	if err == nil {
		err = t.Chmod(0o644)
	}
	if err == nil {
		err = t.Sync()
	}
	if cerr := t.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(t.Name())
		return "", err
	}
	return t.Name(), nil
}

// syncDir flushes a folder, making renames in it durable.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	return err
}

// PutFrom implements Store: the body is written to the temporary file as
// it is read, and compared with the stored object by the hashes and sizes
// of the sidecar, without reading the stored body.
func (f *folder) PutFrom(ctx context.Context, o Object, r io.Reader, size int64) (bool, error) {
	o, err := prepareStream(o, size)
	if err != nil {
		return false, err
	}
	if err := ctx.Err(); err != nil {
		return false, err
	}
	if err := f.makeDirs(o.Key); err != nil {
		return false, fmt.Errorf("put %s: %w", o.Key, err)
	}
	var n int64
	var sum string
	bodyTemp, err := writeTempFrom(filepath.Dir(f.bodyPath(o.Key)), func(w io.Writer) (err error) {
		n, sum, err = copyBody(w, r, size)
		return err
	})
	if problem.Is(err, problem.Invalid) {
		return false, err
	}
	if err != nil {
		return false, fmt.Errorf("put %s: %w", o.Key, err)
	}
	defer os.Remove(bodyTemp) // a no-op once renamed
	o.ETag = quoteHash(sum)
	if cur, err := f.currentInfo(o.Key); err == nil && sameSized(cur, o, n) {
		return false, nil
	}
	if err := f.commit(o, n, bodyTemp); err != nil {
		return false, fmt.Errorf("put %s: %w", o.Key, err)
	}
	return true, nil
}

// currentInfo returns the current entry of key's sidecar when the body in
// place has its size: what Put compares with, without reading the body.
func (f *folder) currentInfo(key string) (Info, error) {
	sc, err := readSidecar(f.metaPath(key))
	if err != nil {
		return Info{}, err
	}
	fi, err := os.Stat(f.bodyPath(key))
	if err != nil {
		return Info{}, err
	}
	if fi.Size() != sc.Current.Size {
		return Info{}, errDamaged
	}
	return sc.Current.info(key), nil
}

// Open implements Store. The open file keeps the version it was opened
// with whatever renames follow; its size tells which sidecar entry
// describes it, and only when both entries have that size is it hashed.
func (f *folder) Open(ctx context.Context, key string) (io.ReadCloser, Info, error) {
	if err := CheckKey(key); err != nil {
		return nil, Info{}, err
	}
	if err := ctx.Err(); err != nil {
		return nil, Info{}, err
	}
	for range readTries {
		rc, info, err := f.open(key)
		if !errors.Is(err, errDamaged) {
			return rc, info, err
		}
	}
	unlock, err := f.locks.lock(key)
	if err != nil {
		return nil, Info{}, fmt.Errorf("open %s: %w", key, err)
	}
	defer unlock()
	rc, info, err := f.open(key)
	if errors.Is(err, errDamaged) {
		return nil, Info{}, fmt.Errorf("open %s: %w (an interrupted write or a hand edit?); put it again", key, err)
	}
	return rc, info, err
}

func (f *folder) open(key string) (io.ReadCloser, Info, error) {
	sc, err := readSidecar(f.metaPath(key))
	if err != nil {
		if notExist(err) {
			return nil, Info{}, problem.NotFoundf("object %s not found", key)
		}
		return nil, Info{}, fmt.Errorf("open %s: %w", key, err)
	}
	file, err := os.Open(f.bodyPath(key))
	if err != nil {
		if notExist(err) {
			return nil, Info{}, problem.NotFoundf("object %s not found", key)
		}
		return nil, Info{}, fmt.Errorf("open %s: %w", key, err)
	}
	e, err := pickEntry(sc, file)
	if err != nil {
		file.Close()
		return nil, Info{}, err
	}
	return file, e.info(key), nil
}

// pickEntry returns the sidecar entry that describes the open body: by
// size, or by hash when both entries have the body's size. The body is
// left at its start.
func pickEntry(sc *sidecar, body *os.File) (*metaEntry, error) {
	fi, err := body.Stat()
	if err != nil {
		return nil, err
	}
	if e := sc.bySize(fi.Size()); e != nil {
		return e, nil
	}
	if sc.Current.Size != fi.Size() {
		return nil, fmt.Errorf("%w: the body matches none of its metadata", errDamaged)
	}
	h := sha256.New()
	if _, err := io.Copy(h, body); err != nil {
		return nil, err
	}
	if _, err := body.Seek(0, io.SeekStart); err != nil {
		return nil, err
	}
	if e := sc.match(hashSum(h)); e != nil {
		return e, nil
	}
	return nil, fmt.Errorf("%w: the body matches none of its metadata", errDamaged)
}

// bySize returns the entry of a body of size bytes when the sizes tell the
// entries apart, nil otherwise (no entry has that size, or both have).
func (sc *sidecar) bySize(size int64) *metaEntry {
	if sc.Previous != nil && sc.Previous.Size == sc.Current.Size {
		return nil
	}
	switch {
	case sc.Current.Size == size:
		return sc.Current
	case sc.Previous != nil && sc.Previous.Size == size:
		return sc.Previous
	}
	return nil
}

// info is the metadata of the object key in this version.
func (e *metaEntry) info(key string) Info {
	return Info{
		Key:          key,
		Size:         e.Size,
		ContentType:  e.ContentType,
		CacheControl: e.CacheControl,
		ETag:         quoteHash(e.Hash),
		Tags:         e.Tags,
		Modified:     e.Modified,
	}
}

func (f *folder) Delete(ctx context.Context, key string) error {
	if err := CheckKey(key); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	unlock, err := f.locks.lock(key)
	if err != nil {
		return fmt.Errorf("delete %s: %w", key, err)
	}
	defer unlock()
	// Body first: an object whose sidecar remains without a body is simply
	// not found, whereas a body without metadata could not be served.
	for _, path := range []string{f.bodyPath(key), f.metaPath(key)} {
		if err := removeFile(path); err != nil {
			return fmt.Errorf("delete %s: %w", key, err)
		}
	}
	return nil
}

// removeFile removes path if it is a file. Folders left empty stay: removing
// them would race with Puts creating files in them.
func removeFile(path string) error {
	fi, err := os.Lstat(path)
	if err != nil {
		if notExist(err) {
			return nil
		}
		return err
	}
	if fi.IsDir() {
		return nil
	}
	if err := os.Remove(path); err != nil && !notExist(err) {
		return err
	}
	return nil
}

func (f *folder) List(ctx context.Context, prefix string, fn func(Info) error) error {
	if !listable(prefix) {
		return nil
	}
	dir := ""
	if i := strings.LastIndexByte(prefix, '/'); i >= 0 {
		dir = prefix[:i]
	}
	return f.walk(ctx, dir, prefix, fn)
}

// walk lists folder dir (a key prefix without the trailing slash, "" for the
// root) in key byte order: an entry sorts as its name, plus "/" for a folder.
func (f *folder) walk(ctx context.Context, dir, prefix string, fn func(Info) error) error {
	entries, err := os.ReadDir(f.bodyPath(dir))
	if err != nil {
		if notExist(err) {
			return nil
		}
		return fmt.Errorf("list %s: %w", prefix, err)
	}
	type entry struct {
		sortKey string
		key     string
		d       fs.DirEntry
	}
	var list []entry
	for _, d := range entries {
		name := d.Name()
		if strings.HasPrefix(name, ".") {
			continue
		}
		key := name
		if dir != "" {
			key = dir + "/" + name
		}
		switch {
		case d.IsDir():
			if !strings.HasPrefix(key+"/", prefix) && !strings.HasPrefix(prefix, key+"/") {
				continue
			}
			list = append(list, entry{name + "/", key, d})
		case d.Type().IsRegular():
			if strings.HasPrefix(key, prefix) && CheckKey(key) == nil {
				list = append(list, entry{name, key, d})
			}
		}
	}
	// ReadDir sorts by name; a folder sorts as name + "/", which may move it
	// after names continuing with a byte below '/' (such as '-', '.', ',').
	slices.SortFunc(list, func(a, b entry) int { return strings.Compare(a.sortKey, b.sortKey) })
	for _, e := range list {
		if err := ctx.Err(); err != nil {
			return err
		}
		if e.d.IsDir() {
			if err := f.walk(ctx, e.key, prefix, fn); err != nil {
				return err
			}
			continue
		}
		info, ok, err := f.listInfo(e.key, e.d)
		if err != nil {
			return err
		}
		if !ok {
			continue
		}
		if err := fn(info); err != nil {
			return err
		}
	}
	return nil
}

// listInfo returns the metadata of a listed body, without reading the body
// when its size tells which sidecar entry describes it. It reports false
// for a body that is not an object (no sidecar: being created or deleted).
func (f *folder) listInfo(key string, d fs.DirEntry) (Info, bool, error) {
	sc, err := readSidecar(f.metaPath(key))
	if err != nil {
		if notExist(err) {
			return Info{}, false, nil // not an object (yet)
		}
		return Info{}, false, fmt.Errorf("list %s: %w", key, err)
	}
	fi, err := d.Info()
	if err != nil {
		if notExist(err) {
			return Info{}, false, nil
		}
		return Info{}, false, fmt.Errorf("list %s: %w", key, err)
	}
	// Sizes tell the entries apart unless they are equal.
	e := sc.bySize(fi.Size())
	if e == nil {
		o, err := f.load(key)
		if problem.Is(err, problem.NotFound) {
			return Info{}, false, nil
		}
		if err != nil {
			return Info{}, false, fmt.Errorf("list %s: %w", key, err)
		}
		return o.Info(), true, nil
	}
	return e.info(key), true, nil
}

// notExist reports errors meaning that a path does not name a file: it is
// missing, or a folder, or below a file.
func notExist(err error) bool {
	return errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) || errors.Is(err, syscall.EISDIR)
}
