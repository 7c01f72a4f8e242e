package linearizability

import "github.com/anishathalye/porcupine"

// Idempotency keys at the table level. The table's SubmitKeyed says
// whether it replayed the job that holds its key (Output.Replayed), so
// Check needs no inference to tell a creation from a replay, as CheckHTTP
// does (httpkeys.go). From the recorded SubmitKeyed operations it derives
// (tableKeyed):
//
//   - for JobModel and AdmissionModel, each keyed creation, and each keyed
//     QueueFull or submit of unknown outcome, as the Submit it is: a
//     keyed creation admits and creates its job, a keyed QueueFull is a
//     refusal at the bound;
//   - for JobModel alone, each replay as it is, a SubmitKeyed that reads
//     the job it names (jobKey): legal only on a job submitted and not
//     found gone, created with the replay's task id and request. A replay
//     takes no slot, and AdmissionModel's projection leaves it out; a
//     KeyConflict names no job and changes none: neither model is given
//     it;
//   - for KeyModel, partitioned by key, the key history: each SubmitKeyed
//     as a KeySubmit, with its id, Replayed and outcome, and, for each job
//     a keyed submit created, each terminal call on it that may have won
//     (OK, or of unknown outcome) as a KeyEnd over the same interval: the
//     job's end, after which retention may evict it and free its key.

// tableKeyed returns the history the job and admission models check (the
// keyed creations and refusals made Submits, the replays kept, the
// conflicts left out), the key history, and the number of jobs a keyed
// submit created.
func tableKeyed(history []porcupine.Operation) (jobs, keys []porcupine.Operation, created int) {
	if !hasKind(history, SubmitKeyed) {
		return history, nil, 0
	}
	keyOf := make(map[string]string) // keyed job -> its key
	for _, op := range history {
		in, out := op.Input.(Input), op.Output.(Output)
		if in.Kind == SubmitKeyed && out.Outcome == OK && !out.Replayed {
			keyOf[out.ID] = in.Key
		}
	}
	jobs = make([]porcupine.Operation, 0, len(history))
	for _, op := range history {
		in, out := op.Input.(Input), op.Output.(Output)
		switch {
		case in.Kind == SubmitKeyed:
			keys = append(keys, keySubmitOf(op))
			switch {
			case out.Outcome == KeyConflict:
				continue
			case out.Outcome == OK && out.Replayed:
				// A read of the job it names, as it is.
			default:
				in.Kind = Submit
				op.Input = in
			}
		case in.Kind.Terminal() && (out.Outcome == OK || out.Outcome == Unknown) && keyOf[in.ID] != "":
			end := op
			end.Input = KeyInput{Op: KeyEnd, Key: keyOf[in.ID], ID: in.ID}
			end.Output = KeyOutput{Outcome: OK}
			keys = append(keys, end)
		}
		jobs = append(jobs, op)
	}
	return jobs, keys, len(keyOf)
}

// keySubmitOf is the KeySubmit of a recorded SubmitKeyed.
func keySubmitOf(op porcupine.Operation) porcupine.Operation {
	in, out := op.Input.(Input), op.Output.(Output)
	op.Input = KeyInput{Op: KeySubmit, Key: in.Key, Digest: in.Digest}
	op.Output = KeyOutput{ID: out.ID, Replayed: out.Replayed, Outcome: out.Outcome}
	return op
}

// hasKind reports whether history holds an operation of kind k.
func hasKind(history []porcupine.Operation, k Kind) bool {
	for _, op := range history {
		if op.Input.(Input).Kind == k {
			return true
		}
	}
	return false
}
