package postgres_test

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobledger/jobledger/ledger"
	"github.com/jobledger/jobledger/ledger/ledgertype"
	"github.com/jobledger/jobledger/store/postgres"
)

// peerEnv, set to a DSN, makes the test binary the peer process of
// TestStoppedPeerHoldsNoLock (see TestMain).
const peerEnv = "JOBLEDGER_TEST_PEER_DSN"

// peerLease is the lease of both Stores of TestStoppedPeerHoldsNoLock.
const peerLease = 1500 * time.Millisecond

// runPeer is the peer process: it opens a Store on dsn, locks the ledger
// row in a transaction on a connection of the Store's pool, writes
// "locked" to stdout, and then does nothing until its stdin closes (or it
// is killed). It returns the process's exit status.
func runPeer(dsn string) int {
	ctx := context.Background()
	s, err := postgres.Open(ctx, dsn, ledger.Config{MaxQueue: 8}, postgres.Options{Replica: "peer", Lease: peerLease})
	if err != nil {
		fmt.Fprintln(os.Stderr, "peer: open:", err)
		return 1
	}
	if err := s.LockLedgerRow(ctx); err != nil {
		fmt.Fprintln(os.Stderr, "peer: locking the ledger row:", err)
		return 1
	}
	fmt.Println("locked")
	_, _ = io.Copy(io.Discard, os.Stdin)
	return 0
}

// startPeer starts the peer process on dsn and returns it once it holds
// the ledger row. It is resumed, killed and reaped when t ends.
func startPeer(t *testing.T, dsn string) *os.Process {
	t.Helper()
	exe, err := os.Executable()
	require.NoError(t, err)
	cmd := exec.Command(exe)
	cmd.Env = append(os.Environ(), peerEnv+"="+dsn)
	stdin, err := cmd.StdinPipe()
	require.NoError(t, err)
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	var stderr bytes.Buffer // written by cmd's copier until Wait returns
	cmd.Stderr = &stderr
	require.NoError(t, cmd.Start())

	first := make(chan string, 1)
	read := make(chan struct{}) // closed when stdout reaches EOF
	go func() {
		defer close(read)
		sc := bufio.NewScanner(stdout)
		if sc.Scan() {
			first <- sc.Text()
		}
		_, _ = io.Copy(io.Discard, stdout)
	}()
	var once sync.Once
	stop := func() {
		once.Do(func() {
			_ = cmd.Process.Signal(syscall.SIGCONT)
			_ = cmd.Process.Kill()
			_ = stdin.Close()
			<-read // all reads of stdout done before Wait closes it
			_ = cmd.Wait()
		})
	}
	t.Cleanup(stop)

	timer := time.NewTimer(60 * time.Second) // an Open on a loaded machine
	defer timer.Stop()
	select {
	case line := <-first:
		require.Equal(t, "locked", line)
		return cmd.Process
	case <-read:
		stop()
		t.Fatalf("the peer exited before it locked the ledger row: %s", strings.TrimSpace(stderr.String()))
	case <-timer.C:
		stop()
		t.Fatalf("the peer did not lock the ledger row in time: %s", strings.TrimSpace(stderr.String()))
	}
	return nil
}

// TestStoppedPeerHoldsNoLock: a replica stopped (SIGSTOP) inside a
// transaction that holds the ledger row, which every admission and end
// locks, holds up the other replicas for a bounded time only: the server
// ends the stopped replica's idle transaction, and another replica's
// Submit and Finish, blocked on the row, then go through, while the peer
// stays stopped. Regression: no connection bounded an idle transaction or
// a lock wait, so every replica's writes hung for as long as the peer
// stayed stopped (here, until the calls' contexts ended).
func TestStoppedPeerHoldsNoLock(t *testing.T) {
	t.Parallel()
	dsn := newDatabase(t)
	s := openReplica(t, dsn, "a", nil, peerLease)
	peer := startPeer(t, dsn)
	require.NoError(t, peer.Signal(syscall.SIGSTOP))

	// The bound is Lease/3, the peer's idle bound; 3·Lease leaves slack for
	// a loaded machine without a timed assertion.
	cctx, cancel := context.WithTimeout(ctx, 3*peerLease)
	defer cancel()
	id, _, err := s.Submit(cctx, ledger.Submission{TaskID: "task"}, []byte("req"))
	require.NoError(t, err, "a Submit behind the stopped peer")
	snap, err := s.Finish(cctx, id, []byte("res"))
	require.NoError(t, err, "a Finish behind the stopped peer")
	require.Equal(t, ledgertype.Done, snap.State)
	st := s.Stats()
	require.Equal(t, 0, st.Depth)
	require.Equal(t, 1, st.Jobs, "Stats read the database")
	page, err := s.List(cctx, ledger.ListQuery{})
	require.NoError(t, err)
	require.Len(t, page.Jobs, 1)
	require.Equal(t, "T", processState(t, peer.Pid), "the peer is still stopped")
}

// processState is the state letter of process pid in /proc (T: stopped).
func processState(t *testing.T, pid int) string {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	require.NoError(t, err)
	// pid (comm) state ...: comm may hold spaces, so look after its ')'.
	fields := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:]))
	require.NotEmpty(t, fields)
	return fields[0]
}
