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
	// Linearizable: every model accepts the history.
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
	// AdmissionPorcupine checks the admission projection with porcupine,
	// cut at quiescent points, instead of the sweep (admission_decide.go).
	// Porcupine is the reference the sweep is tested against; its cost can
	// grow exponentially with a segment, and a loaded run has one segment,
	// so this is for small histories and for comparison.
	AdmissionPorcupine bool
	// Retained says that the server's retention evicted nothing while the
	// history was recorded (its TTL and MaxCompleted above the run), so
	// that every submitted job must stay readable: CheckHTTP then checks
	// HTTPJobModel with NoLostJob in force, to which a 404 for a submitted
	// job is a lost job. The crash test sets it, across restarts.
	Retained bool
	// KnowsTTL says that the server knew its retention TTL (async_job_ttl,
	// which a server given its own ledger may not know, and a negative
	// TTL, never evicting by time, does not count), so that every terminal
	// snapshot it sent carries expires_at; when false, none may. A live
	// snapshot never carries it.
	KnowsTTL bool

	_ struct{}
}

// Report is what Check found.
type Report struct {
	Verdict Verdict
	// Model and Partition name what failed: "job" and the job id, or
	// "admission" and the window (the segment number with
	// AdmissionPorcupine). Empty when linearizable.
	Model, Partition string
	// Message explains a failure in one line.
	Message string
	// Visualization is the path of the HTML file written for a violation.
	Visualization string

	Ops               int // operations in the history
	JobPartitions     int
	AdmissionOps      int // operations in the admission projection
	AdmissionSegments int // segments porcupine checked; 0 when the sweep decided
	// AdmissionMethod says what decided the admission model: "sweep", or
	// "porcupine" and why.
	AdmissionMethod string
	// AdmissionStates is the most states the sweep held at one instant.
	AdmissionStates  int
	LargestPartition int // operations in the largest job partition
	// UnknownLeftOut counts the reads and cancels of unknown outcome that
	// the HTTP job model was not given, because they constrain nothing
	// (withoutUnknownOps).
	UnknownLeftOut int
	JobCheck       time.Duration
	AdmissionCheck time.Duration

	// The key model: the operations of the key history (keyed submits,
	// and the derived ends), its keys, the jobs keyed submits created (at
	// the HTTP level one KeyedAdmit each), the lost keyed submits left out
	// of it because their key was held for good (CheckHTTP only,
	// httpkeys.go), and the time of its check. All zero when the history
	// holds no keyed submit.
	KeyOps, KeyPartitions, KeyedJobs, KeyLeftOut int
	KeyCheck                                     time.Duration
}

// Check checks history against JobModel (partitioned by job) and
// AdmissionModel (global), and its keyed submits against KeyModel
// (partitioned by key), as tablekeys.go derives them, between the two: to
// the job and admission models a keyed creation or refusal is a Submit,
// and to JobModel a replay is a read of the job it names.
// The job model is checked by porcupine plainly
// first, which stops at the first illegal partition; only then is the
// failing partition found and checked again verbosely, alone, to write its
// visualization. The verbose check of a whole history can take far more
// time and memory than the plain one. The admission model is decided by
// the sweep of admission_decide.go, exactly as porcupine would decide it,
// in time linear in the history; a violation is drawn on a small window
// around the place where it fails.
func Check(history []porcupine.Operation, cfg CheckConfig) Report {
	return check(history, cfg, models{job: JobModel, adm: AdmissionModel(cfg.MaxQueue), key: KeyModel})
}

// CheckHTTP checks a history recorded through the HTTP API against
// HTTPJobModel (partitioned by job) and HTTPAdmissionModel (global), the
// same way as Check, and its keyed submits against HTTPKeyModel
// (partitioned by key), as httpkeys.go derives them, between the two.
func CheckHTTP(history []porcupine.Operation, cfg CheckConfig) Report {
	return check(history, cfg, httpModels(HTTPJobModel(cfg), HTTPAdmissionModel(cfg.MaxQueue), HTTPKeyModel(cfg)))
}

// models is what check checks a history against: the job model, the
// admission model and the key model, and whether the history was recorded
// through the HTTP API.
type models struct {
	job, adm, key porcupine.Model
	http          bool
}

// httpModels is the HTTP level's models.
func httpModels(job, adm, key porcupine.Model) models {
	return models{job: job, adm: adm, key: key, http: true}
}

func check(history []porcupine.Operation, cfg CheckConfig, m models) Report {
	if cfg.Timeout <= 0 {
		cfg.Timeout = 60 * time.Second
	}
	rep := Report{Ops: len(history)}
	http := m.http

	jobHistory := history
	var keyed keyedHistory
	var tableKeys, scope []porcupine.Operation
	tenants := !http && hasTenants(history)
	if !http {
		if tenants {
			history, scope = foreignScoped(history)
		}
		jobHistory, tableKeys, rep.KeyedJobs = tableKeyed(history)
	} else {
		keyed = deriveKeyed(history, cfg.Retained)
		rep.KeyedJobs = len(keyed.admits)
		jobHistory, rep.UnknownLeftOut = withoutUnknownOps(history)
		jobHistory = withKeyedAdmits(withSubmitWaitReads(jobHistory), keyed.admits)
	}
	parts := jobPartitions(jobHistory)
	rep.JobPartitions = len(parts)
	for _, p := range parts {
		rep.LargestPartition = max(rep.LargestPartition, len(p.Ops))
	}
	var done bool
	if rep, rep.JobCheck, done = checkModel(rep, cfg, m.job, "job", jobHistory, parts); done {
		return rep
	}

	if !http {
		if rep, done = checkKeys(rep, cfg, m.key, tableKeys); done {
			return rep
		}
		rep = checkAdmission(rep, cfg, m.adm, admissionProjection(jobHistory), false)
		if rep.Verdict != Linearizable || !tenants {
			return rep
		}
		return checkTenants(rep, cfg, scope, jobHistory)
	}
	// The key model before the admission model: it is cheap, and names a
	// key's second job as such where the admission model may only see its
	// consequences.
	seen := endsSeenBy(history)
	keyHistory, left := httpKeyProjection(keyed, seen)
	rep.KeyLeftOut = left
	if rep, done = checkKeys(rep, cfg, m.key, keyHistory); done {
		return rep
	}
	return checkAdmission(rep, cfg, m.adm, httpAdmissionProjection(keyed, seen), true)
}

// checkKeys checks the key history keyHistory against key, when it holds
// any operation, and reports whether the check failed.
func checkKeys(rep Report, cfg CheckConfig, key porcupine.Model, keyHistory []porcupine.Operation) (Report, bool) {
	if len(keyHistory) == 0 {
		return rep, false
	}
	parts := partitionByKey(keyHistory)
	rep.KeyOps, rep.KeyPartitions = len(keyHistory), len(parts)
	var done bool
	rep, rep.KeyCheck, done = checkModel(rep, cfg, key, "key", keyHistory, parts)
	return rep, done
}

// checkAdmission checks the admission projection proj, by the sweep unless
// cfg says porcupine.
func checkAdmission(rep Report, cfg CheckConfig, adm porcupine.Model, proj []porcupine.Operation, http bool) Report {
	rep.AdmissionOps, rep.AdmissionMethod = len(proj), "porcupine"
	if !cfg.AdmissionPorcupine {
		var decided bool
		if rep, decided = sweepAdmission(rep, cfg, adm, proj, http); decided {
			return rep
		}
	}
	segs := adm.Partition(proj)
	rep.AdmissionOps, rep.AdmissionSegments = len(proj), len(segs)
	named := make([]jobPartition, len(segs))
	for i, s := range segs {
		named[i] = jobPartition{ID: fmt.Sprintf("segment %d", i), Ops: s}
	}
	rep, rep.AdmissionCheck, _ = checkModel(rep, cfg, adm, "admission", proj, named)
	return rep
}

// checkModel checks history against model with the plain check, which stops
// at the first illegal partition. When it finds one, it checks each of
// parts alone to name the partition that fails and writes its
// visualization. It returns the report, the time of the plain check, and
// whether the check failed (a violation, or no answer in time).
func checkModel(rep Report, cfg CheckConfig, model porcupine.Model, name string, history []porcupine.Operation, parts []jobPartition) (Report, time.Duration, bool) {
	start := time.Now()
	res := porcupine.CheckOperationsTimeout(model, history, cfg.Timeout)
	elapsed := time.Since(start)
	switch res {
	case porcupine.Unknown:
		return inconclusive(rep, name, cfg.Timeout), elapsed, true
	case porcupine.Illegal:
		single := model
		single.Partition = nil
		for _, p := range parts {
			if porcupine.CheckOperationsTimeout(single, p.Ops, cfg.Timeout) == porcupine.Illegal {
				return violation(rep, cfg, single, name, p.ID, p.Ops), elapsed, true
			}
		}
		// No partition failed alone: cannot happen, and is no pass.
		return inconclusive(rep, name, cfg.Timeout), elapsed, true
	}
	return rep, elapsed, false
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
