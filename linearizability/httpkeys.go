package linearizability

import (
	"fmt"
	"slices"

	"github.com/anishathalye/porcupine"
)

// Idempotency keys at the HTTP level. A keyed POST /jobs (SubmitKeyed)
// that a job holds the key of answers as the first submit did: the same
// 202, the same id. So a client cannot tell a replay from a creation, and
// CheckHTTP tells them apart by the ids, which are unique: of the keyed
// 202s that name one job under one key, exactly one created it, and it
// linearizes first, so before every other of them returns. From the
// recorded SubmitKeyed operations it derives:
//
//   - for the job models, one KeyedAdmit per job and key, the job's
//     creation, from the earliest call of those 202s to their earliest
//     return (keyedAdmits). The 202s themselves are reads of the job in
//     HTTPJobModel (the job exists and is retained; a replay's body says
//     PENDING whatever the state), and no admission in
//     HTTPAdmissionModel, which admits the job once, by its KeyedAdmit,
//     whatever number of 202s name it. A job named under two keys, or
//     created by a plain POST and named by a keyed one, is created twice:
//     SubmitOnce rejects it;
//   - for HTTPKeyModel, partitioned by key, the key history
//     (httpKeyProjection): each SubmitKeyed as a KeySubmit, and, where
//     retention evicts, a KeyEnd per KeyedAdmit. A 202 is a replay exactly
//     when it names the job that holds the key (stepHTTPKey); 422 and 429
//     are judged as KeyModel judges them.
//
// KeyEnd is the job's terminal transition, after which retention may evict
// the job and so free the key. The table level records it as the winning
// terminal call; over HTTP the transition happens inside the server,
// unseen, and clients only know it came after the job's creation and
// before the first operation that saw the job terminal or gone returned,
// and after the last read that saw it live was called. So a KeyEnd spans
// exactly that (as the admission model's End and its reads do):
// porcupine may place it anywhere the real transition could have been.
// Where retention evicts nothing (CheckConfig.Retained), an end frees no
// key, and no KeyEnd is derived: a key once held stays held for good, so a
// second job under it (a key lost in a restart, or two replicas each
// creating a job for it) is illegal.
//
// A keyed submit whose reply was lost (a kill, a replica down, a transport
// error) may have created a job nobody ever names, or have done nothing.
// The key model lets it create a job of its body, held by an unseen id,
// when it is placed where the key is free, and do nothing when placed
// anywhere else or last (stepHTTPKey). It may also be the creator of a job
// that later 202s name: that job's KeyedAdmit is widened back to the
// earliest call of a lost submit on its key with its body (an earlier call
// only ever allows more). Where retention evicts nothing, a lost submit
// called after an operation on its key returned a 202 or a 422 found the
// key held for good: it created nothing (lostOnHeldKey), and so changes
// nothing in any model. It is left out of the key history, where each one
// left in costs the search (it may be placed anywhere after its call); it
// widens no KeyedAdmit (a job's admission widened back across the run
// leaves the admission sweep a window that long to search); it leaves the
// 429s called after it in the admission projection; and it explains no
// unnamed job in a walk (walkrecorded.go). Any other lost keyed submit is
// kept in the admission projection as every lost POST is (the 429s called
// after it are left out), and names no job.

// keyedClientBase is the client id of the first row of KeyedAdmit
// operations in a visualization: beside the End rows.
const keyedClientBase = endClientBase + endClients

// unseenHolder is the holder of a key that a submit of unknown outcome
// created a job for, whose id nobody has seen yet. Job ids are never "?".
const unseenHolder = "?"

// keyedJob is a job that keyed 202s name, with the key they name it under.
type keyedJob struct{ id, key string }

// keyedHistory is what a check derives once from a history's keyed
// submits: the key model's projection, the admission projection and the
// walk check all start from it.
type keyedHistory struct {
	// ops is the history with admits added, ordered by call (unless
	// admits is empty: then the history as given).
	ops []porcupine.Operation
	// admits holds the KeyedAdmit of each keyed job (keyedAdmits).
	admits []porcupine.Operation
	// held is keysHeldFrom's: nil unless retained.
	held     map[string]int64
	retained bool // CheckConfig.Retained
}

// deriveKeyed returns the keyedHistory of history.
func deriveKeyed(history []porcupine.Operation, retained bool) keyedHistory {
	held := keysHeldFrom(history, retained)
	admits := keyedAdmits(history, held)
	return keyedHistory{ops: withKeyedAdmits(history, admits), admits: admits, held: held, retained: retained}
}

// keyedAdmits returns the KeyedAdmit of each job that keyed 202s of
// history name, per key, in the order of their first 202: the body of the
// 202 called first, from the earliest call to the earliest return of
// those 202s, the call widened back to the earliest lost keyed submit
// with the same key and body called before it, but for those called after
// their key was held for good (held, keysHeldFrom).
func keyedAdmits(history []porcupine.Operation, held map[string]int64) []porcupine.Operation {
	index := make(map[keyedJob]int)
	lost := make(map[string][]porcupine.Operation) // by key
	var admits []porcupine.Operation
	for _, op := range history {
		in, out := op.Input.(Input), op.Output.(Output)
		if in.Kind != SubmitKeyed {
			continue
		}
		switch out.Outcome {
		case Unknown:
			if !lostOnHeldKey(held, op) {
				lost[in.Key] = append(lost[in.Key], op)
			}
			continue
		case OK:
		default:
			continue
		}
		j := keyedJob{out.ID, in.Key}
		i, ok := index[j]
		if !ok {
			index[j] = len(admits)
			admits = append(admits, porcupine.Operation{
				ClientId: keyedClientBase + len(admits)%endClients,
				Input:    Input{Kind: KeyedAdmit, Key: in.Key, Digest: in.Digest, TaskID: in.TaskID, Value: in.Value},
				Output:   Output{Outcome: OK, ID: out.ID},
				Call:     op.Call,
				Return:   op.Return,
			})
			continue
		}
		a := &admits[i]
		if op.Call < a.Call {
			a.Call = op.Call
			a.Input = Input{Kind: KeyedAdmit, Key: in.Key, Digest: in.Digest, TaskID: in.TaskID, Value: in.Value}
		}
		a.Return = min(a.Return, op.Return)
	}
	for i := range admits {
		a := &admits[i]
		for _, l := range lost[a.Input.(Input).Key] {
			if l.Call < a.Call && l.Input.(Input).Digest == a.Input.(Input).Digest {
				a.Call = l.Call
			}
		}
	}
	return admits
}

// keysHeldFrom returns, where retained, for each key some keyed submit of
// history found held (a 202 or a 422), the earliest return of such a
// submit: the key is held for good from then on, since retention evicts
// nothing. It returns nil where retention evicts.
func keysHeldFrom(history []porcupine.Operation, retained bool) map[string]int64 {
	if !retained {
		return nil
	}
	held := make(map[string]int64)
	for _, op := range history {
		in, out := op.Input.(Input), op.Output.(Output)
		if in.Kind == SubmitKeyed && (out.Outcome == OK || out.Outcome == KeyConflict) {
			if r, ok := held[in.Key]; !ok || op.Return < r {
				held[in.Key] = op.Return
			}
		}
	}
	return held
}

// lostOnHeldKey reports whether op is a keyed submit of unknown outcome
// called after its key was held for good (held, keysHeldFrom): it created
// nothing.
func lostOnHeldKey(held map[string]int64, op porcupine.Operation) bool {
	in, out := op.Input.(Input), op.Output.(Output)
	r, ok := held[in.Key]
	return ok && in.Kind == SubmitKeyed && out.Outcome == Unknown && op.Call > r
}

// withKeyedAdmits returns history with admits added, ordered by call.
func withKeyedAdmits(history, admits []porcupine.Operation) []porcupine.Operation {
	if len(admits) == 0 {
		return history
	}
	h := slices.Concat(history, admits)
	sortByCall(h)
	return h
}

// httpKeyProjection returns the key history of k: each SubmitKeyed as a
// KeySubmit with its outcome, and, unless retained, a KeyEnd per
// KeyedAdmit from its call, or the later call of the last read that saw
// the job PENDING or RUNNING (the end came after that read), to the
// earliest return of an operation that saw the job terminal or gone (seen,
// endsSeenBy; pending forever if none did). Where retained, the lost
// submits called after their key was held for good (lostOnHeldKey) are
// left out; the second result counts them.
func httpKeyProjection(k keyedHistory, seen map[string]int64) ([]porcupine.Operation, int) {
	var p []porcupine.Operation
	left := 0
	for _, op := range k.ops {
		in, out := op.Input.(Input), op.Output.(Output)
		if in.Kind != SubmitKeyed {
			continue
		}
		if lostOnHeldKey(k.held, op) {
			left++
			continue
		}
		p = append(p, porcupine.Operation{
			ClientId: op.ClientId,
			Input:    KeyInput{Op: KeySubmit, Key: in.Key, Digest: in.Digest},
			Output:   KeyOutput{ID: out.ID, Outcome: out.Outcome},
			Call:     op.Call,
			Return:   op.Return,
		})
	}
	if k.retained || len(k.admits) == 0 {
		return p, left
	}
	liveAt := make(map[string]int64) // the last call of a read that saw the job live
	for _, op := range k.ops {
		if in, out := op.Input.(Input), op.Output.(Output); sawLive(in, out) {
			liveAt[in.ID] = max(liveAt[in.ID], op.Call)
		}
	}
	for _, a := range k.admits {
		in, out := a.Input.(Input), a.Output.(Output)
		call := max(a.Call, liveAt[out.ID])
		p = append(p, porcupine.Operation{
			ClientId: a.ClientId - endClients,
			Input:    KeyInput{Op: KeyEnd, Key: in.Key, ID: out.ID},
			Output:   KeyOutput{Outcome: OK},
			Call:     call,
			Return:   max(endSeenBy(seen, out.ID), call),
		})
	}
	return p, left
}

// HTTPKeyModel returns the per-key specification of the Idempotency-Key
// as clients of the HTTP API can check it: KeyModel's rules (clause.go's
// keyClauses but ReplayNamesHolder, which holds by construction here),
// with a replay being the 202 that names the job holding the key, and a
// submit of unknown outcome free to have created a job nobody names (see
// stepHTTPKey). With cfg.Retained, an end frees no key.
func HTTPKeyModel(cfg CheckConfig) porcupine.Model {
	return httpKeyModel(rules{retained: cfg.Retained})
}

// httpKeyModel is HTTPKeyModel with the clauses r in force.
func httpKeyModel(r rules) porcupine.Model {
	m := KeyModel
	m.Step = func(state, input, output any) (bool, any) {
		return stepHTTPKey(r, state.(keyState), input.(KeyInput), output.(KeyOutput))
	}
	m.DescribeOperation = func(input, output any) string {
		in, out := input.(KeyInput), output.(KeyOutput)
		switch {
		case in.Op == KeyEnd:
			return fmt.Sprintf("end(%s) under %q, seen by then", short(in.ID), in.Key)
		case out.Outcome == OK:
			return fmt.Sprintf("submit(%q, %s) -> 202 %s", in.Key, short(in.Digest), short(out.ID))
		}
		return fmt.Sprintf("submit(%q, %s) -> %v", in.Key, short(in.Digest), out.Outcome)
	}
	return m
}

// stepHTTPKey is one step of HTTPKeyModel. A 202 is a replay exactly when
// it names the key's holder (ids are unique), or names a new id with the
// body of an unseen holder: that job named at last, or, if the key is
// free, a new one; the state after is the same. A submit of unknown
// outcome, where the key is free, creates a job of its body held by
// unseenHolder; where it is held, it changes nothing (a replay or a
// conflict); and a submit that did nothing is placed last. An unseen
// holder has no KeyEnd (nobody can say when it ended), so it counts as
// ended from the start, free unless retention evicts nothing.
func stepHTTPKey(r rules, s keyState, in KeyInput, out KeyOutput) (bool, keyState) {
	if in.Op == KeySubmit {
		switch {
		case out.Outcome == Unknown:
			if !s.free(r) {
				return true, s
			}
			return true, keyState{Holder: unseenHolder, Digest: in.Digest, Ended: !r.retained}
		case out.Outcome == OK && s.Holder == unseenHolder && in.Digest == s.Digest:
			return true, keyState{Holder: out.ID, Digest: in.Digest}
		case out.Outcome == OK:
			out.Replayed = out.ID == s.Holder
		}
	}
	return stepKeyRules(r, s, in, out)
}

// partitionByKey splits a key history by key, in the order of first use.
func partitionByKey(history []porcupine.Operation) []jobPartition {
	index := make(map[string]int)
	var parts []jobPartition
	for _, op := range history {
		k := op.Input.(KeyInput).Key
		i, ok := index[k]
		if !ok {
			i = len(parts)
			index[k] = i
			parts = append(parts, jobPartition{ID: k})
		}
		parts[i].Ops = append(parts[i].Ops, op)
	}
	return parts
}
