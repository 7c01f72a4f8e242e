//go:build !mutant_d2 && !mutant_d3

package jobtable

// admit takes one slot of MaxQueue. The check and the increment are one
// compare-and-swap, so two submitters can never both take the last slot
// (D3), and depth is never read unsynchronised (D2).
//
// Spec actions: SubmitLoad, SubmitCAS.
func (t *Table[Req, Res]) admit() bool {
	limit := int32(max(t.cfg.MaxQueue, 0))
	for {
		d := t.depth.Load()
		if d >= limit {
			return false
		}
		if t.depth.CompareAndSwap(d, d+1) {
			return true
		}
	}
}
