package sqlite

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/jobledger/jobledger/internal/benchcmp"
	"github.com/jobledger/jobledger/ledger"
)

// BenchmarkFileChecks measures what the writer adds to each batch to
// check its file (fileLock.checkNamed: two stats) and keep the commit mark
// (fileLock.writeMark: one write of 21 bytes), the subject, against one
// commit of one Submit, the baseline: the ratio is how many times the
// checks a commit costs. Every figure is on the file system of the
// benchmark's temporary directory.
func BenchmarkFileChecks(b *testing.B) {
	ctx := context.Background()
	path := filepath.Join(b.TempDir(), "jobs.db")
	s, err := Open(ctx, path, ledger.Config{MaxQueue: 1 << 30}, Options{BatchLimit: 1})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	var n int64
	checks := func() error {
		n++
		if err := s.lock.checkNamed(s.path); err != nil {
			return err
		}
		return s.lock.writeMark(n)
	}
	commit := func() error {
		_, _, err := s.Submit(ctx, ledger.Submission{TaskID: "bench"}, nil)
		return err
	}
	benchcmp.Alternate(b, 16, checks, commit)
}
