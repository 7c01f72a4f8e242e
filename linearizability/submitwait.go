package linearizability

import "github.com/anishathalye/porcupine"

// POST /jobs with Prefer: wait=N (a SubmitWait) is two things at once: the
// admission of a job, as a plain POST, and the server's wait on it, which
// starts after the admission and may see the job end. One porcupine
// operation has one linearization point, so CheckHTTP gives the models
// two: the SubmitWait itself, which admits the job (from its call to its
// return), and a derived SubmitWaitRead of that job, what the wait saw:
//
//   - a 200 (outcome OK) saw the job terminal: the read is the terminal
//     view or the result the reply carried, anywhere from the call to the
//     return (after the admission, which the job model requires);
//   - a 202 after a wait of A (outcome Deadline, Waited A > 0) saw the job
//     not terminal when the wait ran out. The server starts the wait after
//     the call, so the read is placed from call + A to the return, as the
//     recorder places a GET wait's timeout. Where that interval would be
//     empty (a reply before the wait could have run out: the server cut
//     the wait short, as its shutdown does), from the call;
//   - a 202 with no wait applied (Waited 0) is a plain 202: no read.
//
// The server also answers 202 when the job was evicted before its wait
// began (it ended, and retention dropped it, between the admission and
// the wait): the job model allows that branch (the job is then gone), and
// the admission model, which cannot tell it from a live job, uses the
// read only where retention evicts nothing (CheckConfig.Retained).

// submitWaitRead returns the read derived from op, and whether there is
// one: op is a SubmitWait that admitted a job (OK, or Deadline after a
// wait).
func submitWaitRead(op porcupine.Operation) (porcupine.Operation, bool) {
	in, out := op.Input.(Input), op.Output.(Output)
	if in.Kind != SubmitWait || out.Outcome != OK && (out.Outcome != Deadline || out.Waited <= 0) {
		return porcupine.Operation{}, false
	}
	read := op
	read.Input = Input{Kind: SubmitWaitRead, ID: out.ID}
	if out.Outcome == Deadline && out.Waited <= op.Return-op.Call {
		read.Call = op.Call + out.Waited
	}
	return read, true
}

// withSubmitWaitReads returns history with the read of each SubmitWait
// that admitted a job added after it (for the job model).
func withSubmitWaitReads(history []porcupine.Operation) []porcupine.Operation {
	out := make([]porcupine.Operation, 0, len(history))
	for _, op := range history {
		out = append(out, op)
		if read, ok := submitWaitRead(op); ok {
			out = append(out, read)
		}
	}
	return out
}

// admitted reports whether op admitted a job: a plain POST /jobs's 202, a
// SubmitWait's 200 or 202, or the KeyedAdmit derived for a job that keyed
// 202s name (a keyed 202 itself may be a replay: httpkeys.go); the job is
// out.ID.
func admitted(in Input, out Output) bool {
	switch in.Kind {
	case Submit, KeyedAdmit:
		return out.Outcome == OK
	case SubmitWait:
		return out.Outcome == OK || out.Outcome == Deadline
	}
	return false
}

// jobOf returns the job op names: the id a POST (or a KeyedAdmit)
// returned, else the id it names.
func jobOf(in Input, out Output) string {
	if in.Kind.posts() || in.Kind == KeyedAdmit {
		return out.ID
	}
	return in.ID
}
