package main

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
)

// summary is one line on a run, for the progress log.
func (r *result) summary(w workload) string {
	per := func(n int64) float64 { return float64(n) / float64(r.jobs) }
	s := fmt.Sprintf("%d jobs in %s", r.jobs, r.elapsed.Round(time.Millisecond))
	if w.name == "latency" {
		s += fmt.Sprintf(", p50 %s ms, p99 %s ms", sig(ms(pct(r.lat, 0.50)), 2), sig(ms(pct(r.lat, 0.99)), 2))
	} else {
		s += fmt.Sprintf(", %s jobs/s", thousands(r.rate()))
	}
	return s + fmt.Sprintf(", per job %.2f WAL flushes, %.0f WAL bytes (%.2f full pages), %.2f commits, %.2f writing transactions",
		per(r.walSyncs), per(r.walBytes), per(r.walFPIs), per(r.commits), per(r.xids))
}

// report prints the tables of the outcomes: each figure the median of the
// reps with the range in brackets, or FAILED when a rep failed.
func report(w io.Writer, set settings, outs []outcome) {
	byName := map[string]outcome{}
	for _, o := range outs {
		byName[o.w.name] = o
	}
	fmt.Fprintln(w, "| workload | ours jobs/s | River jobs/s | ours/River |")
	fmt.Fprintln(w, "|---|---|---|---|")
	for _, o := range outs {
		if o.w.name == "latency" {
			continue
		}
		rate := func(r *result) float64 { return r.rate() }
		fmt.Fprintf(w, "| %s | %s | %s | %s |\n", o.w.name,
			cell(o.runs[0], rate, thousands), cell(o.runs[1], rate, thousands),
			ratioCell(o.runs[0], o.runs[1], rate, rate))
	}
	if o, ok := byName["replicas"]; ok {
		if d, ok := byName["drain"]; ok {
			rate := func(r *result) float64 { return r.rate() }
			fmt.Fprintf(w, "\nreplicas over drain (%d over 1): ours %s, River %s\n", set.replicas,
				ratioCell(o.runs[0], d.runs[0], rate, rate), ratioCell(o.runs[1], d.runs[1], rate, rate))
		}
	}
	if o, ok := byName["latency"]; ok {
		fmt.Fprintf(w, "\n| latency (%d jobs/s, %s) | ours ms | River ms | River/ours |\n", set.rate, set.duration)
		fmt.Fprintln(w, "|---|---|---|---|")
		for _, p := range []float64{0.50, 0.99} {
			f := func(r *result) float64 { return ms(pct(r.lat, p)) }
			fmt.Fprintf(w, "| p%d | %s | %s | %s |\n", int(p*100),
				cell(o.runs[0], f, func(x float64) string { return sig(x, 2) }),
				cell(o.runs[1], f, func(x float64) string { return sig(x, 2) }),
				ratioCell(o.runs[1], o.runs[0], f, f))
		}
	}
	fmt.Fprintln(w, "\nper job: WAL flushes (pg_stat_wal.wal_sync), WAL bytes (wal_bytes), commits (xact_commit, read-only ones included), writing transactions (ids assigned)")
	fmt.Fprintln(w, "| workload | flushes ours | River | WAL bytes ours | River | commits ours | River | writing ours | River |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|---|---|---|")
	perJob := func(f func(*result) int64) func(*result) float64 {
		return func(r *result) float64 { return float64(f(r)) / float64(r.jobs) }
	}
	flushes := perJob(func(r *result) int64 { return r.walSyncs })
	commits := perJob(func(r *result) int64 { return r.commits })
	xids := perJob(func(r *result) int64 { return r.xids })
	walBytes := perJob(func(r *result) int64 { return r.walBytes })
	two := func(x float64) string { return strconv.FormatFloat(x, 'f', 2, 64) }
	for _, o := range outs {
		fmt.Fprintf(w, "| %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", o.w.name,
			cell(o.runs[0], flushes, two), cell(o.runs[1], flushes, two),
			cell(o.runs[0], walBytes, thousands), cell(o.runs[1], walBytes, thousands),
			cell(o.runs[0], commits, two), cell(o.runs[1], commits, two),
			cell(o.runs[0], xids, two), cell(o.runs[1], xids, two))
	}
	for _, o := range outs {
		for _, err := range o.errs {
			fmt.Fprintln(w, "FAILED:", err)
		}
	}
}

// cell is the median of f over the runs, with the range in brackets, each
// formatted by format; FAILED when a run failed.
func cell(runs []*result, f func(*result) float64, format func(float64) string) string {
	var xs []float64
	for _, r := range runs {
		if r == nil {
			return "FAILED"
		}
		xs = append(xs, f(r))
	}
	return spread(xs, format)
}

// ratioCell is the ratio fa(a) / fb(b) of the runs of each rep, as cell
// gives it, two significant digits.
func ratioCell(a, b []*result, fa, fb func(*result) float64) string {
	if len(a) != len(b) {
		return "FAILED"
	}
	var xs []float64
	for i := range a {
		if a[i] == nil || b[i] == nil {
			return "FAILED"
		}
		xs = append(xs, fa(a[i])/fb(b[i]))
	}
	return spread(xs, func(x float64) string { return sig(x, 2) })
}

// spread is "median [min-max]" of xs, or the one value.
func spread(xs []float64, format func(float64) string) string {
	if len(xs) == 0 {
		return "FAILED"
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	var med float64
	if n := len(s); n%2 == 1 {
		med = s[n/2]
	} else {
		med = (s[n/2-1] + s[n/2]) / 2
	}
	if len(s) == 1 {
		return format(med)
	}
	return fmt.Sprintf("%s [%s-%s]", format(med), format(s[0]), format(s[len(s)-1]))
}

// pct is the p-th quantile of ds by nearest rank; zero for none.
func pct(ds []time.Duration, p float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	i := int(math.Ceil(p*float64(len(s)))) - 1
	return s[max(i, 0)]
}

// ms is d in milliseconds.
func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// sig is x rounded to n significant digits, without an exponent.
func sig(x float64, n int) string {
	if x == 0 || math.IsInf(x, 0) || math.IsNaN(x) {
		return strconv.FormatFloat(x, 'f', 0, 64)
	}
	digits := n - 1 - int(math.Floor(math.Log10(math.Abs(x))))
	if digits <= 0 {
		return thousands(x)
	}
	return strconv.FormatFloat(x, 'f', digits, 64)
}

// thousands is x rounded to an integer, with commas between thousands.
func thousands(x float64) string {
	s := strconv.FormatInt(int64(math.Round(x)), 10)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}
