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
//     refusal at the bound. A replay and a KeyConflict take no slot and
//     create nothing: neither model is given them;
//   - for KeyModel, partitioned by key, the key history: each SubmitKeyed
//     as a KeySubmit, with its id, Replayed and outcome, and, for each job
//     a keyed submit created, each terminal call on it that may have won
//     (OK, or of unknown outcome) as a KeyEnd over the same interval: the
//     job's end, after which retention may evict it and free its key.

// tableKeyed returns the history the job and admission models check (the
// keyed submits made Submits, or left out), the key history, and the
// number of jobs a keyed submit created.
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
			if out.Outcome == KeyConflict || out.Outcome == OK && out.Replayed {
				continue
			}
			in.Kind = Submit
			op.Input = in
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
