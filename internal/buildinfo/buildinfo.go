// Package buildinfo tells which edgecms this binary is: the version set at
// build time (go build -ldflags "-X
// github.com/edgecms/edgecms/internal/buildinfo.Version=v1.2.3", as the
// Taskfile and deploy/Dockerfile do), else the module version Go recorded,
// with the VCS revision and the Go version from debug.ReadBuildInfo.
package buildinfo

import (
	"fmt"
	"runtime"
	"runtime/debug"
	"strings"
)

// Version is set by the linker; empty in a plain go build.
var Version string

// Info is what a binary knows of its build.
type Info struct {
	Version   string // Version, the module version, or "(devel)"
	Revision  string // VCS revision, if recorded
	Time      string // VCS commit time, if recorded
	Modified  bool   // the work tree had changes
	GoVersion string
}

// Read returns the build information of the running binary.
func Read() Info {
	i := Info{Version: Version, GoVersion: runtime.Version()}
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		if i.Version == "" {
			i.Version = "(devel)"
		}
		return i
	}
	if i.Version == "" {
		i.Version = bi.Main.Version
	}
	if i.Version == "" {
		i.Version = "(devel)"
	}
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			i.Revision = s.Value
		case "vcs.time":
			i.Time = s.Value
		case "vcs.modified":
			i.Modified = s.Value == "true"
		}
	}
	return i
}

// String is the one line `edgecms version` prints, such as
// "edgecms v1.2.0 (revision 3f2a9c1d0e4b, 2026-11-26T09:00:00Z, go1.26.8)".
func (i Info) String() string {
	var parts []string
	if i.Revision != "" {
		rev := i.Revision
		if len(rev) > 12 {
			rev = rev[:12]
		}
		if i.Modified {
			rev += "+modified"
		}
		parts = append(parts, "revision "+rev)
	}
	if i.Time != "" {
		parts = append(parts, i.Time)
	}
	parts = append(parts, i.GoVersion)
	return fmt.Sprintf("edgecms %s (%s)", i.Version, strings.Join(parts, ", "))
}
