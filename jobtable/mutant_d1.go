//go:build mutant_d1

package jobtable

// Mutant D1, the seed's cross-mutex data race: snapshot reads the payload
// without the job lock, so it races with the transition that writes it and
// can pair a terminal state with a payload from before the transition.
func (j *job[Req, Res]) snapshot() Snapshot {
	s := Snapshot{
		ID:          j.id,
		TaskID:      j.taskID,
		Err:         j.err,
		CreatedAt:   j.createdAt,
		StartedAt:   j.startedAt,
		CompletedAt: j.completedAt,
	}
	s.State = j.loadState()
	return s
}
