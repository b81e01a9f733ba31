//go:build linux && !386

package edge

import (
	"bytes"
	"errors"
	"io"
	"math/rand/v2"
	"net"
	"os"
	"strings"
	"testing"
	"time"
)

// TestSockIO checks that a coarseConn's reads and writes through recv and
// send behave as net.TCPConn's: data intact through partial sends, EOF,
// and the same errors for deadlines, closed connections and a peer gone.
func TestSockIO(t *testing.T) {
	t.Run("through partial sends, intact", func(t *testing.T) {
		_, c, client := coarsePair(t)
		if c.io == nil {
			t.Fatal("a TCP connection has no sockIO")
		}
		// More than the socket buffers hold, so that sends stop part way
		// and wait for the reader.
		data := make([]byte, 16<<20)
		for i := range data {
			data[i] = byte(rand.IntN(256))
		}
		errc := make(chan error, 1)
		go func() {
			n, err := c.Write(data)
			if err == nil && n != len(data) {
				err = errors.New("short write")
			}
			errc <- err
		}()
		got := make([]byte, 0, len(data))
		buf := make([]byte, 7000)
		for len(got) < len(data) {
			n, err := client.Read(buf)
			if err != nil {
				t.Fatalf("client read: %v", err)
			}
			got = append(got, buf[:n]...)
		}
		if err := <-errc; err != nil {
			t.Fatalf("write: %v", err)
		}
		if !bytes.Equal(got, data) {
			t.Fatal("the bytes read differ from the bytes written")
		}

		client.Write([]byte("request"))
		b := make([]byte, 64)
		n, err := c.Read(b)
		if err != nil || string(b[:n]) != "request" {
			t.Fatalf("read = %q, %v; want %q", b[:n], err, "request")
		}
	})

	t.Run("EOF when the peer closes", func(t *testing.T) {
		_, c, client := coarsePair(t)
		client.Write([]byte("x"))
		client.Close()
		b := make([]byte, 8)
		if n, err := c.Read(b); n != 1 || err != nil {
			t.Fatalf("read = %d, %v; want 1 byte", n, err)
		}
		if n, err := c.Read(b); n != 0 || err != io.EOF {
			t.Fatalf("read after close = %d, %v; want 0, io.EOF", n, err)
		}
	})

	t.Run("write to a peer gone", func(t *testing.T) {
		_, c, client := coarsePair(t)
		client.(*net.TCPConn).SetLinger(0) // close with a reset
		client.Close()
		var err error
		for i := 0; i < 100 && err == nil; i++ {
			_, err = c.Write([]byte("response"))
			time.Sleep(time.Millisecond)
		}
		var oe *net.OpError
		if !errors.As(err, &oe) || oe.Op != "write" {
			t.Fatalf("write error = %#v, want a *net.OpError of write", err)
		}
		if msg := err.Error(); !strings.Contains(msg, "reset by peer") && !strings.Contains(msg, "broken pipe") {
			t.Errorf("write error = %q, want a reset or broken pipe", msg)
		}
	})

	t.Run("deadline", func(t *testing.T) {
		_, c, _ := coarsePair(t)
		c.SetReadDeadline(time.Now().Add(-time.Second))
		_, err := c.Read(make([]byte, 8))
		var oe *net.OpError
		if !errors.As(err, &oe) || oe.Op != "read" || !oe.Timeout() || !errors.Is(err, os.ErrDeadlineExceeded) {
			t.Fatalf("read error = %#v, want a *net.OpError of read that timed out", err)
		}
		if !strings.Contains(err.Error(), "i/o timeout") {
			t.Errorf("read error = %q, want an i/o timeout", err)
		}
	})

	t.Run("closed", func(t *testing.T) {
		_, c, _ := coarsePair(t)
		c.Close()
		if _, err := c.Read(make([]byte, 8)); !errors.Is(err, net.ErrClosed) {
			t.Errorf("read after close = %v, want net.ErrClosed", err)
		}
		if _, err := c.Write([]byte("x")); !errors.Is(err, net.ErrClosed) {
			t.Errorf("write after close = %v, want net.ErrClosed", err)
		}
	})

	t.Run("no allocation", func(t *testing.T) {
		_, c, client := coarsePair(t)
		req, resp := []byte("GET / HTTP/1.1\r\n\r\n"), bytes.Repeat([]byte("x"), 1300)
		b := make([]byte, 4096)
		allocs := testing.AllocsPerRun(100, func() {
			client.Write(req)
			c.Read(b)
			c.Write(resp)
			io.ReadFull(client, b[:len(resp)])
		})
		if allocs != 0 {
			t.Errorf("%v allocations per read and write, want 0", allocs)
		}
	})
}
