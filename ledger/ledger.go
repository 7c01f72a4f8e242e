package ledger

import (
	"context"

	"github.com/jobledger/jobledger/ledger/ledgertype"
)

// Ledger is the job ledger's contract (see the package doc): what every
// store implements. Every method is safe for concurrent use, and every one
// but Stats and Close takes a context first; only Wait blocks for other
// callers, but a durable store's calls wait for their commit and return the
// context's error if it ends first, with the outcome unknown. What only
// some stores offer is an optional interface that a caller finds with As:
// Checker, Recoverer, Shared.
//
// Tenants: a context made by WithTenant sees only that tenant's jobs; every
// call that names a job by id answers a job of another tenant with
// ErrNotFound, from the same code path as an id no job has, and List lists
// only the tenant's jobs. A context without a scope sees every job.
//
// Errors: the sentinels below, compared with errors.Is, each meaning what
// its doc says and that nothing changed; ErrClosed after Close; the
// context's error from Wait when ctx ended before the job did. Any other
// error is a failure of the store itself (I/O, a corrupt file): the outcome
// of the call is unknown, and the caller must not assume either way.
type Ledger[Req, Res any] interface {
	// Submit admits a job of s.Tenant carrying req and returns its id,
	// or ErrTenantQueueFull when the tenant has s.TenantMaxQueue (if
	// positive) live jobs, or else ErrQueueFull when the ledger has
	// MaxQueue; both bounds are checked and counted in one atomic step.
	// It evicts expired terminal jobs first (retention).
	// Under an idempotency key (s.Key not empty; keys are the tenant's
	// own), while a job of the tenant submitted under that key is
	// retained, it creates nothing and takes no slot: it
	// returns that job's id with replayed true if s.Digest is that job's,
	// else ErrKeyConflict; otherwise the new job holds the key until it is
	// evicted. The check of the key is one atomic step with the admission
	// and the insertion. A store that keeps text in a database may refuse,
	// with ErrUnstorable, a task id, key or digest it cannot hold.
	Submit(ctx context.Context, s Submission, req Req) (id string, replayed bool, err error)
	// LookupKey returns the id of the retained job of tenant that holds
	// key and its digest, or ErrNotFound; it changes nothing. A caller that finds the
	// key answers a replay (or a conflict) as a read; one that does not
	// must still go through Submit, which decides atomically.
	LookupKey(ctx context.Context, tenant, key string) (id, digest string, err error)
	// TakeRequest hands out the job's request, once, while the job is not
	// terminal: ErrRequestTaken afterwards, ErrTerminal once it ended.
	TakeRequest(ctx context.Context, id string) (Req, error)
	// Start moves a PENDING job to RUNNING, or returns ErrNotPending.
	Start(ctx context.Context, id string) (Snapshot, error)
	// Finish, Fail and Timeout end a job that is not terminal as DONE
	// with res, FAILED with cause, or TIMEOUT with cause (ErrNoCause for a
	// nil one: a FAILED or TIMEOUT job always has an error); on a
	// terminal job they return ErrTerminal with its snapshot.
	Finish(ctx context.Context, id string, res Res) (Snapshot, error)
	Fail(ctx context.Context, id string, cause error) (Snapshot, error)
	Timeout(ctx context.Context, id string, cause error) (Snapshot, error)
	// State is the job's state alone: the cheapest poll.
	State(ctx context.Context, id string) (State, error)
	// Snapshot is a consistent view of the job.
	Snapshot(ctx context.Context, id string) (Snapshot, error)
	// Wait blocks until the job is terminal (nil error) or ctx ends
	// (ctx.Err(), with the latest snapshot).
	Wait(ctx context.Context, id string) (Snapshot, error)
	// Result returns a DONE job's result, repeatably until eviction;
	// ErrNotDone, with the snapshot, for a job in another state.
	Result(ctx context.Context, id string) (Res, Snapshot, error)
	// List returns a page of the retained jobs that q selects, newest
	// first by admission, each as Snapshot returned it at some moment
	// during the call, and the cursor of the next page (see ListQuery and
	// Page). A walk of pages lists no job twice, and lists every job that
	// was retained and matched q throughout the walk. ErrBadQuery or
	// ErrBadCursor for a query it cannot answer, changing nothing.
	List(ctx context.Context, q ListQuery) (Page, error)
	// Stats is a cheap view for metrics; its Depth is the contract's
	// depth, the admitted jobs that are not terminal.
	Stats() Stats
	// Close releases the store. Calls after Close return ErrClosed. A
	// Wait blocked at Close returns either ErrClosed at once or when its
	// context ends, as the store documents (the SQLite store does the
	// former, the memory store the latter); Close never waits for it.
	Close() error
}

// The store-neutral types of the contract, package ledgertype's.
type (
	Snapshot   = ledgertype.Snapshot
	State      = ledgertype.State
	Stats      = ledgertype.Stats
	Submission = ledgertype.Submission
	Config     = ledgertype.Config
)

// Defaults a store fills in for zero Config fields (Config.WithDefaults).
const (
	DefaultJobTTL       = ledgertype.DefaultJobTTL
	DefaultMaxCompleted = ledgertype.DefaultMaxCompleted
)

// The job states.
const (
	Pending  = ledgertype.Pending
	Running  = ledgertype.Running
	Done     = ledgertype.Done
	Failed   = ledgertype.Failed
	TimedOut = ledgertype.TimedOut
)

// The contract's sentinel errors (package ledgertype's); every store
// returns these values, so errors.Is compares them across stores.
var (
	ErrQueueFull = ledgertype.ErrQueueFull
	// ErrTenantQueueFull is Submit's answer when the submission's tenant
	// is at its own bound (Submission.TenantMaxQueue), whatever room the
	// ledger has.
	ErrTenantQueueFull = ledgertype.ErrTenantQueueFull
	ErrNotFound        = ledgertype.ErrNotFound
	ErrNotPending      = ledgertype.ErrNotPending
	ErrTerminal        = ledgertype.ErrTerminal
	ErrNotDone         = ledgertype.ErrNotDone
	ErrRequestTaken    = ledgertype.ErrRequestTaken
	ErrKeyConflict     = ledgertype.ErrKeyConflict
	ErrInvalidConfig   = ledgertype.ErrInvalidConfig
	// ErrNoCause is the error of a job ended by Fail or Timeout with a
	// nil cause. A store that keeps only messages stores its text and
	// reads it back as ErrNoCause (CauseText, CauseFromText).
	ErrNoCause = ledgertype.ErrNoCause
	// ErrClosed is returned by every call after Close.
	ErrClosed = ledgertype.ErrClosed
	// ErrUnstorable is Submit's answer, from a store whose database cannot
	// hold the text, to a task id, key or digest that is not valid UTF-8
	// or holds a NUL byte (the PostgreSQL store; the memory and SQLite
	// stores hold any string). Nothing is admitted. Calls that name a job
	// by such an id, or look up such a key, answer ErrNotFound on every
	// store, and List with such a task id an empty page.
	ErrUnstorable = ledgertype.ErrUnstorable
)

// WithTenant scopes ctx to tenant's jobs; TenantScope reads the scope back
// (see Ledger, "Tenants").
func WithTenant(ctx context.Context, tenant string) context.Context {
	return ledgertype.WithTenant(ctx, tenant)
}

// TenantScope returns the tenant ctx is scoped to, and false when it sees
// every job.
func TenantScope(ctx context.Context) (string, bool) { return ledgertype.TenantScope(ctx) }
