package edge_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"io"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/edgecms/edgecms/edge"
)

// TestListenTLS serves an edge with ListenTLS and reads an item over HTTPS
// twice on one connection: the TLS connection runs over the listener's
// deadline-recording, recv/send connections.
func TestListenTLS(t *testing.T) {
	st, _ := site(t)
	srv, err := edge.New(edge.Config{Store: st, OriginURL: deadURL(t)}, testLog(t))
	if err != nil {
		t.Fatal(err)
	}
	certFile, keyFile := selfSigned(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	errc := make(chan error, 1)
	go func() { errc <- srv.ListenTLS(addr, certFile, keyFile) }()
	t.Cleanup(func() {
		if err := srv.Shutdown(context.Background()); err != nil {
			t.Errorf("shutdown: %v", err)
		}
		if err := <-errc; err != nil {
			t.Errorf("ListenTLS: %v", err)
		}
	})

	tr := &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}
	defer tr.CloseIdleConnections()
	c := &http.Client{Transport: tr, Timeout: 10 * time.Second}
	url := "https://" + addr + "/acme/fetch/en-us/item/42"
	var res *http.Response
	waitFor(t, 10*time.Second, "edge listening", func() bool {
		req, _ := http.NewRequest("GET", url, nil)
		req.Header.Set("APIKey", fetchKey)
		res, err = c.Do(req)
		return err == nil
	})
	for i, want := range []string{"MISS", "HIT"} {
		if i > 0 {
			req, _ := http.NewRequest("GET", url, nil)
			req.Header.Set("APIKey", fetchKey)
			if res, err = c.Do(req); err != nil {
				t.Fatal(err)
			}
		}
		body, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode != 200 || string(body) != itemBody || res.Header.Get("X-Cache") != want {
			t.Errorf("GET %d over TLS = %d %q X-Cache %q, want 200 %q %s", i, res.StatusCode, body, res.Header.Get("X-Cache"), itemBody, want)
		}
		if res.TLS == nil {
			t.Error("the answer did not come over TLS")
		}
	}
}

// selfSigned writes a self-signed certificate for 127.0.0.1 and its key as
// PEM files.
func selfSigned(t *testing.T) (certFile, keyFile string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1),
		Subject:      pkix.Name{CommonName: "edge test"},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(time.Hour),
		IPAddresses:  []net.IP{net.ParseIP("127.0.0.1")},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kb, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	certFile, keyFile = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	if err := os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kb}), 0o600); err != nil {
		t.Fatal(err)
	}
	return certFile, keyFile
}
