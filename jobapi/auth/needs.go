package auth

import "net/http"

// A Need is what a request asks of its caller's role.
type Need int

const (
	// NeedNothing: no token (GET /healthz).
	NeedNothing Need = iota
	// NeedMetrics: /metrics, which needs a token of role metrics or
	// admin when the key set has a line of role metrics, and none
	// otherwise.
	NeedMetrics
	// NeedSubmit: the job API, every request not named here included.
	NeedSubmit
	// NeedAdmin: listing the jobs (GET /jobs), which shows every client's
	// jobs.
	NeedAdmin
)

// Needs says what r needs, by its method and path as jobapi routes them.
// An unknown route needs a token too, so that a caller without one learns
// nothing of which routes exist.
func Needs(r *http.Request) Need {
	switch r.URL.Path {
	case "/healthz":
		return NeedNothing
	case "/metrics":
		return NeedMetrics
	case "/jobs":
		if r.Method == http.MethodGet || r.Method == http.MethodHead {
			return NeedAdmin
		}
	}
	return NeedSubmit
}

// May reports whether role r may do what need asks.
func (r Role) May(need Need) bool {
	switch need {
	case NeedNothing:
		return true
	case NeedMetrics:
		return r == RoleMetrics || r == RoleAdmin
	case NeedSubmit:
		return r == RoleSubmit || r == RoleAdmin
	case NeedAdmin:
		return r == RoleAdmin
	}
	return false
}
