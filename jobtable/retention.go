package jobtable

// Retention keeps terminal jobs so that their outcome can still be read, and
// bounds them lazily: Submit evicts, nothing else does and no goroutine runs
// in the background. Terminal jobs sit in an intrusive list in the order they
// completed; each is evicted once, from the front, so eviction is amortised
// O(1) per Submit whatever the number of retained jobs.

// retainLocked appends the newly terminal job j to the retention list.
// t.mu must be held.
func (t *Table[Req, Res]) retainLocked(j *job[Req, Res]) {
	j.prev, j.next = t.tail, nil
	if t.tail != nil {
		t.tail.next = j
	} else {
		t.head = j
	}
	t.tail = j
	t.retained++
}

// unlinkLocked removes j from the retention list.
// t.mu must be held and j must be on the list.
func (t *Table[Req, Res]) unlinkLocked(j *job[Req, Res]) {
	if j.prev != nil {
		j.prev.next = j.next
	} else {
		t.head = j.next
	}
	if j.next != nil {
		j.next.prev = j.prev
	} else {
		t.tail = j.prev
	}
	j.prev, j.next = nil, nil
	t.retained--
}

// evictFrontLocked removes the least recently completed job from the table.
// t.mu must be held and the retention list must not be empty.
func (t *Table[Req, Res]) evictFrontLocked() {
	j := t.head
	t.unlinkLocked(j)
	delete(t.jobs, j.id)
}
