package linearizability

import "github.com/anishathalye/porcupine"

// withoutUnknownOps returns history without the operations that
// HTTPJobModel accepts in every state and that change no state: those of
// unknown outcome that are not POSTs of a job (reads and cancels whose
// reply was lost in a kill, or that the client could not read). Such an operation constrains nothing, so a
// history is linearizable with it exactly when it is without it: drop it
// from a linearization and every other step stays legal; put it back
// anywhere in its interval and it is legal there too.
//
// Left in, they cost porcupine dearly: an operation in flight at a kill is
// pending forever, so it may be placed anywhere after its call, and every
// subset of such operations already placed is a state of the search of
// its job (2^k for k of them on one job). An unknown POST names no job
// and is in no job's partition, and is kept. The admission model never
// had these reads and cancels (its projection keeps POSTs and the reads
// that bound an end); an unknown POST only stops it checking the 429s
// called after it.
//
// The second result is how many were left out.
func withoutUnknownOps(history []porcupine.Operation) ([]porcupine.Operation, int) {
	kept := make([]porcupine.Operation, 0, len(history))
	for _, op := range history {
		if !op.Input.(Input).Kind.posts() && op.Output.(Output).Outcome == Unknown {
			continue
		}
		kept = append(kept, op)
	}
	return kept, len(history) - len(kept)
}
