package postgres_test

import (
	"bytes"
	"io"
	"net"
	"net/url"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobledger/jobledger/ledger"
)

// stallProxy forwards TCP connections from 127.0.0.1 to a PostgreSQL
// server, and stalls the first connection that receives more than after
// bytes from the server: it forwards nothing more to that client until
// release, as a slow network would. stalled is closed when it stalls.
//
// mu guards closed and conns; wg counts the goroutines, all ended by
// close (which releases a stall).
type stallProxy struct {
	ln       net.Listener
	upstream string
	after    int
	stalled  chan struct{}
	released chan struct{}
	stall    sync.Once
	unstall  sync.Once
	wg       sync.WaitGroup

	mu     sync.Mutex
	closed bool
	conns  []net.Conn
}

// startStallProxy starts a stallProxy to the server dsn names and returns
// it and the DSN that reaches the same database through it; the proxy is
// closed when t ends.
func startStallProxy(t *testing.T, dsn string, after int) (*stallProxy, string) {
	t.Helper()
	u, err := url.Parse(dsn)
	require.NoError(t, err)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	p := &stallProxy{ln: ln, upstream: u.Host, after: after,
		stalled: make(chan struct{}), released: make(chan struct{})}
	p.wg.Go(p.accept)
	t.Cleanup(p.close)
	u.Host = ln.Addr().String()
	return p, u.String()
}

func (p *stallProxy) accept() {
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
		p.mu.Lock()
		if p.closed {
			p.mu.Unlock()
			c.Close()
			s.Close()
			return
		}
		p.conns = append(p.conns, c, s)
		p.mu.Unlock()
		p.wg.Go(func() { _, _ = io.Copy(s, c); s.Close() })
		p.wg.Go(func() { p.toClient(c, s); c.Close() })
	}
}

// toClient forwards from the server to the client, stalling once past
// p.after bytes if no other connection stalled first.
func (p *stallProxy) toClient(c, s net.Conn) {
	buf := make([]byte, 32<<10)
	sent := 0
	for {
		n, err := s.Read(buf)
		if n > 0 {
			if sent += n; sent > p.after {
				p.stall.Do(func() {
					close(p.stalled)
					<-p.released
				})
			}
			if _, werr := c.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}

func (p *stallProxy) release() { p.unstall.Do(func() { close(p.released) }) }

// close releases a stall, stops accepting, closes every connection and
// waits for every goroutine.
func (p *stallProxy) close() {
	p.release()
	p.ln.Close()
	p.mu.Lock()
	p.closed = true
	for _, c := range p.conns {
		c.Close()
	}
	p.mu.Unlock()
	p.wg.Wait()
}

// TestLargeClaimKeepsItsLease: a job whose request is still in transfer to
// the replica that claimed it keeps its lease: the replica holds it, and
// its keeper renews it, before the request is handed over, so a transfer
// longer than the lease never lets another replica's reaper end it.
// Regression: the lease stamped at the claim, which commits only once its
// whole request is sent, and its renewal held back until then: the job
// arrives with its lease lapsed, for any reaper to end.
func TestLargeClaimKeepsItsLease(t *testing.T) {
	t.Parallel()
	dsn := newDatabase(t)
	clock := newFakeClock()
	const lease = time.Hour // the keepers never tick: the test renews and reaps
	req := bytes.Repeat([]byte("r"), 3<<20)
	proxy, slow := startStallProxy(t, dsn, 2<<20)
	a := openReplica(t, slow, "a", clock, lease)
	b := openReplica(t, dsn, "b", clock, lease)
	t.Cleanup(proxy.release) // before the stores close: a stalled read holds a's pool
	id, _, err := b.Submit(ctx, ledger.Submission{TaskID: "t"}, req)
	require.NoError(t, err)

	type claim struct {
		snap ledger.Snapshot
		req  []byte
		err  error
	}
	claimed := make(chan claim, 1)
	go func() {
		snap, req, err := a.Claim(ctx)
		claimed <- claim{snap, req, err}
	}()
	select {
	case <-proxy.stalled:
	case c := <-claimed:
		t.Fatalf("the claim returned before its request was in transfer: %+v", c.err)
	case <-time.After(30 * time.Second):
		t.Fatal("the request never went through the proxy")
	}
	clock.Advance(lease / 2)
	require.NoError(t, a.Renew(ctx), "a's keeper, while the request is in transfer")
	clock.Advance(3 * lease / 4) // past the claim's lease, within the renewal's
	reaped, err := b.Reap(ctx)
	require.NoError(t, err)
	require.Zero(t, reaped, "a job that a live replica is starting was reaped")

	proxy.release()
	var c claim
	select {
	case c = <-claimed:
	case <-time.After(30 * time.Second):
		t.Fatal("the claim never returned")
	}
	require.NoError(t, c.err)
	require.Equal(t, id, c.snap.ID)
	require.Equal(t, req, c.req)
	reaped, err = b.Reap(ctx)
	require.NoError(t, err)
	require.Zero(t, reaped, "the job's lease lapsed as its request arrived")
	_, err = a.Finish(ctx, id, []byte("res"))
	require.NoError(t, err, "the job is still a's to end")
}
