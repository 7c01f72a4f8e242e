//go:build !linux

package postgres

import (
	"syscall"
	"time"
)

// setUserTimeout does nothing where TCP_USER_TIMEOUT does not exist: the
// keepalives alone bound a connection to a vanished peer there.
func setUserTimeout(syscall.RawConn, time.Duration) error { return nil }
