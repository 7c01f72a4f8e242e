package console

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestSeriesKeepsTheWindowAndOneBefore(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	s := series{window: 30 * time.Second}
	for i := range 10 {
		s.add(sample{at: t0.Add(time.Duration(i) * 10 * time.Second), submitted: uint64(i * 20)})
	}
	require.Len(t, s.samples, 4, "30 s back from the last, and the one just before")
	require.Equal(t, t0.Add(60*time.Second), s.samples[0].at)
	rates := s.rates(func(x sample) uint64 { return x.submitted })
	require.Len(t, rates, 3)
	for _, p := range rates {
		require.InDelta(t, 2.0, p.rate, 1e-9)
	}

	s.add(sample{at: t0, submitted: 5}) // the clock went back
	require.Len(t, s.samples, 1)
	require.Empty(t, s.rates(func(x sample) uint64 { return x.submitted }))
}

func TestRatesNeverNegative(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	s := series{window: time.Minute}
	s.add(sample{at: t0, done: 10})
	s.add(sample{at: t0.Add(time.Second), done: 4})
	require.Equal(t, []point{{at: t0.Add(time.Second), rate: 0}}, s.rates(func(x sample) uint64 { return x.done }))
}

func TestPlotLayout(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 5, 0, 0, time.UTC)
	p := newPlot("a", "A", []point{{at: now.Add(-5 * time.Minute), rate: 0}, {at: now.Add(-150 * time.Second), rate: 4},
		{at: now, rate: 2.5}}, now, 5*time.Minute)
	require.Equal(t, "0.0,59.0 150.0,1.0 300.0,22.8", p.Points, "x by time, y from 0 at the bottom to the peak at the top")
	require.Equal(t, "2.5/s", p.Latest)
	require.Equal(t, "4/s", p.Peak)
	require.True(t, newPlot("b", "B", nil, now, time.Minute).Empty)
}
