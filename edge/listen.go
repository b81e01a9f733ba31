package edge

import (
	"crypto/tls"
	"fmt"
	"net"

	"github.com/edgecms/edgecms/internal/guard"
)

// Listen serves the edge on addr (on the app's network, tcp4 unless
// configured) until Shutdown. Serve the edge with Listen, ListenTLS or
// Serve rather than on App() directly: their listeners (guard.Listener)
// retry an accept that fails, cap the open connections (Config.Conns) and
// close connections whose client stopped reading.
func (s *Server) Listen(addr string) error {
	ln, err := net.Listen(s.app.Config().Network, addr)
	if err != nil {
		return fmt.Errorf("edge: listen: %w", err)
	}
	return s.Serve(ln)
}

// ListenTLS serves the edge over TLS on addr, with the certificate and key
// in the PEM files certFile and keyFile (TLS 1.2 at least, as Fiber's
// ListenTLS).
func (s *Server) ListenTLS(addr, certFile, keyFile string) error {
	cert, err := tls.LoadX509KeyPair(certFile, keyFile)
	if err != nil {
		return fmt.Errorf("edge: load TLS key pair from %q and %q: %w", certFile, keyFile, err)
	}
	ln, err := net.Listen(s.app.Config().Network, addr)
	if err != nil {
		return fmt.Errorf("edge: listen: %w", err)
	}
	cfg := &tls.Config{MinVersion: tls.VersionTLS12, Certificates: []tls.Certificate{cert}}
	return s.app.Listener(guard.NewTLSListener(ln, cfg, s.cfg.Conns, s.log))
}

// Serve serves the edge on the connections ln accepts until Shutdown,
// which closes ln.
func (s *Server) Serve(ln net.Listener) error {
	return s.app.Listener(guard.NewListener(ln, s.cfg.Conns, s.log))
}
