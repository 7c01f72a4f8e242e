//go:build mutant_d2

package jobtable

import "unsafe"

// Mutant D2, the seed's unsynchronised queue-depth read: the queue-full
// check reads depth as a plain int, racing with every atomic update.
func (t *Table[Req, Res]) admit() bool {
	limit := int32(max(t.cfg.MaxQueue, 0))
	for {
		d := *(*int32)(unsafe.Pointer(&t.depth))
		if d >= limit {
			return false
		}
		if t.depth.CompareAndSwap(d, d+1) {
			return true
		}
	}
}
