package postgres_test

import (
	"testing"

	"github.com/jobledger/jobledger/ledger"
	"github.com/jobledger/jobledger/store/postgres"
)

// BenchmarkCycle is one job's whole life on the store, each step a
// transaction of its own: Submit, TakeRequest, Start, Finish, Result.
// Parallel runs it from GOMAXPROCS goroutines, on one database: every
// Submit and Finish takes the one ledger row's lock.
func BenchmarkCycle(b *testing.B) {
	for _, bc := range []struct {
		name     string
		parallel bool
	}{{"serial", false}, {"parallel", true}} {
		b.Run(bc.name, func(b *testing.B) {
			s, err := postgres.Open(ctx, newDatabase(b), ledger.Config{MaxQueue: 1 << 20, MaxCompleted: 1024}, postgres.Options{})
			if err != nil {
				b.Fatal(err)
			}
			defer s.Close()
			cycle := func() {
				id, _, err := s.Submit(ctx, ledger.Submission{TaskID: "t"}, []byte("req"))
				if err == nil {
					_, err = s.TakeRequest(ctx, id)
				}
				if err == nil {
					_, err = s.Start(ctx, id)
				}
				if err == nil {
					_, err = s.Finish(ctx, id, []byte("res"))
				}
				if err == nil {
					_, _, err = s.Result(ctx, id)
				}
				if err != nil {
					b.Error(err)
				}
			}
			if bc.parallel {
				b.RunParallel(func(pb *testing.PB) {
					for pb.Next() {
						cycle()
					}
				})
				return
			}
			for b.Loop() {
				cycle()
			}
		})
	}
}
