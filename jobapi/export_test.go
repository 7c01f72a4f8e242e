package jobapi

// Hooks for this package's external tests.

// Waiting returns the number of clients blocked in a wait.
func Waiting(s *Server) int64 { return s.waiting.Load() }

// Routes returns each route's pattern and methods.
func Routes(s *Server) map[string][]string {
	out := map[string][]string{}
	for _, rt := range s.routeTable() {
		for m := range rt.methods {
			out[rt.pattern] = append(out[rt.pattern], m)
		}
	}
	return out
}

// ErrJobEnded is the cause given to the model's context of a job that
// ended on another replica (shared mode).
var ErrJobEnded = errJobEnded

// EndsHeard returns the number of ends the store's OnEnd told s of that
// s took in (shared mode).
func EndsHeard(s *Server) uint64 { return s.exec.endCount() }

// RetryBackoff is the pause before retry n of a write the store failed.
var RetryBackoff = retryBackoff

// WithoutReplyBudget makes s write result replies with no budget, as it
// did before it had one: the baseline of BenchmarkResultRead.
func WithoutReplyBudget(s *Server) { s.replyBytes = unbounded{} }

// unbounded is a byteBudget that never refuses.
type unbounded struct{}

func (unbounded) TryAcquire(int64) bool { return true }
func (unbounded) Release(int64)         {}
