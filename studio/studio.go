// Package studio is the Studio, edgecms's editing application in the
// browser, built from the Svelte sources beside this file into dist/ (by
// `go tool task studio`, see scripts/studio.sh) and embedded here, so that
// the binary serves it without Node.js. The origin serves it under /studio/
// (origin/studio.go); it talks to the management API only.
package studio

import (
	"embed"
	"io/fs"
)

//go:embed all:dist
var dist embed.FS

// Files returns the built Studio: index.html and the content-hashed files
// of assets/.
func Files() fs.FS {
	sub, err := fs.Sub(dist, "dist")
	if err != nil {
		panic(err) // dist is embedded: it is there
	}
	return sub
}
