//go:build !linux || 386

package edge

import "net"

// newHitLoops returns nil: the event loops that answer cache hits are
// Linux's (hitloop_linux.go); elsewhere every connection has a goroutine.
func newHitLoops(*Server, net.Listener) (net.Listener, error) { return nil, nil }
