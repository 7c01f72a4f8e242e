package lossyfs

// spans is a set of byte ranges [off, end) of a file, sorted, neither
// overlapping nor touching: the ranges written since the file's last fsync.
type spans []span

type span struct{ off, end int64 }

// add returns the set with [off, end) added, merging the ranges it meets.
func (s spans) add(off, end int64) spans {
	if end <= off {
		return s
	}
	i := 0
	for i < len(s) && s[i].end < off {
		i++
	}
	j := i
	for j < len(s) && s[j].off <= end {
		off, end = min(off, s[j].off), max(end, s[j].end)
		j++
	}
	out := append(s[:i:i], span{off, end})
	return append(out, s[j:]...)
}
