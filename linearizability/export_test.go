package linearizability

// The admission decision's internals, for the external tests and the
// benchmark that run it on histories recorded by package stress: stress
// imports this package, so only the external test package can import it.
var (
	DecideAdmission         = decideAdmission
	AdmissionProjection     = admissionProjection
	HTTPAdmissionProjection = httpAdmissionProjection
	SortByCall              = sortByCall
	Differential            = differential
	Prefixes                = prefixes
)

// WindowOps is windowOps.
const WindowOps = windowOps

// DiffCounts tallies a differential run (Differential).
type DiffCounts = diffCounts
