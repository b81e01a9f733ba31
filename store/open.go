package store

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/minio/minio-go/v7/pkg/s3utils"
)

// Options are the settings of Open that do not belong in the spec string:
// secrets, which main reads from the environment, and seams for tests.
type Options struct {
	// AccessKey and SecretKey are the S3 credentials (AWS_ACCESS_KEY_ID and
	// AWS_SECRET_ACCESS_KEY); empty means anonymous requests.
	AccessKey, SecretKey string
	// SessionToken goes with temporary S3 credentials (AWS_SESSION_TOKEN).
	SessionToken string
	// Now is the clock of the folder store, which records when objects are
	// written; nil means time.Now. S3 keeps its own time.
	Now func() time.Time
}

func (o Options) now() time.Time {
	if o.Now != nil {
		return o.Now()
	}
	return time.Now()
}

// Open returns the store that spec names:
//
//   - a folder path, such as "./data/objects", for a folder store (the
//     folder is created when missing);
//   - "s3://bucket?endpoint=host:port&secure=false&region=r&create=true" for
//     an S3-compatible store. Without endpoint it is AWS S3. secure (default
//     true) chooses HTTPS; region is optional; pathstyle (default true with
//     an endpoint, false without) chooses path-style over virtual-host
//     requests; create=true creates the bucket when it does not exist.
//
// Opening an S3 store checks that the bucket exists (or creates it), so
// that a wrong endpoint, bucket or credential fails at start.
func Open(ctx context.Context, spec string, opts Options) (Store, error) {
	sp, err := parseSpec(spec)
	if err != nil {
		return nil, err
	}
	if sp.folder != "" {
		return openFolder(sp.folder, opts)
	}
	return openS3(ctx, sp, opts)
}

// spec is a parsed store spec: folder, or the S3 fields.
type spec struct {
	folder string

	bucket    string
	endpoint  string
	region    string
	secure    bool
	pathStyle bool
	create    bool
}

const awsEndpoint = "s3.amazonaws.com"

func parseSpec(s string) (spec, error) {
	if strings.TrimSpace(s) == "" {
		return spec{}, errors.New("store spec is empty: give a folder path or s3://bucket")
	}
	scheme, _, hasScheme := strings.Cut(s, "://")
	if !hasScheme {
		abs, err := filepath.Abs(s)
		if err != nil {
			return spec{}, fmt.Errorf("store folder %q: %w", s, err)
		}
		return spec{folder: abs}, nil
	}
	if scheme != "s3" {
		return spec{}, fmt.Errorf("store spec has scheme %q: use a folder path or s3://bucket?endpoint=host:port", scheme)
	}
	u, err := url.Parse(s)
	if err != nil {
		// The error may quote the spec; it holds no secrets unless a user
		// put them there, which is refused below anyway.
		return spec{}, errors.New("store spec is not a valid s3:// URL")
	}
	if u.User != nil {
		return spec{}, errors.New("store spec must not hold credentials: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY")
	}
	sp := spec{bucket: u.Host, secure: true}
	if sp.bucket == "" {
		return spec{}, fmt.Errorf("store spec %q has no bucket: use s3://bucket", s)
	}
	if err := s3utils.CheckValidBucketNameStrict(sp.bucket); err != nil {
		return spec{}, fmt.Errorf("store spec %q: bucket %q: %v", s, sp.bucket, err)
	}
	if u.Path != "" && u.Path != "/" {
		return spec{}, fmt.Errorf("store spec %q: a path inside the bucket is not supported, use s3://bucket", s)
	}
	if u.Fragment != "" {
		return spec{}, fmt.Errorf("store spec %q has a #fragment", s)
	}
	q, err := url.ParseQuery(u.RawQuery)
	if err != nil {
		return spec{}, fmt.Errorf("store spec %q: bad query: %v", s, err)
	}
	pathStyle := ""
	for name, vals := range q {
		if len(vals) != 1 {
			return spec{}, fmt.Errorf("store spec %q: %s is given %d times", s, name, len(vals))
		}
		v := vals[0]
		switch name {
		case "endpoint":
			if strings.Contains(v, "://") || strings.Contains(v, "/") {
				return spec{}, fmt.Errorf("store spec %q: endpoint must be host or host:port (use secure=false for plain HTTP)", s)
			}
			if v == "" {
				return spec{}, fmt.Errorf("store spec %q: endpoint is empty", s)
			}
			sp.endpoint = v
		case "region":
			sp.region = v
		case "secure":
			if sp.secure, err = parseBool(name, v); err != nil {
				return spec{}, fmt.Errorf("store spec %q: %w", s, err)
			}
		case "create":
			if sp.create, err = parseBool(name, v); err != nil {
				return spec{}, fmt.Errorf("store spec %q: %w", s, err)
			}
		case "pathstyle":
			if _, err := parseBool(name, v); err != nil {
				return spec{}, fmt.Errorf("store spec %q: %w", s, err)
			}
			pathStyle = v
		default:
			return spec{}, fmt.Errorf("store spec %q: unknown parameter %q (known: endpoint, secure, region, pathstyle, create)", s, name)
		}
	}
	// Custom endpoints (MinIO and most S3-compatible stores) are addressed
	// path-style; AWS by virtual host.
	sp.pathStyle = sp.endpoint != ""
	if pathStyle != "" {
		sp.pathStyle, _ = parseBool("pathstyle", pathStyle)
	}
	if sp.endpoint == "" {
		sp.endpoint = awsEndpoint
	}
	return sp, nil
}

func parseBool(name, v string) (bool, error) {
	b, err := strconv.ParseBool(v)
	if err != nil {
		return false, fmt.Errorf("%s=%q is not true or false", name, v)
	}
	return b, nil
}
