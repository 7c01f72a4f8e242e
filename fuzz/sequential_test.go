package fuzz

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/jobledger/jobledger/internal/fakeclock"
	"github.com/jobledger/jobledger/jobtable"
	"github.com/jobledger/jobledger/ledger/ledgertype"
)

// maxSeqSteps bounds the operations one sequential input decodes to.
const maxSeqSteps = 48

// Sequential operations, the first byte of each two-byte step (mod seqOps).
const (
	seqSubmit = iota
	seqTake
	seqStart
	seqFinish
	seqFail
	seqTimeout
	seqSnapshot
	seqResult
	seqWait
	seqAdvance
	seqOps
)

var seqOpNames = [seqOps]string{"submit", "take", "start", "finish", "fail", "timeout", "snapshot", "result", "wait", "advance"}

// Header choices: the byte is taken mod the length of each list.
var (
	seqMaxQueue     = []int{0, 1, 2, 3, 4}
	seqTTL          = []time.Duration{0, -1, time.Second, 2 * time.Second, 3 * time.Second}
	seqMaxCompleted = []int{0, -1, 1, 2, 3}
)

// advanceStep is the unit of a clock advance; a step advances 0 to 7 units.
const advanceStep = 500 * time.Millisecond

// FuzzSequential applies a decoded sequence of operations to a table and to
// the reference model and compares every answer.
//
// Input: three header bytes (MaxQueue, JobTTL and MaxCompleted, each an
// index into the lists above), then two bytes per step: the operation and
// its argument. For an operation on a job the argument names it relative to
// the newest id issued (0 the newest, 1 the one before, ...); past the
// oldest it names an id never issued. For submit it is the task id, for
// advance the number of half seconds.
//
// After every step the target compares, besides the step's own answer, the
// depth, Len, Stats (with the eviction counters) and a snapshot of every id
// ever issued, so an eviction too early, too late or of the wrong job shows
// up at the step that made it; and it runs the table's CheckInvariants.
func FuzzSequential(f *testing.F) {
	for _, s := range sequentialSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		runSequential(t, data)
	})
}

func runSequential(t *testing.T, data []byte) {
	in := &input{data: data}
	clock := fakeclock.New()
	cfg := jobtable.Config{
		MaxQueue:     seqMaxQueue[in.intn(len(seqMaxQueue))],
		JobTTL:       seqTTL[in.intn(len(seqTTL))],
		MaxCompleted: seqMaxCompleted[in.intn(len(seqMaxCompleted))],
		Now:          clock.Now,
		NewID:        fakeclock.Seq("j"),
	}
	table, err := jobtable.New[string, string](cfg)
	if err != nil {
		t.Fatalf("New(%+v): %v", cfg, err)
	}
	ref := newReference(cfg)
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()

	var trace []string
	fail := func(format string, args ...any) {
		t.Helper()
		t.Fatalf("config MaxQueue=%d JobTTL=%v MaxCompleted=%d\nsteps:\n  %s\n%s",
			cfg.MaxQueue, cfg.JobTTL, cfg.MaxCompleted, joinLines(trace), fmt.Sprintf(format, args...))
	}

	for step := 0; step < maxSeqSteps && in.more(); step++ {
		op, arg := in.intn(seqOps), in.byte()
		id := "j0" // never issued: Seq starts at j1
		if back := int(arg % 8); back < ref.issued {
			id = "j" + strconv.Itoa(ref.issued-back)
		}
		trace = append(trace, fmt.Sprintf("%2d %s(%s)", step, seqOpNames[op], argString(op, arg, id)))

		switch op {
		case seqSubmit:
			task := "t" + strconv.Itoa(int(arg))
			req := "req-" + strconv.Itoa(step)
			gotID, gotErr := table.Submit(task, req)
			wantID, wantErr := ref.submit(task, req)
			if gotID != wantID || gotErr != wantErr {
				fail("Submit = %q, %v; reference %q, %v", gotID, gotErr, wantID, wantErr)
			}
		case seqTake:
			got, gotErr := table.TakeRequest(id)
			want, wantErr := ref.takeRequest(id)
			if got != want || gotErr != wantErr {
				fail("TakeRequest(%s) = %q, %v; reference %q, %v", id, got, gotErr, want, wantErr)
			}
		case seqStart:
			got, gotErr := table.Start(id)
			want, wantErr := ref.start(id)
			if gotErr != wantErr || !sameSnapshot(got, want) {
				fail("Start(%s) = %s, %v; reference %s, %v", id, showSnapshot(got), gotErr, showSnapshot(want), wantErr)
			}
		case seqFinish:
			res := "res-" + strconv.Itoa(step)
			got, gotErr := table.Finish(id, res)
			want, wantErr := ref.terminate(id, ledgertype.Done, res, nil)
			if gotErr != wantErr || !sameSnapshot(got, want) {
				fail("Finish(%s) = %s, %v; reference %s, %v", id, showSnapshot(got), gotErr, showSnapshot(want), wantErr)
			}
		case seqFail, seqTimeout:
			cause := errors.New(seqOpNames[op] + "-" + strconv.Itoa(step))
			to, call := ledgertype.Failed, table.Fail
			if op == seqTimeout {
				to, call = ledgertype.TimedOut, table.Timeout
			}
			got, gotErr := call(id, cause)
			want, wantErr := ref.terminate(id, to, "", cause)
			if gotErr != wantErr || !sameSnapshot(got, want) {
				fail("%s(%s) = %s, %v; reference %s, %v", seqOpNames[op], id, showSnapshot(got), gotErr, showSnapshot(want), wantErr)
			}
		case seqSnapshot:
			got, gotErr := table.Snapshot(id)
			want, wantErr := ref.snapshot(id)
			if gotErr != wantErr || !sameSnapshot(got, want) {
				fail("Snapshot(%s) = %s, %v; reference %s, %v", id, showSnapshot(got), gotErr, showSnapshot(want), wantErr)
			}
		case seqResult:
			got, gotSnap, gotErr := table.Result(id)
			want, wantSnap, wantErr := ref.result(id)
			if got != want || gotErr != wantErr || !sameSnapshot(gotSnap, wantSnap) {
				fail("Result(%s) = %q, %s, %v; reference %q, %s, %v", id, got, showSnapshot(gotSnap), gotErr, want, showSnapshot(wantSnap), wantErr)
			}
		case seqWait:
			got, gotErr := table.Wait(cancelled, id)
			want, wantErr := ref.waitCancelled(id)
			if gotErr != wantErr || !sameSnapshot(got, want) {
				fail("Wait(%s) with an ended context = %s, %v; reference %s, %v", id, showSnapshot(got), gotErr, showSnapshot(want), wantErr)
			}
		case seqAdvance:
			clock.Advance(time.Duration(arg%8) * advanceStep)
		}

		if err := table.CheckInvariants(); err != nil {
			fail("invariants after the last step:\n%v", err)
		}
		if got, want := table.Stats(), ref.stats(); got != want {
			fail("Stats = %+v; reference %+v", got, want)
		}
		if got, want := table.Depth(), ref.depth; got != want {
			fail("Depth = %d; reference %d", got, want)
		}
		if got, want := table.Len(), len(ref.jobs); got != want {
			fail("Len = %d; reference %d", got, want)
		}
		// Retention: every id ever issued is held exactly when the
		// reference holds it, with the same view.
		for n := 1; n <= ref.issued; n++ {
			id := "j" + strconv.Itoa(n)
			got, gotErr := table.Snapshot(id)
			want, wantErr := ref.snapshot(id)
			if gotErr != wantErr || !sameSnapshot(got, want) {
				fail("after the last step, Snapshot(%s) = %s, %v; reference %s, %v", id, showSnapshot(got), gotErr, showSnapshot(want), wantErr)
			}
		}
	}
}

func argString(op int, arg byte, id string) string {
	switch op {
	case seqSubmit:
		return "t" + strconv.Itoa(int(arg))
	case seqAdvance:
		return (time.Duration(arg%8) * advanceStep).String()
	}
	return id
}
