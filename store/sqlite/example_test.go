package sqlite_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/jobledger/jobledger/ledger"
	"github.com/jobledger/jobledger/store/sqlite"
)

// A job submitted before a restart is still there after it: the runner
// that took it died with the process, so it ends FAILED; one never started
// is PENDING again, for the new process to run.
func Example() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "jobs")
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "jobs.db")
	cfg := ledger.Config{MaxQueue: 16}

	s, err := sqlite.Open(ctx, path, cfg, sqlite.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	l := ledger.WithCodecs[string, string](s, ledger.String{}, ledger.String{})
	running, _, _ := l.Submit(ctx, ledger.Submission{TaskID: "resize-1"}, "cat.png")
	waiting, _, _ := l.Submit(ctx, ledger.Submission{TaskID: "resize-2"}, "dog.png")
	l.TakeRequest(ctx, running)
	l.Start(ctx, running)
	s.Close() // or the process dies: every acknowledged call is on disk

	s, err = sqlite.Open(ctx, path, cfg, sqlite.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer s.Close()
	l = ledger.WithCodecs[string, string](s, ledger.String{}, ledger.String{})
	snap, _ := l.Snapshot(ctx, running)
	fmt.Println(snap.TaskID, snap.State, snap.Err)
	pending, _ := s.Recovered(ctx)
	for _, p := range pending {
		req, _ := l.TakeRequest(ctx, p.ID)
		fmt.Println(p.TaskID, p.State, req, p.ID == waiting)
	}
	// Output:
	// resize-1 FAILED interrupted by restart
	// resize-2 PENDING dog.png true
}
