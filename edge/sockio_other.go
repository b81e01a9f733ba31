//go:build !linux || 386

package edge

import "net"

// sockIO is Linux's (sockio_linux.go): elsewhere connections read and
// write through net.Conn.
type sockIO struct{}

func newSockIO(net.Conn) *sockIO { return nil }

func (*sockIO) read([]byte) (int, error)  { panic("edge: no sockIO on this system") }
func (*sockIO) write([]byte) (int, error) { panic("edge: no sockIO on this system") }
