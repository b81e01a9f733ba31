package store

import (
	"path/filepath"
	"strings"
	"testing"
)

func TestParseSpec(t *testing.T) {
	abs := func(p string) string {
		a, err := filepath.Abs(p)
		if err != nil {
			t.Fatal(err)
		}
		return a
	}
	tests := []struct {
		in   string
		want spec
	}{
		{"./data/objects", spec{folder: abs("data/objects")}},
		{"/srv/edgecms/objects", spec{folder: "/srv/edgecms/objects"}},
		{"objects", spec{folder: abs("objects")}},
		{"s3://edgecms", spec{bucket: "edgecms", endpoint: "s3.amazonaws.com", secure: true}},
		{"s3://edgecms/", spec{bucket: "edgecms", endpoint: "s3.amazonaws.com", secure: true}},
		{"s3://edgecms?region=eu-west-3", spec{bucket: "edgecms", endpoint: "s3.amazonaws.com", region: "eu-west-3", secure: true}},
		{"s3://edgecms?endpoint=127.0.0.1:9000&secure=false",
			spec{bucket: "edgecms", endpoint: "127.0.0.1:9000", pathStyle: true}},
		{"s3://my.bucket-1?endpoint=minio.internal&create=true&region=us-east-1",
			spec{bucket: "my.bucket-1", endpoint: "minio.internal", region: "us-east-1", secure: true, pathStyle: true, create: true}},
		{"s3://edgecms?endpoint=storage.example.com&pathstyle=false",
			spec{bucket: "edgecms", endpoint: "storage.example.com", secure: true}},
		{"s3://edgecms?pathstyle=1&secure=0&create=f",
			spec{bucket: "edgecms", endpoint: "s3.amazonaws.com", pathStyle: true}},
	}
	for _, tc := range tests {
		got, err := parseSpec(tc.in)
		if err != nil {
			t.Errorf("parseSpec(%q) error: %v", tc.in, err)
			continue
		}
		if got != tc.want {
			t.Errorf("parseSpec(%q) = %+v, want %+v", tc.in, got, tc.want)
		}
	}
}

func TestParseSpecErrors(t *testing.T) {
	tests := []struct {
		in      string
		wantErr string // a part of the message that tells what is wrong
	}{
		{"", "empty"},
		{"   ", "empty"},
		{"file:///srv/objects", `scheme "file"`},
		{"http://minio:9000/bucket", `scheme "http"`},
		{"s3://", "no bucket"},
		{"s3://?endpoint=x:9000", "no bucket"},
		{"s3://AB", "bucket"},
		{"s3://bucket_name", "bucket"},
		{"s3://edgecms/prefix/", "path inside the bucket"},
		{"s3://edgecms?endpoint=http://127.0.0.1:9000", "host:port"},
		{"s3://edgecms?endpoint=", "endpoint is empty"},
		{"s3://edgecms?secure=maybe", `secure="maybe"`},
		{"s3://edgecms?create=yes", `create="yes"`},
		{"s3://edgecms?pathstyle=sure", `pathstyle="sure"`},
		{"s3://edgecms?endpint=x:9000", `unknown parameter "endpint"`},
		{"s3://edgecms?region=a&region=b", "region is given 2 times"},
		{"s3://edgecms?%zz", "bad query"},
		{"s3://edgecms#frag", "fragment"},
	}
	for _, tc := range tests {
		_, err := parseSpec(tc.in)
		if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
			t.Errorf("parseSpec(%q) error = %v, want one containing %q", tc.in, err, tc.wantErr)
		}
	}
}

func TestParseSpecHidesCredentials(t *testing.T) {
	_, err := parseSpec("s3://AKIAEXAMPLE:s3cr3t@edgecms?endpoint=x:9000")
	if err == nil {
		t.Fatal("parseSpec accepted credentials in the spec")
	}
	if msg := err.Error(); strings.Contains(msg, "s3cr3t") || !strings.Contains(msg, "AWS_ACCESS_KEY_ID") {
		t.Errorf("error = %q, want one pointing at AWS_ACCESS_KEY_ID without the secret", msg)
	}
}

func TestCheckKey(t *testing.T) {
	tests := []struct {
		key  string
		want bool
	}{
		{"a", true},
		{"g/6f2e/fetch/en-us/item/12.json", true},
		{"g/6f2e/fetch/en-us/list/posts,skip=0,take=10,sort=title~asc.json", true},
		{"media/2026/photo@2x+small_v=1.png", true},
		{"a.b/c-d/e_f~g", true},
		{"ends.with.dot.", true},
		{"", false},
		{"/a", false},
		{"a/", false},
		{"a//b", false},
		{".", false},
		{"..", false},
		{"../a", false},
		{"a/..", false},
		{"a/../b", false},
		{".edgecms/meta/a", false},
		{"a/.tmp-1", false},
		{`a\b`, false},
		{"a\x00", false},
		{"a b", false},
		{"a:b", false},
		{"a?b", false},
		{"a%20b", false},
		{"ü", false},
		{strings.Repeat("x", MaxKeyLen), false}, // a 512-byte segment
		{strings.Repeat("x/", MaxKeyLen/2-1) + "xy", true},
		{strings.Repeat("x/", MaxKeyLen/2) + "x", false},
	}
	for _, tc := range tests {
		err := CheckKey(tc.key)
		if got := err == nil; got != tc.want {
			t.Errorf("CheckKey(%.40q) = %v, want valid %v", tc.key, err, tc.want)
		}
	}
}

func TestListable(t *testing.T) {
	tests := []struct {
		prefix string
		want   bool
	}{
		{"", true},
		{"a", true},
		{"a/", true},
		{"a/b", true},
		{"a/.", false},
		{".", false},
		{"../", false},
		{"a//", false},
		{"/", false},
		{"a/b c", false},
	}
	for _, tc := range tests {
		if got := listable(tc.prefix); got != tc.want {
			t.Errorf("listable(%q) = %v, want %v", tc.prefix, got, tc.want)
		}
	}
}

func TestETag(t *testing.T) {
	// The first 16 bytes of SHA-256("") in hex, quoted.
	if got, want := ETag(nil), `"e3b0c44298fc1c149afbf4c8996fb924"`; got != want {
		t.Errorf("ETag(nil) = %s, want %s", got, want)
	}
}
