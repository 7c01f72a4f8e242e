package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"path/filepath"
	"runtime"
	"strings"

	msqlite "modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/jobledger/jobledger/ledger"
)

// Open opens the store in the SQLite file at path, creating it if it does
// not exist, and starts its writer. In order, it
//
//  1. validates cfg (as jobtable.New does) and opts: ErrInvalidConfig;
//  2. creates the file if it does not exist and locks it (lock.go): the
//     file REAL, the path with its symbolic links resolved, and the
//     sidecar REAL.lock; ErrLocked if another store holds either or the
//     file has more than one hard link, ErrUnwritable if either cannot be
//     created;
//  3. refuses an empty file beside a log that holds frames
//     (ErrMissingCommits: SQLite would discard the log), opens the write
//     connection (WAL, synchronous=FULL) and checks the file with PRAGMA
//     quick_check: ErrCorrupt for a file that is not a database or fails
//     the check, ErrUnwritable for one it cannot write;
//  4. in one transaction, migrates the schema (ErrNewerSchema,
//     ErrForeign), checks the stored commit count against the lock file's
//     mark (ErrMissingCommits, mark.go) and the stored depth against the
//     jobs (ErrDepthMismatch) and applies the restart: every RUNNING job
//     ends FAILED with InterruptedByRestart, PENDING jobs stay (Recovered
//     lists them), and one retention pass runs, as a Submit's would;
//  5. opens the reader connections and starts the writer.
//
// On any error it closes what it opened and releases the lock; the file
// keeps whatever step 4 had not committed. It does the same when the
// injected clock (Config.Now, read in step 4) panics, and lets the panic
// go on to its caller, as jobtable does.
func Open(ctx context.Context, path string, cfg ledger.Config, opts Options) (*Store, error) {
	cfg, err := configWithDefaults(cfg)
	if err != nil {
		return nil, err
	}
	if opts, err = opts.withDefaults(); err != nil {
		return nil, err
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrUnwritable, path, err)
	}
	lock, err := lockFile(abs)
	if err != nil {
		return nil, err
	}
	s := &Store{
		cfg:        cfg,
		opts:       opts,
		path:       abs,
		lock:       lock,
		q:          newQueue(),
		taken:      make(map[string]struct{}),
		waiters:    make(map[string]*waiter),
		quit:       make(chan struct{}),
		writerDone: make(chan struct{}),
		released:   make(chan struct{}),
	}
	opened := false
	defer func() {
		if !opened { // an error, or a panic on its way to the caller
			s.release()
		}
	}()
	v, err := s.open(ctx)
	if err != nil {
		return nil, fmt.Errorf("%w (database %s)", err, abs)
	}
	opened = true
	s.pub.store(v)
	go s.runWriter(v)
	return s, nil
}

// open does steps 3 to 5 of Open and returns the writer's first view.
func (s *Store) open(ctx context.Context) (view, error) {
	var err error
	if s.wdb, err = openWriter(ctx, s.path, s.lock.real); err != nil {
		return view{}, err
	}
	v, err := s.recoverDatabase(ctx)
	if err != nil {
		return view{}, classify(err)
	}
	if s.writes, err = prepareWrites(ctx, s.wdb); err != nil {
		return view{}, err
	}
	s.rdb, err = sql.Open("sqlite", dsn(s.path, "_pragma=busy_timeout(10000)", "_pragma=query_only(1)"))
	if err != nil {
		return view{}, err
	}
	n := max(4, runtime.GOMAXPROCS(0))
	s.rdb.SetMaxOpenConns(n)
	s.rdb.SetMaxIdleConns(n)
	if s.reads, err = prepareReads(ctx, s.rdb); err != nil {
		return view{}, err
	}
	return v, nil
}

// openWriter checks that the file real, which path names, is not empty
// beside a log that holds frames, opens the write connection to it, and
// checks the file (checkFile). On an error, the connection is closed.
func openWriter(ctx context.Context, path, real string) (*sql.DB, error) {
	if err := checkLog(real); err != nil {
		return nil, err
	}
	db, err := sql.Open("sqlite", dsn(path,
		"_pragma=busy_timeout(10000)",
		// Foreign keys are enforced (SQLite leaves them off by default),
		// deferred ones at COMMIT, so that no schema's constraint is
		// silently ignored.
		"_pragma=foreign_keys(1)",
		"_pragma=journal_mode(WAL)",
		"_pragma=synchronous(FULL)",
		"_txlock=immediate"))
	if err != nil {
		return nil, err
	}
	// One connection, kept for the store's life: the writer's.
	db.SetMaxOpenConns(1)
	db.SetMaxIdleConns(1)
	db.SetConnMaxLifetime(0)
	db.SetConnMaxIdleTime(0)
	if err := checkFile(ctx, db); err != nil {
		db.Close()
		return nil, err
	}
	return db, nil
}

// dsn is the driver's name for the file at path with params: an SQLite URI
// filename, so that any character of the path is escaped.
func dsn(path string, params ...string) string {
	u := url.URL{Scheme: "file", Path: path, RawQuery: strings.Join(params, "&")}
	return u.String()
}

// checkFile opens the write connection, which applies its pragmas, checks
// that they took, and runs PRAGMA quick_check.
func checkFile(ctx context.Context, db *sql.DB) error {
	var mode string
	if err := db.QueryRowContext(ctx, "PRAGMA journal_mode").Scan(&mode); err != nil {
		return classify(err)
	}
	if mode != "wal" {
		return fmt.Errorf("%w: journal mode is %q, not wal", ErrUnwritable, mode)
	}
	rows, err := db.QueryContext(ctx, "PRAGMA quick_check")
	if err != nil {
		return classify(err)
	}
	defer rows.Close()
	var problems []string
	for rows.Next() {
		var line string
		if err := rows.Scan(&line); err != nil {
			return classify(err)
		}
		if line != "ok" {
			problems = append(problems, line)
		}
	}
	if err := rows.Err(); err != nil {
		return classify(err)
	}
	if len(problems) > 0 {
		return fmt.Errorf("%w: quick_check: %s", ErrCorrupt, strings.Join(problems, "; "))
	}
	return nil
}

// classify wraps an error of the driver at Open in the sentinel that says
// what it means for the caller; other errors pass unchanged.
func classify(err error) error {
	var e *msqlite.Error
	if !errors.As(err, &e) {
		return err
	}
	switch e.Code() & 0xff {
	case sqlite3.SQLITE_NOTADB, sqlite3.SQLITE_CORRUPT:
		return fmt.Errorf("%w: %w", ErrCorrupt, err)
	case sqlite3.SQLITE_CANTOPEN, sqlite3.SQLITE_READONLY, sqlite3.SQLITE_PERM, sqlite3.SQLITE_AUTH:
		return fmt.Errorf("%w: %w", ErrUnwritable, err)
	}
	return err
}
