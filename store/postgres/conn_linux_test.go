package postgres_test

import (
	"net"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/jobledger/jobledger/ledger"
	"github.com/jobledger/jobledger/store/postgres"
)

// TestConnectionBounds: a Store's connections carry the bounds its lease
// gives, in the server's runtime parameters (as SHOW prints them) and on
// the client's socket.
func TestConnectionBounds(t *testing.T) {
	t.Parallel()
	dsn := newDatabase(t)
	for _, tc := range []struct {
		lease  time.Duration
		server map[string]string
		client map[int]int // TCP socket option -> value
	}{
		{
			lease: 1500 * time.Millisecond,
			server: map[string]string{
				"idle_in_transaction_session_timeout": "500ms", "lock_timeout": "1s", "tcp_user_timeout": "500",
				"tcp_keepalives_idle": "1", "tcp_keepalives_interval": "1", "tcp_keepalives_count": "3",
				"default_transaction_isolation": "read committed",
			},
			client: map[int]int{unix.TCP_USER_TIMEOUT: 500, unix.TCP_KEEPIDLE: 1, unix.TCP_KEEPINTVL: 1, unix.TCP_KEEPCNT: 3},
		},
		{
			lease: postgres.DefaultLease,
			server: map[string]string{
				"idle_in_transaction_session_timeout": "5s", "lock_timeout": "10s", "tcp_user_timeout": "5000",
				"tcp_keepalives_idle": "5", "tcp_keepalives_interval": "2", "tcp_keepalives_count": "3",
			},
			client: map[int]int{unix.TCP_USER_TIMEOUT: 5000, unix.TCP_KEEPIDLE: 5, unix.TCP_KEEPINTVL: 2, unix.TCP_KEEPCNT: 3},
		},
	} {
		t.Run(tc.lease.String(), func(t *testing.T) {
			s, err := postgres.Open(ctx, dsn, ledger.Config{MaxQueue: 8}, postgres.Options{Replica: "r" + tc.lease.String(), Lease: tc.lease})
			require.NoError(t, err)
			defer s.Close()
			require.NoError(t, s.WithConn(ctx, func(c *pgx.Conn) error {
				for name, want := range tc.server {
					var got string
					require.NoError(t, c.QueryRow(ctx, "SHOW "+name).Scan(&got))
					require.Equal(t, want, got, name)
				}
				tcp, ok := c.PgConn().Conn().(*net.TCPConn)
				require.True(t, ok, "a TCP connection")
				raw, err := tcp.SyscallConn()
				require.NoError(t, err)
				return raw.Control(func(fd uintptr) {
					on, err := unix.GetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_KEEPALIVE)
					require.NoError(t, err)
					require.Equal(t, 1, on, "SO_KEEPALIVE")
					for opt, want := range tc.client {
						got, err := unix.GetsockoptInt(int(fd), unix.IPPROTO_TCP, opt)
						require.NoError(t, err)
						require.Equal(t, want, got, "TCP option %d", opt)
					}
				})
			}))
		})
	}
}
