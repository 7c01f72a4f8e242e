package main

import (
	"context"
	"fmt"
	"net"
	"net/url"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
)

// settle is how long the counters are left to settle before each reading:
// a PostgreSQL 15 backend reports its statistics at most once a second,
// and within a second of going idle.
const settle = 1500 * time.Millisecond

// admin is a small pool on the server's maintenance database, from which
// the runs' databases are created and dropped and the counters read.
type admin struct {
	dsn  string
	pool *pgxpool.Pool
}

// counters are the server's cumulative counts that a run is charged for.
type counters struct {
	walSyncs int64 // pg_stat_wal.wal_sync, the whole server
	walBytes int64 // pg_stat_wal.wal_bytes, the whole server
	walFPIs  int64 // pg_stat_wal.wal_fpi: full-page images, the whole server
	commits  int64 // pg_stat_database.xact_commit of the run's database
	// xids is the next transaction id to be assigned, the whole server:
	// its growth counts the transactions that wrote (each gets an id), not
	// the read-only ones that commits also counts.
	xids int64
}

// openAdmin connects to the database named by dsn.
func openAdmin(ctx context.Context, dsn string) (*admin, error) {
	cfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		return nil, err
	}
	cfg.MaxConns = 2
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, err
	}
	if err := pool.Ping(ctx); err != nil {
		pool.Close()
		return nil, err
	}
	return &admin{dsn: dsn, pool: pool}, nil
}

// create drops the database name if it exists, creates it empty, and
// returns its DSN.
func (a *admin) create(ctx context.Context, name string) (string, error) {
	if err := a.drop(ctx, name); err != nil {
		return "", err
	}
	if _, err := a.pool.Exec(ctx, "CREATE DATABASE "+pgx.Identifier{name}.Sanitize()); err != nil {
		return "", fmt.Errorf("creating database %s: %w", name, err)
	}
	return dsnFor(a.dsn, name)
}

// drop drops the database name, if it exists, ending its sessions.
func (a *admin) drop(ctx context.Context, name string) error {
	if _, err := a.pool.Exec(ctx, "DROP DATABASE IF EXISTS "+pgx.Identifier{name}.Sanitize()+" WITH (FORCE)"); err != nil {
		return fmt.Errorf("dropping database %s: %w", name, err)
	}
	return nil
}

// read returns the counters now, those of database db.
func (a *admin) read(ctx context.Context, db string) (counters, error) {
	var c counters
	err := a.pool.QueryRow(ctx, `SELECT w.wal_sync, w.wal_bytes::bigint, w.wal_fpi,
		coalesce((SELECT xact_commit FROM pg_stat_database WHERE datname = $1), 0),
		pg_snapshot_xmax(pg_current_snapshot())::text::bigint FROM pg_stat_wal w`, db).
		Scan(&c.walSyncs, &c.walBytes, &c.walFPIs, &c.commits, &c.xids)
	return c, err
}

// server describes the server and its durability settings in one line.
func (a *admin) server(ctx context.Context) (string, error) {
	var version, fsync, syncCommit, fpw, method string
	err := a.pool.QueryRow(ctx, `SELECT current_setting('server_version'), current_setting('fsync'),
		current_setting('synchronous_commit'), current_setting('full_page_writes'),
		current_setting('wal_sync_method')`).Scan(&version, &fsync, &syncCommit, &fpw, &method)
	if err != nil {
		return "", err
	}
	line := fmt.Sprintf("PostgreSQL %s: fsync=%s synchronous_commit=%s full_page_writes=%s wal_sync_method=%s",
		version, fsync, syncCommit, fpw, method)
	if fsync != "on" || syncCommit != "on" {
		line += " (NOT DURABLE: the figures include no flush)"
	}
	return line, nil
}

func (a *admin) close() { a.pool.Close() }

// dsnFor is dsn with its database replaced by db.
func dsnFor(dsn, db string) (string, error) {
	if strings.HasPrefix(dsn, "postgres://") || strings.HasPrefix(dsn, "postgresql://") {
		u, err := url.Parse(dsn)
		if err != nil {
			return "", err
		}
		u.Path = "/" + db
		u.RawPath = ""
		return u.String(), nil
	}
	return dsn + " dbname=" + db, nil // key=value: the last one counts
}

// loopbackOnly refuses a DSN whose hosts are not on this machine: a
// loopback address, localhost, or a Unix socket.
func loopbackOnly(dsn string) error {
	cfg, err := pgconn.ParseConfig(dsn)
	if err != nil {
		return err
	}
	hosts := []string{cfg.Host}
	for _, f := range cfg.Fallbacks {
		hosts = append(hosts, f.Host)
	}
	for _, h := range hosts {
		if strings.HasPrefix(h, "/") || h == "localhost" {
			continue
		}
		if ip := net.ParseIP(h); ip != nil && ip.IsLoopback() {
			continue
		}
		return fmt.Errorf("host %q is not a loopback address", h)
	}
	return nil
}
