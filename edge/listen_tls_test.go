package edge_test

import (
	"context"
	"crypto/tls"
	"io"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/edgecms/edgecms/edge"
	"github.com/edgecms/edgecms/internal/testcert"
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
	certFile, keyFile := testcert.Files(t)
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
