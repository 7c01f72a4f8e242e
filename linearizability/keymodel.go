package linearizability

import (
	"fmt"
	"os"
	"time"

	"github.com/anishathalye/porcupine"
)

// Idempotency keys (ledger.Ledger.Submit under a key): KeyModel is the
// sequential specification of the submits under each key, partitioned by
// key. It checks what the job models cannot see: that a submit under a
// key returns the existing job while that job is retained, and creates a
// new one only once the key is free.

// KeyOp is the kind of an operation of a key history.
type KeyOp uint8

const (
	// KeySubmit is SubmitKeyed(Key, Digest).
	KeySubmit KeyOp = iota + 1
	// KeyEnd is the terminal transition of job ID, submitted under Key:
	// from then on retention may evict it, which frees the key.
	KeyEnd
)

// KeyInput is one call of a key history.
type KeyInput struct {
	Op     KeyOp
	Key    string
	Digest string // KeySubmit
	ID     string // KeyEnd: the job that ended
}

// KeyOutput is what a KeySubmit returned: the job's id and whether it was
// a replay, or, by Outcome, a refusal (QueueFull or KeyConflict). A
// KeyEnd's output is ignored.
type KeyOutput struct {
	ID       string
	Replayed bool
	Outcome  Outcome // OK, QueueFull or KeyConflict
}

// keyState is the sequential state of one key: the job that holds it, its
// digest, and whether that job has ended (so that it may have been
// evicted, and the key freed, unseen).
type keyState struct {
	Holder string // "" when no retained job holds the key
	Digest string
	Ended  bool
}

// KeyModel is the per-key specification. In one key's history:
//   - a submit that returns a new job (not replayed) is legal when no job
//     holds the key, or the holder has ended (retention may have evicted
//     it); the new job holds the key from then on;
//   - a replay is legal only with the holder's id and digest: never with
//     another id, and never once the key was given to another job;
//   - ErrKeyConflict is legal only while a job holds the key with another
//     digest;
//   - ErrQueueFull is legal only when the key is free, or its holder ended
//     (then the holder was evicted: a later replay of it is illegal);
//   - the end of the holder marks it ended; the end of an earlier job of
//     the key changes nothing.
//
// Eviction is never seen: it is the nondeterminism "an ended holder may be
// gone", resolved by the first submit that returns something other than a
// replay. Its Step is the clauses of keyClauses (clause.go);
// HTTPKeyModel (httpkeys.go) is its variant for histories recorded
// through the HTTP API.
var KeyModel = porcupine.Model{
	Partition: func(history []porcupine.Operation) [][]porcupine.Operation {
		parts := partitionByKey(history)
		out := make([][]porcupine.Operation, len(parts))
		for i, p := range parts {
			out[i] = p.Ops
		}
		return out
	},
	Init: func() any { return keyState{} },
	Step: func(state, input, output any) (bool, any) {
		return stepKeyRules(rules{}, state.(keyState), input.(KeyInput), output.(KeyOutput))
	},
	Equal: func(a, b any) bool { return a.(keyState) == b.(keyState) },
	DescribeOperation: func(input, output any) string {
		in, out := input.(KeyInput), output.(KeyOutput)
		if in.Op == KeyEnd {
			return fmt.Sprintf("end(%s) under %q", in.ID, in.Key)
		}
		switch out.Outcome {
		case OK:
			return fmt.Sprintf("submit(%q, %s) -> %s replayed=%t", in.Key, in.Digest, out.ID, out.Replayed)
		case KeyConflict:
			return fmt.Sprintf("submit(%q, %s) -> key conflict", in.Key, in.Digest)
		default:
			return fmt.Sprintf("submit(%q, %s) -> %v", in.Key, in.Digest, out.Outcome)
		}
	},
	DescribeState: func(state any) string {
		s := state.(keyState)
		if s.Holder == "" {
			return "free"
		}
		return fmt.Sprintf("held by %s (%s), ended=%t", s.Holder, s.Digest, s.Ended)
	},
}

// free reports whether the key may be taken by a new job: no job holds it,
// or its holder ended and retention may have evicted it (never where
// retention evicts nothing: r.retained).
func (s keyState) free(r rules) bool {
	return s.Holder == "" || s.Ended && !r.retained
}

// stepKeyRules is one step of KeyModel with the clauses r in force
// (keyClauses, clause.go); with r.retained, an end frees no key
// (HTTPKeyModel where retention evicts nothing).
func stepKeyRules(r rules, s keyState, in KeyInput, out KeyOutput) (bool, keyState) {
	if in.Op == KeyEnd {
		if in.ID == s.Holder {
			s.Ended = true
		}
		return true, s
	}
	switch {
	case out.Outcome == OK && out.Replayed:
		return r.holds(keyReplayNamesHolder, s.Holder != "" && out.ID == s.Holder) &&
			r.holds(keyReplaySameBody, in.Digest == s.Digest), s
	case out.Outcome == OK:
		if !r.holds(keyNewJobOnlyWhenFree, s.free(r) && out.ID != "" && out.ID != s.Holder) {
			return false, s
		}
		return true, keyState{Holder: out.ID, Digest: in.Digest}
	case out.Outcome == KeyConflict:
		return r.holds(keyConflictOnlyOnOtherBody, s.Holder != "" && in.Digest != s.Digest), s
	case out.Outcome == QueueFull:
		if !r.holds(keyFullOnlyWhenFree, s.free(r)) {
			return false, s
		}
		return true, keyState{} // an ended holder was evicted
	default: // Unknown: no effect is a legal linearization
		return true, s
	}
}

// CheckKeys checks a key history against KeyModel within timeout. On a
// violation it writes the visualization to a file under dir (the system's
// temporary directory when empty) and returns its path with the error.
func CheckKeys(history []porcupine.Operation, timeout time.Duration, dir string) (string, error) {
	res, info := porcupine.CheckOperationsVerbose(KeyModel, history, timeout)
	switch res {
	case porcupine.Ok:
		return "", nil
	case porcupine.Unknown:
		return "", fmt.Errorf("linearizability: key history inconclusive within %v", timeout)
	}
	f, err := os.CreateTemp(dir, "lincheck-keys-*.html")
	if err != nil {
		return "", fmt.Errorf("linearizability: key history is not linearizable (visualization: %v)", err)
	}
	path := f.Name()
	f.Close()
	if err := porcupine.VisualizePath(KeyModel, info, path); err != nil {
		return "", fmt.Errorf("linearizability: key history is not linearizable (visualization: %v)", err)
	}
	return path, fmt.Errorf("linearizability: key history is not linearizable; see %s", path)
}
