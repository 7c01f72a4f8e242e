package linearizability

import "github.com/anishathalye/porcupine"

// The admission decision's internals, for the external tests and the
// benchmark that run it on histories recorded by package stress: stress
// imports this package, so only the external test package can import it.
var (
	DecideAdmission     = decideAdmission
	AdmissionProjection = func(history []porcupine.Operation) []porcupine.Operation {
		// As Check projects it: keyed creations and refusals as submits.
		jobs, _, _ := tableKeyed(history)
		return admissionProjection(jobs)
	}
	HTTPAdmissionProjection = func(history []porcupine.Operation, retained bool) []porcupine.Operation {
		// As CheckHTTP projects it: with the KeyedAdmit of each keyed job.
		return httpAdmissionProjection(deriveKeyed(history, retained), endsSeenBy(history))
	}
	SortByCall   = sortByCall
	Differential = differential
	Prefixes     = prefixes
)

// KeyClauses names KeyModel's clauses (keyClauses), in order.
var KeyClauses = func() []string {
	names := make([]string, len(keyClauses))
	for i, c := range keyClauses {
		names[i] = c.Name
	}
	return names
}()

// KeyModelWithout is KeyModel with its clause c (an index of KeyClauses)
// removed.
func KeyModelWithout(c int) porcupine.Model {
	m := KeyModel
	r := rules{}.without(clauseID(c))
	m.Step = func(state, input, output any) (bool, any) {
		return stepKeyRules(r, state.(keyState), input.(KeyInput), output.(KeyOutput))
	}
	return m
}

// WindowOps is windowOps.
const WindowOps = windowOps

// DiffCounts tallies a differential run (Differential).
type DiffCounts = diffCounts
