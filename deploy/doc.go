// Package deploy holds the files that run edgecms in production and their
// tests: the Dockerfile, compose.yaml (Postgres, MinIO, every role, two
// edges and Varnish purged by tag), Varnish's VCL and a systemd unit. See
// the README's deploy section for the walk-through. It has no Go code.
package deploy
