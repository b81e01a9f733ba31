package main

import (
	"compress/gzip"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"

	"github.com/edgecms/edgecms/archive"
)

// archiveArgs are the flags of export and import.
var archiveArgs struct {
	guid, out, file string
}

func exportFlags(fs *flag.FlagSet) {
	fs.StringVar(&archiveArgs.guid, "guid", "", "guid of the instance to export")
	fs.StringVar(&archiveArgs.out, "out", "-", "archive file to write (gzip-compressed when it ends in .gz or .tgz; - is stdout)")
	fs.StringVar(&archiveArgs.out, "o", "-", "short for --out")
}

func importFlags(fs *flag.FlagSet) {
	fs.StringVar(&archiveArgs.file, "file", "", "archive file to read (or give it as the argument; - is stdin)")
	fs.StringVar(&archiveArgs.guid, "guid", "", "guid of the new instance (default: the archive's)")
}

// runExport writes an instance to one archive file. The file appears only
// once complete: it is written beside its name and renamed.
func runExport(ctx context.Context, cfg config, _ *flag.FlagSet, log *slog.Logger) (err error) {
	if archiveArgs.guid == "" {
		return errors.New("--guid is required")
	}
	out := archiveArgs.out
	if out == "-" {
		if fi, err := os.Stdout.Stat(); err == nil && fi.Mode()&os.ModeCharDevice != 0 {
			return errors.New("the archive is binary: write it to a file with --out FILE, or redirect stdout")
		}
	}
	db, err := openMigrated(ctx, cfg, log)
	if err != nil {
		return err
	}
	defer db.Close()
	objects, err := openObjectStore(ctx, cfg)
	if err != nil {
		return err
	}

	var w io.Writer = os.Stdout
	var tmp *os.File
	if out != "-" {
		tmp, err = os.CreateTemp(filepath.Dir(out), "."+filepath.Base(out)+".*")
		if err != nil {
			return err
		}
		defer func() {
			if err != nil {
				tmp.Close()
				os.Remove(tmp.Name())
			}
		}()
		w = tmp
	}
	var zw *gzip.Writer
	if strings.HasSuffix(out, ".gz") || strings.HasSuffix(out, ".tgz") {
		zw = gzip.NewWriter(w)
		w = zw
	}
	sum, err := archive.Export(ctx, db, objects, archiveArgs.guid, w)
	if err != nil {
		return err
	}
	if zw != nil {
		if err := zw.Close(); err != nil {
			return err
		}
	}
	if tmp != nil {
		if err := tmp.Sync(); err != nil {
			return err
		}
		if err := tmp.Close(); err != nil {
			return err
		}
		if err := os.Rename(tmp.Name(), out); err != nil {
			return err
		}
	}
	log.Info("exported", "guid", sum.Guid, "rows", total(sum.Rows), "assets", sum.Assets, "to", out)
	return nil
}

// runImport reads an archive into a new instance, then renders it into the
// object store and publishes its API keys to the edges, as a republish
// would: once it returns, edges and origins answer for it.
func runImport(ctx context.Context, cfg config, fs *flag.FlagSet, log *slog.Logger) error {
	file := archiveArgs.file
	if rest := fs.Args(); len(rest) == 1 && file == "" {
		file = rest[0]
	} else if len(rest) > 0 {
		return fmt.Errorf("unexpected arguments %q: give the archive file once, after the flags", rest)
	}
	if file == "" {
		return errors.New("give the archive file: edgecms import FILE (or --file FILE; - is stdin)")
	}
	var r io.Reader = os.Stdin
	if file != "-" {
		f, err := os.Open(file)
		if err != nil {
			return err
		}
		defer f.Close()
		r = f
	}
	db, err := openMigrated(ctx, cfg, log)
	if err != nil {
		return err
	}
	defer db.Close()
	objects, err := openObjectStore(ctx, cfg)
	if err != nil {
		return err
	}
	sum, err := archive.Import(ctx, db, objects, r, archive.ImportOptions{Guid: archiveArgs.guid})
	if err != nil {
		return err
	}
	for _, n := range sum.Notes {
		log.Warn(n)
	}
	pub, err := newPublisher(ctx, cfg, newContentStore(db, cfg), log)
	if err != nil {
		return err
	}
	defer pub.Close()
	bar := newProgress(os.Stderr, "render "+sum.Guid)
	err = pub.Republish(ctx, sum.Guid, bar.report)
	bar.finish()
	if err == nil {
		err = pub.PublishKeys(ctx, sum.Guid)
	}
	if err != nil {
		return fmt.Errorf("instance %s is imported, but rendering it failed (run edgecms republish --guid %s): %w", sum.Guid, sum.Guid, err)
	}
	return printJSON(sum)
}

func total(rows map[string]int64) int64 {
	var n int64
	for _, c := range rows {
		n += c
	}
	return n
}
