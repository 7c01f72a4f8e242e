package benchcmp

// What a side leaves behind when its chunk ends (garbage the collector has
// yet to take, a goroutine still finishing, a connection's buffered work)
// is paid by the side that runs next. In a fixed order that is always the
// same side: with two sides, each always pays the other's leftovers and
// never its own, so a side that leaves more behind looks faster than it is
// and its baseline slower. The order is therefore reversed every other
// round: with two sides, A B B A A B ..., each side follows itself as often
// as it follows the other, and both pay the same mix. With more sides, each
// follows the sides beside it in the list (the first and the last follow
// themselves in place of the missing neighbour) once every two rounds, so
// a caller puts next to each other the sides whose figures it compares.

// sideAt is the index in the caller's list of the side that runs k-th in
// round of a comparison of n sides: the list's order in even rounds, the
// reverse in odd ones.
func sideAt(round, k, n int) int {
	if round%2 == 1 {
		return n - 1 - k
	}
	return k
}
