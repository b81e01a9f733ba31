// Package compat holds edgecms's client-compatibility tests: the real npm
// clients (the Agility CMS SDKs, installed by scripts/test.sh into
// scripts/compat) run against a real edgecms origin over TLS, and their
// results are checked against the Fetch API and the management API.
package compat
