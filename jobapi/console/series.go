package console

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// sample is the server's counters at one moment (jobapi.Overview's).
type sample struct {
	at                  time.Time
	submitted, rejected uint64
	done, failed        uint64 // failed counts FAILED and TIMEOUT
}

// series keeps the samples of the last window, oldest first, and one
// older, from which the first rate is taken. It is not safe for concurrent
// use; Console guards it.
type series struct {
	window  time.Duration
	samples []sample
}

// add appends x. A sample no later than the last one (a clock that went
// back) starts the series again.
func (s *series) add(x sample) {
	if n := len(s.samples); n > 0 && !x.at.After(s.samples[n-1].at) {
		s.samples = s.samples[:0]
	}
	s.samples = append(s.samples, x)
	cut := 0
	for cut+1 < len(s.samples) && !s.samples[cut+1].at.After(x.at.Add(-s.window)) {
		cut++
	}
	s.samples = append(s.samples[:0], s.samples[cut:]...)
}

// point is one rate: per second over the interval that ends at at.
type point struct {
	at   time.Time
	rate float64
}

// rates returns the rate of the counter pick reads, between each sample
// and the one before. A counter that went down (it never does within a
// process) counts as no change.
func (s *series) rates(pick func(sample) uint64) []point {
	var out []point
	for i := 1; i < len(s.samples); i++ {
		a, b := s.samples[i-1], s.samples[i]
		var d uint64
		if pick(b) > pick(a) {
			d = pick(b) - pick(a)
		}
		out = append(out, point{at: b.at, rate: float64(d) / b.at.Sub(a.at).Seconds()})
	}
	return out
}

// Plot geometry: the drawing's viewBox, in its own units.
const plotW, plotH = 300, 60

// plot is one small time plot of a rate, ready for the template.
type plot struct {
	ID, Title string
	Points    string // the polyline's points, "x,y x,y ..."
	Latest    string // the last rate, "1.5/s"
	Peak      string // the highest rate in the window
	Empty     bool   // fewer than two samples: nothing to draw yet
}

// newPlot lays out pts over the window that ends at now: x by time, y from
// 0 at the bottom to the peak (at least 1/s) at the top.
func newPlot(id, title string, pts []point, now time.Time, window time.Duration) plot {
	p := plot{ID: id, Title: title, Empty: len(pts) == 0, Latest: "0/s", Peak: "0/s"}
	if p.Empty {
		return p
	}
	peak := 1.0
	for _, q := range pts {
		peak = max(peak, q.rate)
	}
	start := now.Add(-window)
	var b strings.Builder
	for i, q := range pts {
		x := float64(plotW) * q.at.Sub(start).Seconds() / window.Seconds()
		x = min(max(x, 0), plotW)
		y := plotH - float64(plotH-2)*q.rate/peak - 1
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(strconv.FormatFloat(x, 'f', 1, 64) + "," + strconv.FormatFloat(y, 'f', 1, 64))
	}
	p.Points = b.String()
	p.Latest = formatRate(pts[len(pts)-1].rate)
	top := 0.0
	for _, q := range pts {
		top = max(top, q.rate)
	}
	p.Peak = formatRate(top)
	return p
}

// formatRate writes a rate per second with at most one decimal.
func formatRate(r float64) string {
	if r == float64(int64(r)) {
		return fmt.Sprintf("%d/s", int64(r))
	}
	return strconv.FormatFloat(r, 'f', 1, 64) + "/s"
}
