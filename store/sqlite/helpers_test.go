package sqlite_test

import (
	"context"
	"database/sql"
	"errors"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jobledger/jobledger/internal/fakeclock"
	"github.com/jobledger/jobledger/ledger"
	"github.com/jobledger/jobledger/ledger/ledgertype"
	"github.com/jobledger/jobledger/store/sqlite"
)

var errBoom = errors.New("boom")

// env is one database file and the clock and id source its stores share
// across reopenings.
type env struct {
	t     testing.TB
	path  string
	clock *fakeclock.Clock
	cfg   ledger.Config
	opts  sqlite.Options
}

// newEnv returns an environment for a database in a fresh temporary
// directory, on a fake clock with sequential ids j1, j2, ...
func newEnv(t testing.TB, cfg ledger.Config) *env {
	t.Helper()
	clock := fakeclock.New()
	cfg.Now = clock.Now
	if cfg.NewID == nil {
		cfg.NewID = fakeclock.Seq("j")
	}
	return &env{t: t, path: filepath.Join(t.TempDir(), "jobs.db"), clock: clock, cfg: cfg}
}

// open opens a store on e's file. Its invariants are checked, and it is
// closed, when the test ends; closing it earlier is fine.
func (e *env) open() *sqlite.Store {
	e.t.Helper()
	s, err := sqlite.Open(context.Background(), e.path, e.cfg, e.opts)
	require.NoError(e.t, err)
	e.t.Cleanup(func() {
		checkInvariants(e.t, s)
		require.NoError(e.t, s.Close())
	})
	return s
}

// reopen closes s, checking its invariants first, and opens the file again:
// a restart.
func (e *env) reopen(s *sqlite.Store) *sqlite.Store {
	e.t.Helper()
	checkInvariants(e.t, s)
	require.NoError(e.t, s.Close())
	return e.open()
}

// newStore opens a store on a fresh file.
func newStore(t testing.TB, cfg ledger.Config) (*sqlite.Store, *env) {
	t.Helper()
	e := newEnv(t, cfg)
	return e.open(), e
}

func checkInvariants(t testing.TB, s *sqlite.Store) {
	t.Helper()
	if err := s.CheckInvariants(); err != nil {
		t.Fatalf("invariants violated:\n%v", err)
	}
}

var ctx = context.Background()

func mustSubmit(t testing.TB, s *sqlite.Store, taskID string) string {
	t.Helper()
	id, _, err := s.Submit(ctx, ledger.Submission{TaskID: taskID}, []byte("payload of "+taskID))
	require.NoError(t, err)
	return id
}

// toState submits a job and drives it into state st.
func toState(t testing.TB, s *sqlite.Store, st ledger.State) string {
	t.Helper()
	id := mustSubmit(t, s, "task")
	switch st {
	case ledgertype.Pending:
	case ledgertype.Running:
		require.NoError(t, errOf(s.Start(ctx, id)))
	case ledgertype.Done:
		require.NoError(t, errOf(s.Start(ctx, id)))
		require.NoError(t, errOf(s.Finish(ctx, id, []byte("result"))))
	case ledgertype.Failed:
		require.NoError(t, errOf(s.Fail(ctx, id, errBoom)))
	case ledgertype.TimedOut:
		require.NoError(t, errOf(s.Timeout(ctx, id, errBoom)))
	default:
		t.Fatalf("no such state %v", st)
	}
	return id
}

// errOf is the error of a transition, for asserting on it alone.
func errOf(_ ledger.Snapshot, err error) error { return err }

func state(t testing.TB, s *sqlite.Store, id string) ledger.State {
	t.Helper()
	st, err := s.State(ctx, id)
	require.NoError(t, err)
	return st
}

// rawDB opens the database file of e behind the store's back, as another
// program could: a test uses it to change the file or to hold its write
// lock. SQLite's own locking still applies between it and the store.
func (e *env) rawDB() *sql.DB {
	e.t.Helper()
	db, err := sql.Open("sqlite", "file:"+e.path+"?_pragma=busy_timeout(10000)&_txlock=immediate")
	require.NoError(e.t, err)
	e.t.Cleanup(func() { db.Close() })
	return db
}

// exec runs statements on the file of e behind the store's back.
func (e *env) exec(stmts ...string) {
	e.t.Helper()
	db := e.rawDB()
	for _, q := range stmts {
		_, err := db.Exec(q)
		require.NoError(e.t, err, q)
	}
	require.NoError(e.t, db.Close())
}

// holdWriteLock takes the database's write lock from another connection,
// so that the store's writer waits in BEGIN, and returns the function that
// releases it.
func (e *env) holdWriteLock() (release func()) {
	e.t.Helper()
	tx, err := e.rawDB().Begin()
	require.NoError(e.t, err)
	return func() { require.NoError(e.t, tx.Rollback()) }
}

var _ ledger.Ledger[[]byte, []byte] = (*sqlite.Store)(nil)

// held reports whether s still holds job id.
func held(s *sqlite.Store, id string) bool {
	_, err := s.Snapshot(ctx, id)
	return err == nil
}
