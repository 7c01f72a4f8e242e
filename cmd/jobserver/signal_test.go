package main

import (
	"bytes"
	"errors"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestSignalDuringNew pins a defect: the signals were caught only once the
// store was open, after the port was bound and the address file written,
// so that a SIGTERM while the store opened (a slow PostgreSQL connect, a
// SQLite integrity check) killed a process that supervisors read as
// started, with no shutdown. Here the store's connect hangs on a listener
// that accepts and never answers; the signal comes once it has connected,
// and the connection ends after it. The process must take the signal and
// go on to the end of its start: the store cannot be opened, so it exits
// 2 with that error and removes its address file.
func TestSignalDuringNew(t *testing.T) {
	t.Parallel()
	bin := build(t, "github.com/jobledger/jobledger/cmd/jobserver")
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer ln.Close()
	accepted := make(chan net.Conn, 1)
	acceptDone := make(chan struct{})
	go func() {
		defer close(acceptDone)
		for i := 0; i < 100; i++ { // bounded: the store may try again
			c, err := ln.Accept()
			if err != nil {
				return
			}
			select {
			case accepted <- c: // the first is held until the test ends it
			default:
				c.Close()
			}
		}
	}()
	defer func() { ln.Close(); <-acceptDone }()

	addrFile := filepath.Join(t.TempDir(), "addr")
	cmd := exec.Command(filepath.Join(bin, "jobserver"), "-listen", "127.0.0.1:0", "-addr-file", addrFile,
		"-store", "postgres://postgres@"+ln.Addr().String()+"/jobs?sslmode=disable&connect_timeout=30")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	require.NoError(t, cmd.Start())
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	defer func() {
		if cmd.ProcessState == nil {
			_ = cmd.Process.Kill()
			<-exited
		}
	}()

	conn := received(t, accepted, "the store connects")
	_, err = os.Stat(addrFile)
	require.NoError(t, err, "the address file is written before the store opens")
	require.NoError(t, cmd.Process.Signal(syscall.SIGTERM))
	// The signal is pending before the connection ends, so a process that
	// does not catch it dies of it before New can see the end.
	require.NoError(t, conn.Close())

	err = received(t, exited, "jobserver exited")
	var exit *exec.ExitError
	require.True(t, errors.As(err, &exit), "%v", err)
	require.Equal(t, 2, exit.ExitCode(), "killed by the signal? %v; stderr:\n%s", exit, stderr.String())
	require.Contains(t, stderr.String(), "cannot connect to the database")
	_, err = os.Stat(addrFile)
	require.ErrorIs(t, err, os.ErrNotExist, "no address left for a server that never served")
}

// received returns the next value from ch, failing the test if none comes
// within 30 seconds.
func received[T any](t *testing.T, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(30 * time.Second):
		t.Fatalf("never happened: %s", what)
		var zero T
		return zero
	}
}
