package postgres

import (
	"net"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
)

// connBounds are the time bounds of every connection of a Store, the
// pool's and the listener's, from Options.Lease (docs/scaling.md says
// what each bounds). PostgreSQL reads zero as "no bound",
// so none is ever zero.
type connBounds struct {
	idleInTx    time.Duration // idle_in_transaction_session_timeout
	lockWait    time.Duration // lock_timeout
	userTimeout time.Duration // tcp_user_timeout, both ends
	keepIdle    time.Duration // tcp_keepalives_idle, both ends
	keepEvery   time.Duration // tcp_keepalives_interval, both ends
	keepCount   int           // tcp_keepalives_count, both ends
}

// boundsOf returns the bounds of a Store whose lease is lease.
func boundsOf(lease time.Duration) connBounds {
	return connBounds{
		idleInTx:    lease / 3,
		lockWait:    2 * lease / 3,
		userTimeout: lease / 3,
		keepIdle:    wholeSeconds(lease / 3),
		keepEvery:   wholeSeconds(lease / 9),
		keepCount:   3,
	}
}

// wholeSeconds is d rounded up to a whole number of seconds, at least one:
// TCP keepalives count in seconds, and zero would mean the system default.
func wholeSeconds(d time.Duration) time.Duration {
	return max(time.Second, (d + time.Second - 1).Truncate(time.Second))
}

// boundConnections sets the bounds of a Store whose lease is lease on cc,
// the configuration every connection of the Store is made from.
func boundConnections(cc *pgconn.Config, lease time.Duration) {
	b := boundsOf(lease)
	for name, v := range b.params() {
		cc.RuntimeParams[name] = v
	}
	d := &net.Dialer{
		Timeout: cc.ConnectTimeout, // as pgconn's own dialer
		KeepAliveConfig: net.KeepAliveConfig{
			Enable: true, Idle: b.keepIdle, Interval: b.keepEvery, Count: b.keepCount,
		},
		Control: func(network, _ string, c syscall.RawConn) error {
			if !strings.HasPrefix(network, "tcp") {
				return nil // a Unix socket: no TCP to bound
			}
			return setUserTimeout(c, b.userTimeout)
		},
	}
	cc.DialFunc = d.DialContext
}

// params are the server's side of b, as runtime parameters.
func (b connBounds) params() map[string]string {
	ms := func(d time.Duration) string { return strconv.FormatInt(max(d.Milliseconds(), 1), 10) + "ms" }
	s := func(d time.Duration) string { return strconv.FormatInt(int64(wholeSeconds(d)/time.Second), 10) + "s" }
	return map[string]string{
		"idle_in_transaction_session_timeout": ms(b.idleInTx),
		"lock_timeout":                        ms(b.lockWait),
		"tcp_user_timeout":                    ms(b.userTimeout),
		"tcp_keepalives_idle":                 s(b.keepIdle),
		"tcp_keepalives_interval":             s(b.keepEvery),
		"tcp_keepalives_count":                strconv.Itoa(b.keepCount),
	}
}
