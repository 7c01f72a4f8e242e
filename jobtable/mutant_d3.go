//go:build mutant_d3

package jobtable

import "runtime"

// Mutant D3, the seed's TOCTOU on admission: the queue-full check and the
// increment are two steps, so two submitters can both pass the check for
// the last slot. The yield stands for a preemption between the two steps;
// it widens the window so that a short run shows what a long one would.
//
// Spec: the D3 variant, SubmitLoad then SubmitIncrement.
func (t *Table[Req, Res]) admit() bool {
	if t.depth.Load() >= int32(max(t.cfg.MaxQueue, 0)) {
		return false
	}
	runtime.Gosched()
	t.depth.Add(1)
	return true
}
