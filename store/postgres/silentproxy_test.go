package postgres_test

import (
	"bytes"
	"errors"
	"io"
	"net"
	"net/url"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

// silentProxy forwards TCP connections from 127.0.0.1 to a PostgreSQL
// server, and can make the listener connections among them go silent: it
// then reads and drops what either side sends, as a half-open connection
// to a crashed host would, without closing either side. It can also
// refuse listeners: close those open, and each new one as soon as its
// client LISTENs. A listener connection is one whose client sent "LISTEN
// jobledger_end".
//
// mu guards closed, refuse, closes, conns and each pipe's listener and silent
// fields; wg counts the goroutines, all ended by close.
type silentProxy struct {
	ln       net.Listener
	upstream string
	wg       sync.WaitGroup

	mu     sync.Mutex
	closed bool
	refuse bool // listeners are closed
	closes int  // listeners closed as they LISTENed
	conns  []*pipe
}

// pipe is one proxied connection.
type pipe struct {
	client, server net.Conn
	listener       bool // its client LISTENs, and has not closed its side
	silent         bool // nothing is forwarded any more
}

// startProxy starts a proxy to the server dsn names and returns the DSN
// that reaches the same database through it; the proxy is closed when t
// ends.
func startProxy(t *testing.T, dsn string) (*silentProxy, string) {
	t.Helper()
	u, err := url.Parse(dsn)
	require.NoError(t, err)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	p := &silentProxy{ln: ln, upstream: u.Host}
	p.wg.Go(p.accept)
	t.Cleanup(p.close)
	u.Host = ln.Addr().String()
	return p, u.String()
}

// accept serves connections until the listener is closed.
func (p *silentProxy) accept() {
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		s, err := net.Dial("tcp", p.upstream)
		if err != nil {
			c.Close()
			continue
		}
		pp := &pipe{client: c, server: s}
		p.mu.Lock()
		if p.closed {
			p.mu.Unlock()
			c.Close()
			s.Close()
			return
		}
		p.conns = append(p.conns, pp)
		p.mu.Unlock()
		p.wg.Go(func() { p.copy(pp, s, c, true) })
		p.wg.Go(func() { p.copy(pp, c, s, false) })
	}
}

// copy forwards from src to dst until either fails, dropping what it
// reads once pp is silent; fromClient marks the client's direction, where
// a LISTEN is looked for.
func (p *silentProxy) copy(pp *pipe, dst io.Writer, src io.Reader, fromClient bool) {
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			p.mu.Lock()
			if fromClient && bytes.Contains(buf[:n], []byte("LISTEN jobledger_end")) {
				pp.listener = true
				if p.refuse {
					p.closes++
					pp.client.Close()
					pp.server.Close()
					p.mu.Unlock()
					return
				}
			}
			silent := pp.silent
			p.mu.Unlock()
			if !silent {
				if _, werr := dst.Write(buf[:n]); werr != nil {
					return
				}
			}
		}
		if err != nil {
			if fromClient { // the client has gone: no listener to silence here
				p.mu.Lock()
				pp.listener = false
				p.mu.Unlock()
			}
			if !errors.Is(err, io.EOF) || !fromClient {
				return
			}
			// The client closed its side: pass the close on.
			if cw, ok := dst.(interface{ CloseWrite() error }); ok {
				_ = cw.CloseWrite()
			}
			return
		}
	}
}

// silenceListeners makes every listener connection open now go silent,
// and returns how many it silenced.
func (p *silentProxy) silenceListeners() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	n := 0
	for _, pp := range p.conns {
		if pp.listener && !pp.silent {
			pp.silent = true
			n++
		}
	}
	return n
}

// refuseListeners, when on, closes every listener connection open now,
// and returns how many, and closes each new one when it LISTENs, until
// it is called again with on false.
func (p *silentProxy) refuseListeners(on bool) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.refuse = on
	n := 0
	for _, pp := range p.conns {
		if on && pp.listener {
			pp.listener = false
			pp.client.Close()
			pp.server.Close()
			n++
		}
	}
	return n
}

// refused is how many listeners were closed as they LISTENed.
func (p *silentProxy) refused() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.closes
}

// close stops accepting, closes every connection and waits for every
// goroutine.
func (p *silentProxy) close() {
	p.ln.Close()
	p.mu.Lock()
	p.closed = true
	for _, pp := range p.conns {
		pp.client.Close()
		pp.server.Close()
	}
	p.mu.Unlock()
	p.wg.Wait()
}
