package httpstress

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// server is one life of a jobserver process that the crash test starts,
// kills and starts again on the same store.
type server struct {
	cmd     *exec.Cmd
	addr    string
	log     string        // the path of this life's stderr and stdout
	exited  chan struct{} // closed once cmd.Wait returned
	waitErr error         // cmd.Wait's error, set before exited closes
}

// startServer starts bin with args and the flags that make it listen on a
// free loopback port and write that port to a file, and returns once it
// listens. A server that exits or does not listen within timeout is an
// error that quotes its log.
func startServer(bin string, args []string, dir string, life int, timeout time.Duration) (*server, error) {
	addrFile := filepath.Join(dir, "addr")
	if err := os.Remove(addrFile); err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, err
	}
	s := &server{log: filepath.Join(dir, "server-"+strconv.Itoa(life)+".log"), exited: make(chan struct{})}
	logf, err := os.Create(s.log)
	if err != nil {
		return nil, err
	}
	defer logf.Close() // the child holds its own descriptor
	all := append([]string{"-listen", "127.0.0.1:0", "-addr-file", addrFile}, args...)
	s.cmd = exec.Command(bin, all...)
	s.cmd.Stdout, s.cmd.Stderr = logf, logf
	if err := s.cmd.Start(); err != nil {
		return nil, err
	}
	go func() {
		s.waitErr = s.cmd.Wait()
		close(s.exited)
	}()
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	poll := time.NewTicker(5 * time.Millisecond)
	defer poll.Stop()
	for {
		select {
		case <-s.exited:
			return nil, fmt.Errorf("jobserver exited at start (%v): %s", s.waitErr, s.logTail())
		case <-deadline.C:
			s.kill()
			return nil, fmt.Errorf("jobserver did not listen within %v: %s", timeout, s.logTail())
		case <-poll.C:
			b, err := os.ReadFile(addrFile)
			if err == nil && bytes.HasSuffix(b, []byte("\n")) {
				s.addr = strings.TrimSpace(string(b))
				return s, nil
			}
		}
	}
}

// kill sends SIGKILL, which the process cannot catch, and waits for it to
// be gone.
func (s *server) kill() {
	s.signalKill()
	<-s.exited
}

// signalKill sends SIGKILL and returns at once.
func (s *server) signalKill() {
	s.cmd.Process.Kill() // it may have exited already
}

// stop sends SIGTERM and waits up to timeout for a clean exit; past it, it
// kills the process and says so.
func (s *server) stop(ctx context.Context, timeout time.Duration) error {
	if err := s.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		return err
	}
	t := time.NewTimer(timeout)
	defer t.Stop()
	select {
	case <-s.exited:
		if s.waitErr != nil {
			return fmt.Errorf("jobserver exited with %v after SIGTERM: %s", s.waitErr, s.logTail())
		}
		return nil
	case <-t.C:
	case <-ctx.Done():
	}
	s.kill()
	return fmt.Errorf("jobserver still running %v after SIGTERM; killed", timeout)
}

// logTail is the end of the server's log, for an error message.
func (s *server) logTail() string {
	b, err := os.ReadFile(s.log)
	if err != nil {
		return err.Error()
	}
	const keep = 2000
	if len(b) > keep {
		b = b[len(b)-keep:]
	}
	return strings.TrimSpace(string(b))
}
