package jobapi

import "math"

// Request bodies are read into memory whole, so each route that reads one
// takes its share of a byte budget first, before a byte of the body is
// read, and answers 503 with Retry-After when the share does not fit. A
// byte budget rather than a count lets many small requests through at once
// while large ones are shed.

// inferBudget is the byte budget of /infer bodies in flight: workers x
// max_body_bytes, what the workers could be running at once. A request
// holds its share until its reply.
//
// Without it every /infer read its body before waiting for a worker, so
// 150 concurrent 8 MB requests held 2.8 GB and starved /metrics. The bound
// is not the worker pool itself: a slow upload holding a worker would
// stall the async jobs sharing it.
func inferBudget(cfg Config) int64 {
	return budget(int64(cfg.Workers), cfg.MaxBodyBytes)
}

// submitBudget is the byte budget of POST /jobs bodies being read:
// max(async_max_queue, 1) x max_body_bytes, what the queue could admit at
// once. A request holds its share until it is admitted or refused; an
// admitted request is then bounded by the queue itself.
//
// Without it any number of submissions could be read at once before the
// queue check answered 429, as /infer could before its budget.
func submitBudget(cfg Config) int64 {
	return budget(int64(max(cfg.AsyncMaxQueue, 1)), cfg.MaxBodyBytes)
}

// budget is n x maxBody, saturating.
func budget(n, maxBody int64) int64 {
	if maxBody > math.MaxInt64/n {
		return math.MaxInt64
	}
	return n * maxBody
}

// bodyCharge is the share of a budget that a request of Content-Length n
// takes before its body is read: n, at least 1, or maxBody when n is
// unknown (-1) or larger (the body will get a 413 after maxBody bytes).
func bodyCharge(n, maxBody int64) int64 {
	if n < 0 || n > maxBody {
		return maxBody
	}
	return max(n, 1)
}
