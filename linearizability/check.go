package linearizability

import (
	"fmt"
	"os"
	"time"

	"github.com/anishathalye/porcupine"
)

// Verdict is the outcome of Check.
type Verdict int

const (
	// Linearizable: both models accept the history.
	Linearizable Verdict = iota
	// Violation: a model rejects the history; Report says which partition.
	Violation
	// Inconclusive: the checker ran out of time (porcupine's Unknown). It
	// is a failure: a check that cannot decide proves nothing.
	Inconclusive
)

func (v Verdict) String() string {
	switch v {
	case Linearizable:
		return "linearizable"
	case Violation:
		return "NOT linearizable"
	case Inconclusive:
		return "inconclusive (checker timed out)"
	}
	return fmt.Sprintf("Verdict(%d)", int(v))
}

// CheckConfig configures Check.
type CheckConfig struct {
	// MaxQueue is the table's bound, for the admission model.
	MaxQueue int
	// Timeout bounds each porcupine call. Zero means 60 s.
	Timeout time.Duration
	// VisualizeDir is where the HTML visualization of a violation is
	// written. Empty means os.TempDir().
	VisualizeDir string
	// NoVisualize skips the visualization.
	NoVisualize bool

	_ struct{}
}

// Report is what Check found.
type Report struct {
	Verdict Verdict
	// Model and Partition name what failed: "job" and the job id, or
	// "admission" and the segment number. Empty when linearizable.
	Model, Partition string
	// Message explains a failure in one line.
	Message string
	// Visualization is the path of the HTML file written for a violation.
	Visualization string

	Ops               int // operations in the history
	JobPartitions     int
	AdmissionOps      int // operations in the admission projection
	AdmissionSegments int
	LargestPartition  int // operations in the largest job partition
	JobCheck          time.Duration
	AdmissionCheck    time.Duration
}

// Check checks history against JobModel (partitioned by job) and
// AdmissionModel (global, cut at quiescent points). Each model is checked
// plainly first, which stops at the first illegal partition; only then is
// the failing partition found and checked again verbosely, alone, to write
// its visualization. The verbose check of a whole history can take far
// more time and memory than the plain one.
func Check(history []porcupine.Operation, cfg CheckConfig) Report {
	return check(history, cfg, JobModel, AdmissionModel(cfg.MaxQueue), admissionProjection)
}

// CheckHTTP checks a history recorded through the HTTP API against
// HTTPJobModel (partitioned by job) and HTTPAdmissionModel (global, cut at
// quiescent points), the same way as Check.
func CheckHTTP(history []porcupine.Operation, cfg CheckConfig) Report {
	return check(history, cfg, HTTPJobModel, HTTPAdmissionModel(cfg.MaxQueue), httpAdmissionProjection)
}

func check(history []porcupine.Operation, cfg CheckConfig, job, adm porcupine.Model, project func([]porcupine.Operation) []porcupine.Operation) Report {
	if cfg.Timeout <= 0 {
		cfg.Timeout = 60 * time.Second
	}
	rep := Report{Ops: len(history)}

	parts := jobPartitions(history)
	rep.JobPartitions = len(parts)
	for _, p := range parts {
		rep.LargestPartition = max(rep.LargestPartition, len(p.Ops))
	}
	start := time.Now()
	res := porcupine.CheckOperationsTimeout(job, history, cfg.Timeout)
	rep.JobCheck = time.Since(start)
	switch res {
	case porcupine.Unknown:
		return inconclusive(rep, "job", cfg.Timeout)
	case porcupine.Illegal:
		single := job
		single.Partition = nil
		for _, p := range parts {
			if porcupine.CheckOperationsTimeout(single, p.Ops, cfg.Timeout) == porcupine.Illegal {
				return violation(rep, cfg, single, "job", p.ID, p.Ops)
			}
		}
		return inconclusive(rep, "job", cfg.Timeout) // no single partition failed: cannot happen
	}

	proj := project(history)
	segs := adm.Partition(proj)
	rep.AdmissionOps, rep.AdmissionSegments = len(proj), len(segs)
	start = time.Now()
	res = porcupine.CheckOperationsTimeout(adm, proj, cfg.Timeout)
	rep.AdmissionCheck = time.Since(start)
	switch res {
	case porcupine.Unknown:
		return inconclusive(rep, "admission", cfg.Timeout)
	case porcupine.Illegal:
		single := adm
		single.Partition = nil
		for i, s := range segs {
			if porcupine.CheckOperationsTimeout(single, s, cfg.Timeout) == porcupine.Illegal {
				return violation(rep, cfg, single, "admission", fmt.Sprintf("segment %d", i), s)
			}
		}
		return inconclusive(rep, "admission", cfg.Timeout)
	}
	return rep
}

func inconclusive(rep Report, model string, timeout time.Duration) Report {
	rep.Verdict, rep.Model = Inconclusive, model
	rep.Message = fmt.Sprintf("%s model: porcupine gave no answer within %v; this is a failure, not a pass (raise the timeout or shorten the run)", model, timeout)
	return rep
}

// violation fills rep for the illegal partition ops of model, and writes
// its visualization.
func violation(rep Report, cfg CheckConfig, model porcupine.Model, name, part string, ops []porcupine.Operation) Report {
	rep.Verdict, rep.Model, rep.Partition = Violation, name, part
	rep.Message = fmt.Sprintf("%s model: %s (%d operations) is not linearizable", name, part, len(ops))
	if cfg.NoVisualize {
		return rep
	}
	res, info := porcupine.CheckOperationsVerbose(model, ops, cfg.Timeout)
	if res != porcupine.Illegal {
		rep.Message += fmt.Sprintf("; verbose re-check said %v, no visualization", res)
		return rep
	}
	f, err := os.CreateTemp(cfg.VisualizeDir, "lincheck-"+name+"-*.html")
	if err != nil {
		rep.Message += "; visualization: " + err.Error()
		return rep
	}
	path := f.Name()
	f.Close()
	if err := porcupine.VisualizePath(model, info, path); err != nil {
		rep.Message += "; visualization: " + err.Error()
		return rep
	}
	rep.Visualization = path
	return rep
}
