package ledgertest_test

import (
	"cmp"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"
	"testing"

	"github.com/jobledger/jobledger/ledger"
	"github.com/jobledger/jobledger/ledger/ledgertest"
	"github.com/jobledger/jobledger/ledger/ledgertype"
)

// TestReferenceConformance runs the suite on reference, a store written
// the dumbest way that keeps the contract and survives a restart. It shows
// that every rule, the restart rules included, holds for a store other
// than jobtable: the suite asks for the contract, not for jobtable's
// particulars.
func TestReferenceConformance(t *testing.T) {
	ledgertest.Run(t, ledgertest.Store{
		Open: func(_ *testing.T, cfg ledger.Config) ledger.Ledger[string, string] {
			return openReference(cfg, nil)
		},
		Restart: func(t *testing.T, l ledger.Ledger[string, string]) ledger.Ledger[string, string] {
			r := l.(*reference)
			if err := r.Close(); err != nil {
				t.Fatal(err)
			}
			return openReference(r.cfg, r.disk)
		},
	})
}

// reference is the reference store: one mutex around everything, a map
// of jobs, and a slice of the terminal ones in completion order. Its
// "disk" is a copy of its jobs taken at Close; opening on a disk applies
// the restart semantics. Everything is guarded by mu.
type reference struct {
	cfg ledger.Config

	mu         sync.Mutex
	closed     bool
	jobs       map[string]*refJob
	ended      []*refJob // terminal jobs, least recently completed first
	depth      int
	recovered  []ledger.Snapshot
	evictedTTL uint64
	evictedLRU uint64
	next       int      // the seq of the next job
	disk       []refJob // written by Close
}

type refJob struct {
	snap  ledger.Snapshot
	req   string
	taken bool
	res   string
	seq   int           // submission order, for Recovered's ties
	key   string        // idempotency key, "" for none
	dig   string        // the digest submitted with key
	done  chan struct{} // closed at the end
}

var errInterrupted = errors.New("interrupted by restart")

func openReference(cfg ledger.Config, disk []refJob) *reference {
	if cfg.JobTTL == 0 {
		cfg.JobTTL = ledger.DefaultJobTTL
	}
	if cfg.MaxCompleted == 0 {
		cfg.MaxCompleted = ledger.DefaultMaxCompleted
	}
	if cfg.NewID == nil {
		cfg.NewID = rand.Text
	}
	r := &reference{cfg: cfg, jobs: map[string]*refJob{}}
	now := cfg.Now()
	for _, d := range disk {
		j := &refJob{snap: d.snap, req: d.req, taken: d.taken, res: d.res, seq: d.seq, key: d.key, dig: d.dig,
			done: make(chan struct{})}
		switch j.snap.State {
		case ledgertype.Pending:
			r.depth++
			r.recovered = append(r.recovered, j.snap)
		case ledgertype.Running:
			j.snap.State, j.snap.Err, j.snap.CompletedAt = ledgertype.Failed, errInterrupted, now
			j.req, j.taken = "", true
			fallthrough
		default:
			close(j.done)
			r.ended = append(r.ended, j)
		}
		r.jobs[j.snap.ID] = j
		r.next = max(r.next, j.seq+1)
	}
	slices.SortStableFunc(r.ended, func(a, b *refJob) int { return a.snap.CompletedAt.Compare(b.snap.CompletedAt) })
	slices.SortFunc(r.recovered, func(a, b ledger.Snapshot) int {
		return cmp.Or(a.CreatedAt.Compare(b.CreatedAt), cmp.Compare(r.jobs[a.ID].seq, r.jobs[b.ID].seq))
	})
	return r
}

// findLocked returns job id, or an error for a closed store or an unknown id.
// r.mu must be held.
func (r *reference) findLocked(id string) (*refJob, error) {
	if r.closed {
		return nil, ledger.ErrClosed
	}
	j := r.jobs[id]
	if j == nil {
		return nil, ledger.ErrNotFound
	}
	return j, nil
}

// Submit looks for a key among every job, the dumbest way.
func (r *reference) Submit(_ context.Context, s ledger.Submission, req string) (string, bool, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return "", false, ledger.ErrClosed
	}
	if s.Key == "" {
		id, err := r.submitLocked(s.TaskID, req, "", "")
		return id, false, err
	}
	for id, j := range r.jobs {
		if j.key == s.Key {
			if j.dig != s.Digest {
				return "", false, ledger.ErrKeyConflict
			}
			return id, true, nil
		}
	}
	id, err := r.submitLocked(s.TaskID, req, s.Key, s.Digest)
	return id, false, err
}

func (r *reference) LookupKey(_ context.Context, key string) (string, string, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return "", "", ledger.ErrClosed
	}
	for id, j := range r.jobs {
		if key != "" && j.key == key {
			return id, j.dig, nil
		}
	}
	return "", "", ledger.ErrNotFound
}

// r.mu must be held.
func (r *reference) submitLocked(taskID, req, key, digest string) (string, error) {
	if r.depth >= max(r.cfg.MaxQueue, 0) {
		return "", ledger.ErrQueueFull
	}
	now := r.cfg.Now()
	for ttl := r.cfg.JobTTL; ttl > 0 && len(r.ended) > 0 && now.Sub(r.ended[0].snap.CompletedAt) >= ttl; {
		r.evictFrontLocked()
		r.evictedTTL++
	}
	for limit := r.cfg.MaxCompleted; limit > 0 && len(r.ended) > limit; {
		r.evictFrontLocked()
		r.evictedLRU++
	}
	id := r.cfg.NewID()
	r.depth++
	r.jobs[id] = &refJob{snap: ledger.Snapshot{ID: id, TaskID: taskID, State: ledgertype.Pending, CreatedAt: now},
		req: req, seq: r.next, key: key, dig: digest, done: make(chan struct{})}
	r.next++
	return id, nil
}

// r.mu must be held.
func (r *reference) evictFrontLocked() {
	delete(r.jobs, r.ended[0].snap.ID)
	r.ended = r.ended[1:]
}

func (r *reference) TakeRequest(_ context.Context, id string) (string, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	j, err := r.findLocked(id)
	switch {
	case err != nil:
		return "", err
	case j.snap.State.Terminal():
		return "", ledger.ErrTerminal
	case j.taken:
		return "", ledger.ErrRequestTaken
	}
	req := j.req
	j.req, j.taken = "", true
	return req, nil
}

func (r *reference) Start(_ context.Context, id string) (ledger.Snapshot, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	j, err := r.findLocked(id)
	if err != nil {
		return ledger.Snapshot{}, err
	}
	if j.snap.State != ledgertype.Pending {
		return j.snap, ledger.ErrNotPending
	}
	j.snap.State, j.snap.StartedAt = ledgertype.Running, r.cfg.Now()
	return j.snap, nil
}

func (r *reference) end(id string, to ledger.State, res string, cause error) (ledger.Snapshot, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	j, err := r.findLocked(id)
	if err != nil {
		return ledger.Snapshot{}, err
	}
	if j.snap.State.Terminal() {
		return j.snap, ledger.ErrTerminal
	}
	j.snap.State, j.snap.Err, j.snap.CompletedAt = to, cause, r.cfg.Now()
	j.res, j.req, j.taken = res, "", true
	r.depth--
	r.ended = append(r.ended, j)
	close(j.done)
	return j.snap, nil
}

func (r *reference) Finish(_ context.Context, id string, res string) (ledger.Snapshot, error) {
	return r.end(id, ledgertype.Done, res, nil)
}

func (r *reference) Fail(_ context.Context, id string, cause error) (ledger.Snapshot, error) {
	return r.end(id, ledgertype.Failed, "", orNoCause(cause))
}

func (r *reference) Timeout(_ context.Context, id string, cause error) (ledger.Snapshot, error) {
	return r.end(id, ledgertype.TimedOut, "", orNoCause(cause))
}

func orNoCause(cause error) error {
	if cause == nil {
		return ledger.ErrNoCause
	}
	return cause
}

func (r *reference) State(ctx context.Context, id string) (ledger.State, error) {
	snap, err := r.Snapshot(ctx, id)
	return snap.State, err
}

func (r *reference) Snapshot(_ context.Context, id string) (ledger.Snapshot, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	j, err := r.findLocked(id)
	if err != nil {
		return ledger.Snapshot{}, err
	}
	return j.snap, nil
}

func (r *reference) Wait(ctx context.Context, id string) (ledger.Snapshot, error) {
	r.mu.Lock()
	j, err := r.findLocked(id)
	r.mu.Unlock()
	if err != nil {
		return ledger.Snapshot{}, err
	}
	select {
	case <-j.done:
	case <-ctx.Done():
	}
	r.mu.Lock() // j itself, evicted or not
	defer r.mu.Unlock()
	if !j.snap.State.Terminal() {
		return j.snap, ctx.Err()
	}
	return j.snap, nil
}

func (r *reference) Result(_ context.Context, id string) (string, ledger.Snapshot, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	j, err := r.findLocked(id)
	switch {
	case err != nil:
		return "", ledger.Snapshot{}, err
	case j.snap.State != ledgertype.Done:
		return "", j.snap, ledger.ErrNotDone
	}
	return j.res, j.snap, nil
}

// List sorts every job by its seq (the ordinal is seq+1) and filters them,
// the dumbest way.
func (r *reference) List(_ context.Context, q ledger.ListQuery) (ledger.Page, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return ledger.Page{}, ledger.ErrClosed
	}
	tq, err := q.Resolve()
	if err != nil {
		return ledger.Page{}, err
	}
	all := slices.SortedFunc(maps.Values(r.jobs), func(a, b *refJob) int { return cmp.Compare(b.seq, a.seq) })
	var page ledger.Page
	for i, j := range all {
		ord := uint64(j.seq) + 1
		if tq.Before != 0 && ord >= tq.Before || !tq.Matches(j.snap) {
			continue
		}
		page.Jobs = append(page.Jobs, j.snap)
		if len(page.Jobs) == tq.Limit {
			if i < len(all)-1 {
				page.Next = ledger.EncodeCursor(ord)
			}
			break
		}
	}
	return page, nil
}

func (r *reference) Recovered(context.Context) ([]ledger.Snapshot, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return nil, ledger.ErrClosed
	}
	return slices.Clone(r.recovered), nil
}

func (r *reference) Stats() ledger.Stats {
	r.mu.Lock()
	defer r.mu.Unlock()
	return ledger.Stats{Depth: r.depth, Jobs: len(r.jobs), Retained: len(r.ended),
		EvictedTTL: r.evictedTTL, EvictedLRU: r.evictedLRU}
}

func (r *reference) CheckInvariants() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	var errs []error
	live := 0
	for _, j := range r.jobs {
		if !j.snap.State.Terminal() {
			live++
		}
	}
	if live != r.depth || r.depth > max(r.cfg.MaxQueue, 0) {
		errs = append(errs, fmt.Errorf("DepthInv: depth %d, %d live jobs, MaxQueue %d", r.depth, live, r.cfg.MaxQueue))
	}
	if len(r.ended) != len(r.jobs)-live {
		errs = append(errs, fmt.Errorf("RetentionListInv: %d listed, %d terminal", len(r.ended), len(r.jobs)-live))
	}
	for i, j := range r.ended {
		if !j.snap.State.Terminal() || r.jobs[j.snap.ID] != j {
			errs = append(errs, fmt.Errorf("RetentionListInv: %s listed", j.snap.ID))
		}
		if i > 0 && j.snap.CompletedAt.Before(r.ended[i-1].snap.CompletedAt) {
			errs = append(errs, fmt.Errorf("RetentionListInv: %s out of completion order", j.snap.ID))
		}
	}
	return errors.Join(errs...)
}

// Close writes the jobs to the disk a restart reads.
func (r *reference) Close() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return nil
	}
	r.closed = true
	r.disk = make([]refJob, 0, len(r.jobs))
	for _, j := range r.jobs {
		r.disk = append(r.disk, refJob{snap: j.snap, req: j.req, taken: j.taken, res: j.res, seq: j.seq, key: j.key, dig: j.dig})
	}
	return nil
}
