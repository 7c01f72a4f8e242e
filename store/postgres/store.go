package postgres

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/jobledger/jobledger/ledger"
)

// Store is the job ledger on a PostgreSQL database, with requests and
// results as bytes (ledger.WithCodecs turns it into a store of any types).
// Several Stores, in one process or many, may share one database: each is
// a replica of the same ledger. All methods are safe for concurrent use.
//
// Synchronisation, field by field:
//
//   - cfg, opts, dsn, pool, recovered, maxDepth: set by Open, read-only
//     afterwards (pgxpool is safe for concurrent use).
//   - evictedTTL, evictedLRU: atomics, added to by Submit.
//   - health: atomic; stored by Open's connect of the listener, then by
//     the listener goroutine alone (listen.go).
//   - waitMu guards waiters (see wait.go).
//   - onEndMu guards onEnd (work.go); work is a channel with room for
//     one signal, sent to without blocking (work.go).
//   - heldMu guards held, holds and failedEnd (held.go).
//   - q: its own lock (queue.go); the writer goroutine takes from it.
//   - closed: atomic, set once by Close before it closes quit; quit is
//     closed once, by Close; stopListen and listenDone are the listener
//     goroutine's (listen.go), stopKeep and keepDone the keeper's
//     (lease.go), stopWriter and writerDone the writer's (writer.go):
//     set by Open, read-only afterwards.
//
// Lock order: waitMu, onEndMu and heldMu are each held only inside their
// own methods, never together and never across a database call or a call
// of an OnEnd function.
type Store struct {
	cfg       ledger.Config
	opts      Options
	pool      *pgxpool.Pool
	recovered []ledger.Snapshot // PENDING and not taken at Open, oldest first
	maxDepth  int               // max(MaxQueue, 0, depth found at Open)

	evictedTTL, evictedLRU atomic.Uint64
	health                 atomic.Pointer[listenerHealth]

	waitMu  sync.Mutex
	waiters map[string]map[*waiter]struct{}

	onEndMu sync.Mutex
	onEnd   []func(ledger.Snapshot)
	work    chan struct{}

	heldMu sync.Mutex
	held   map[string]uint64 // job id -> the number of its latest hold
	holds  uint64            // holds so far
	// failedEnd: job id -> the hold during which an end on it failed with
	// its outcome unknown; only for jobs held.
	failedEnd map[string]uint64

	q          *queue // the writes for the writer goroutine (writer.go)
	stopWriter context.CancelFunc
	writerDone chan struct{}

	closed     atomic.Bool
	quit       chan struct{}
	stopListen context.CancelFunc
	listenDone chan struct{}
	stopKeep   context.CancelFunc
	keepDone   chan struct{}

	// beforeReconnect, if set (by tests, before Open returns), is called
	// by the listener goroutine each time before it reconnects.
	beforeReconnect func()
}

var (
	_ ledger.Ledger[[]byte, []byte] = (*Store)(nil)
	_ ledger.Checker                = (*Store)(nil)
	_ ledger.Recoverer              = (*Store)(nil)
	_ ledger.TenantCounter          = (*Store)(nil)
)

// Open connects to the database named by dsn (a postgres:// or
// postgresql:// URL, or a libpq key=value string), migrates its schema
// under an advisory lock, applies the restart (the package doc) and
// starts listening for the ends of jobs, before it returns: a Store
// returned serves at once and misses no wakeup.
func Open(ctx context.Context, dsn string, cfg ledger.Config, opts Options) (*Store, error) {
	return open(ctx, dsn, cfg, opts, nil)
}

// open is Open, with the listener's test hook.
func open(ctx context.Context, dsn string, cfg ledger.Config, opts Options, beforeReconnect func()) (*Store, error) {
	cfg, err := cfg.WithDefaults() // a nil Now stays nil: the database's clock
	if err != nil {
		return nil, err
	}
	if opts, err = opts.withDefaults(); err != nil {
		return nil, err
	}
	pcfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrUnreachable, err)
	}
	if opts.MaxConns > 0 {
		pcfg.MaxConns = opts.MaxConns
	}
	// Every session runs READ COMMITTED, whatever the database's or the
	// role's default: the re-checks of a write blocked behind another
	// (admission, the ends, Claim's SKIP LOCKED, the reaper) and Open's
	// count after its lock read the latest commit only at that level; at
	// REPEATABLE READ or SERIALIZABLE they fail with serialization errors
	// instead. The listener's connection copies this config.
	pcfg.ConnConfig.RuntimeParams["default_transaction_isolation"] = "read committed"
	// The statements are prepared once and their generic plans, written to
	// be good for any argument, kept: planning a batch's statements anew
	// each time cost more than running them.
	pcfg.ConnConfig.RuntimeParams["plan_cache_mode"] = "force_generic_plan"
	// A generic plan is made once, from the statistics of the day: made on
	// a small jobs table it scanned the whole table, for ever after. Every
	// statement of the store has an index to go by, so none may scan.
	pcfg.ConnConfig.RuntimeParams["enable_seqscan"] = "off"
	// The statements are small: compiling one costs more than it saves,
	// and a scan's cost, inflated above, would always ask for it.
	pcfg.ConnConfig.RuntimeParams["jit"] = "off"
	boundConnections(&pcfg.ConnConfig.Config, opts.Lease) // no peer holds the others up (conn.go)
	pool, err := pgxpool.NewWithConfig(ctx, pcfg)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrUnreachable, err)
	}
	if err := pool.Ping(ctx); err != nil {
		pool.Close()
		return nil, fmt.Errorf("%w: %w", ErrUnreachable, err)
	}
	s := &Store{
		cfg:       cfg,
		opts:      opts,
		pool:      pool,
		waiters:   map[string]map[*waiter]struct{}{},
		held:      map[string]uint64{},
		failedEnd: map[string]uint64{},
		quit:      make(chan struct{}),
		work:      make(chan struct{}, 1),
		q:         newQueue(),

		beforeReconnect: beforeReconnect,
	}
	// LISTEN before anything else: the listener is connected and
	// listening before Open returns, so no end committed after that is
	// missed (a waiter registers before it reads; see wait.go).
	conn, err := s.connectListener(ctx, pcfg.ConnConfig)
	if err != nil {
		pool.Close()
		return nil, err
	}
	seen, err := s.recoverDatabase(ctx)
	if err != nil {
		conn.Close(context.Background())
		pool.Close()
		return nil, err
	}
	s.signalWork() // a claimer's first wait claims at once
	lctx, stop := context.WithCancel(context.Background())
	s.stopListen = stop
	s.listenDone = make(chan struct{})
	go s.listen(lctx, pcfg.ConnConfig, conn, seen)
	wctx, stopWriter := context.WithCancel(context.Background())
	s.stopWriter = stopWriter
	s.writerDone = make(chan struct{})
	go s.runWriter(wctx)
	kctx, stopKeep := context.WithCancel(context.Background())
	s.stopKeep = stopKeep
	s.keepDone = make(chan struct{})
	go s.keep(kctx)
	return s, nil
}

// Recovered lists the jobs that were PENDING when the store was opened,
// oldest first, but those whose request another replica had taken: the
// caller runs them, their deadlines still counted from CreatedAt.
func (s *Store) Recovered(context.Context) ([]ledger.Snapshot, error) {
	if s.closed.Load() {
		return nil, ledger.ErrClosed
	}
	return append([]ledger.Snapshot(nil), s.recovered...), nil
}

// Stats reads the depth and the number of jobs held from the database (the
// depth and the counts are the ledger's, whichever replica changed them);
// the eviction counts are this Store's, since Open. Unlike the in-process
// stores, it costs a query; if the query fails it returns the eviction
// counts alone.
func (s *Store) Stats() ledger.Stats {
	st := ledger.Stats{EvictedTTL: s.evictedTTL.Load(), EvictedLRU: s.evictedLRU.Load()}
	if s.closed.Load() {
		return st
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	var depth, jobs, retained int64
	err := s.pool.QueryRow(ctx, `SELECT (SELECT depth FROM ledger WHERE id = 1),
		(SELECT count(*) FROM jobs), (SELECT count(*) FROM jobs WHERE seq IS NOT NULL)`).Scan(&depth, &jobs, &retained)
	if err == nil {
		st.Depth, st.Jobs, st.Retained = int(depth), int(jobs), int(retained)
	}
	return st
}

// Close stops the listener and the keeper of the leases, and closes the
// connections. The leases of this Store's live jobs are left to lapse
// (another replica's reaper then ends them), or to this replica's next
// Open. Calls after Close
// return ErrClosed, and a Wait blocked in the store returns ErrClosed, with
// the latest snapshot it read, at once. A call in flight at Close may
// still commit. Close is idempotent.
func (s *Store) Close() error {
	if !s.closed.CompareAndSwap(false, true) {
		return nil
	}
	close(s.quit)
	s.stopWriter()
	<-s.writerDone
	s.stopKeep()
	<-s.keepDone
	s.stopListen()
	<-s.listenDone
	s.traceClosed()
	s.pool.Close()
	return nil
}

// callErr is the error of a call whose database work failed with err: the
// context's error if ctx ended (the outcome is unknown), ErrClosed if the
// store was closed under it, else err wrapped with what failed.
func (s *Store) callErr(ctx context.Context, what string, err error) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if s.closed.Load() {
		return ledger.ErrClosed
	}
	return fmt.Errorf("postgres: %s: %w", what, err)
}

// inTx runs f in one transaction on a pooled connection and commits.
func (s *Store) inTx(ctx context.Context, f func(pgx.Tx) error) error {
	return pgx.BeginFunc(ctx, s.pool, f)
}
