package fuzz

// input reads a fuzz input one byte at a time. Past the end it reads zeros,
// so every input, even an empty one, decodes to something.
type input struct {
	data []byte
	pos  int
}

// more reports whether unread bytes remain.
func (in *input) more() bool { return in.pos < len(in.data) }

// byte returns the next byte, or 0 past the end.
func (in *input) byte() byte {
	if in.pos >= len(in.data) {
		return 0
	}
	b := in.data[in.pos]
	in.pos++
	return b
}

// intn returns the next byte reduced to [0, n).
func (in *input) intn(n int) int { return int(in.byte()) % n }
