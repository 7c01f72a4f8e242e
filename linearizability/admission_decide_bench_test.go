package linearizability_test

import (
	"context"
	"flag"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"

	"github.com/jobledger/jobledger/internal/stress"
	"github.com/jobledger/jobledger/internal/stress/httpstress"
	"github.com/jobledger/jobledger/linearizability"
)

// The lengths of the runs BenchmarkAdmission records. The figures of
// docs/performance.md come from
//
//	go test -run '^$' -bench Admission -benchtime 3x ./linearizability -args -admission.table=60s -admission.http=3s
//
// The defaults keep `make bench-smoke` short.
var (
	benchTable = flag.Duration("admission.table", time.Second, "length of the table-level run BenchmarkAdmission records")
	benchHTTP  = flag.Duration("admission.http", time.Second, "length of the HTTP-level run BenchmarkAdmission records")
)

// BenchmarkAdmission records one stress run per level (the seed's shape,
// its length set by the flags above, no cap on operations), then checks
// the admission projection of its history: with the sweep, and with
// porcupine cut at quiescent points, the baseline, given as long as the
// recording took. Each reports check/record, the time of one check over
// the time of the recording (below 1: checked faster than recorded), and
// porcupine's answered (0 when it gave no answer in that time).
func BenchmarkAdmission(b *testing.B) {
	for _, lv := range []struct {
		name string
		http bool
		dur  time.Duration
	}{
		{"table", false, *benchTable},
		{"http", true, *benchHTTP},
	} {
		b.Run(lv.name+"-"+lv.dur.String(), func(b *testing.B) {
			proj, maxQueue, recorded := recordProjection(b, lv.http, lv.dur)
			model := linearizability.AdmissionModel(maxQueue)
			if lv.http {
				model = linearizability.HTTPAdmissionModel(maxQueue)
			}
			b.Logf("%v recorded in %v: %d operations in the admission projection", lv.dur, recorded.Round(time.Millisecond), len(proj))
			b.Run("sweep", func(b *testing.B) {
				for b.Loop() {
					if v := linearizability.DecideAdmission(proj, maxQueue, lv.http); !v.Linearizable {
						b.Fatalf("not linearizable: %s %s %s", v.Unsupported, v.Where, v.Message)
					}
				}
				reportCheck(b, recorded, len(proj))
			})
			b.Run("porcupine", func(b *testing.B) {
				answered := 1.0
				for b.Loop() {
					switch porcupine.CheckOperationsTimeout(model, proj, recorded) {
					case porcupine.Illegal:
						b.Fatal("porcupine: not linearizable")
					case porcupine.Unknown:
						answered = 0
					}
				}
				reportCheck(b, recorded, len(proj))
				b.ReportMetric(answered, "answered")
			})
		})
	}
}

func reportCheck(b *testing.B, recorded time.Duration, ops int) {
	per := b.Elapsed().Seconds() / float64(b.N)
	b.ReportMetric(per/recorded.Seconds(), "check/record")
	b.ReportMetric(float64(ops), "ops")
	b.ReportMetric(per*1e9/float64(ops), "ns/op-checked")
}

// recordProjection records a run of the seed's shape lasting d and
// returns the admission projection of its history, its bound, and how long
// the recording took.
func recordProjection(b *testing.B, http bool, d time.Duration) ([]porcupine.Operation, int, time.Duration) {
	b.Helper()
	if http {
		cfg := httpstress.DefaultHTTPConfig()
		cfg.Duration, cfg.MaxOps, cfg.Progress = d, 1<<40, nil
		res, err := httpstress.RunHTTP(context.Background(), cfg)
		if err != nil || len(res.Violations) > 0 {
			b.Fatal(err, res.Violations)
		}
		return linearizability.HTTPAdmissionProjection(res.History, false), cfg.MaxQueue, res.Elapsed
	}
	cfg := stress.DefaultConfig()
	cfg.Duration, cfg.MaxOps, cfg.Progress = d, 1<<40, nil
	res, err := stress.Run(context.Background(), cfg)
	if err != nil || len(res.Violations) > 0 {
		b.Fatal(err, res.Violations)
	}
	return linearizability.AdmissionProjection(res.History), cfg.MaxQueue, res.Elapsed
}
