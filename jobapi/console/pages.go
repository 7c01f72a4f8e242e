package console

import (
	"bytes"
	"errors"
	"fmt"
	"html/template"
	"io/fs"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/jobledger/jobledger/ledger/ledgertype"
	"github.com/jobledger/jobledger/wire"
)

// The listing's page sizes, and how many pages of one state the overview
// walks to count it.
const (
	pageSize   = 20
	countPages = 5
	countLimit = 100 // ledger.MaxListLimit
)

// parsePages parses each page's template with the layout.
func parsePages() (map[string]*template.Template, error) {
	funcs := template.FuncMap{"when": formatTime, "jobURL": jobURL, "stateClass": stateClass}
	layout, err := template.New("layout").Funcs(funcs).ParseFS(assets, "assets/layout.html")
	if err != nil {
		return nil, err
	}
	names, err := fs.Glob(assets, "assets/page-*.html")
	if err != nil {
		return nil, err
	}
	pages := map[string]*template.Template{}
	for _, n := range names {
		t, err := template.Must(layout.Clone()).ParseFS(assets, n)
		if err != nil {
			return nil, err
		}
		pages[n[len("assets/page-"):len(n)-len(".html")]] = t
	}
	return pages, nil
}

// page is what every page's layout reads.
type page struct {
	Title   string
	Nav     string        // the section the page belongs to: "overview" or "jobs"
	Refresh time.Duration // > 0: the script refreshes the page's live parts
	Data    any
}

// render writes the page name with status.
func (c *Console) render(w http.ResponseWriter, r *http.Request, status int, name string, p page) {
	var buf bytes.Buffer
	if err := c.pages[name].ExecuteTemplate(&buf, "page", p); err != nil {
		c.opts.Logger.Error("console: rendering a page", "page", name, "error", err)
		http.Error(w, "the console could not render this page", http.StatusInternalServerError)
		return
	}
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	if r.Method != http.MethodHead {
		w.Write(buf.Bytes()) // the client went away
	}
}

// fail answers with the error page.
func (c *Console) fail(w http.ResponseWriter, r *http.Request, status int, msg string) {
	c.render(w, r, status, "error", page{Title: http.StatusText(status), Data: msg})
}

// failAPI answers a request whose call to the API failed.
func (c *Console) failAPI(w http.ResponseWriter, r *http.Request, err error) {
	if ae, ok := errors.AsType[*apiError](err); ok {
		c.fail(w, r, ae.status, ae.Error())
		return
	}
	c.fail(w, r, http.StatusBadGateway, "The job API could not be read: "+err.Error())
}

// stateCount is one state's count on the overview.
type stateCount struct {
	State string
	Count string // "12", or "500+" when there were more than were counted
	Err   string
}

// overviewData is the overview's.
type overviewData struct {
	Counts     []stateCount
	ServerWide bool
	Store      string
	Queue      queueBar
	Workers    queueBar
	Plots      []plot
	Window     string
	Retained   int
	Shared     bool
	Health     string
	Healthy    bool
	Listener   string
	Shutdown   bool
	Totals     map[string]uint64
	Replica    string
	Leases     []leaseRow
	LeasesErr  string
}

// leaseRow is one replica's leases on the overview.
type leaseRow struct {
	Replica, Next string
	Jobs          int
	Lapsed, This  bool
}

// queueBar is a bar of used against bound.
type queueBar struct {
	Used, Bound int
	Width       string // the used part's width in the bar's 100 units
}

func newBar(used, bound int) queueBar {
	w := 0.0
	if bound > 0 {
		w = min(100, 100*float64(used)/float64(bound))
	}
	return queueBar{Used: used, Bound: bound, Width: strconv.FormatFloat(w, 'f', 1, 64)}
}

// overview is GET /console: counts by state and the server-wide figures.
func (c *Console) overview(w http.ResponseWriter, r *http.Request) {
	d := overviewData{}
	for _, st := range ledgertype.States() {
		d.Counts = append(d.Counts, c.countState(r, st.String()))
	}
	if c.opts.ServerWide == nil || c.opts.ServerWide(r) {
		o := c.opts.Overview()
		now := c.opts.Now()
		d.ServerWide, d.Store, d.Retained, d.Shared, d.Shutdown = true, c.opts.Store, o.Retained, o.Shared, o.ShuttingDown
		d.Queue, d.Workers = newBar(o.Depth, o.MaxQueue), newBar(o.Busy, o.Workers)
		d.Health, d.Healthy, d.Listener = "writes commit", o.StoreError == "", o.Listener
		if o.StoreError != "" {
			d.Health = o.StoreError
		}
		d.Totals = map[string]uint64{"submitted": o.Submitted, "rejected": o.Rejected,
			"done": o.Done, "failed": o.Failed + o.TimedOut}
		d.Window = formatWindow(c.opts.Window)
		d.Replica = c.opts.Replica
		if o.Shared && c.opts.Leases != nil {
			d.Leases, d.LeasesErr = c.leases(r)
		}
		c.mu.Lock()
		for _, s := range []struct {
			id, title string
			pick      func(sample) uint64
		}{
			{"admitted", "Admitted", func(x sample) uint64 { return x.submitted }},
			{"rejected", "Refused, queue full (429)", func(x sample) uint64 { return x.rejected }},
			{"done", "Completed (DONE)", func(x sample) uint64 { return x.done }},
			{"failed", "Failed or timed out", func(x sample) uint64 { return x.failed }},
		} {
			d.Plots = append(d.Plots, newPlot(s.id, s.title, c.hist.rates(s.pick), now, c.opts.Window))
		}
		c.mu.Unlock()
	}
	c.render(w, r, http.StatusOK, "overview", page{Title: "Overview", Nav: "overview", Refresh: c.opts.Refresh, Data: d})
}

// leases reads the replicas' leases for the overview, or says why not.
func (c *Console) leases(r *http.Request) ([]leaseRow, string) {
	report, err := c.opts.Leases(r.Context())
	if err != nil {
		return nil, err.Error()
	}
	rows := make([]leaseRow, 0, len(report))
	for _, l := range report {
		rows = append(rows, leaseRow{Replica: l.Replica, Jobs: l.Jobs, Next: formatTime(l.Next),
			Lapsed: l.Lapsed, This: l.Replica == c.opts.Replica})
	}
	return rows, ""
}

// countState counts the jobs in state st through GET /jobs, up to
// countPages pages.
func (c *Console) countState(r *http.Request, st string) stateCount {
	sc := stateCount{State: st}
	n, cursor := 0, ""
	for range countPages {
		q := url.Values{"state": {st}, "limit": {strconv.Itoa(countLimit)}}
		if cursor != "" {
			q.Set("cursor", cursor)
		}
		var pg wire.Page
		if err := c.getJSON(r, "/jobs?"+q.Encode(), &pg); err != nil {
			sc.Err = err.Error()
			return sc
		}
		n += len(pg.Jobs)
		cursor = pg.NextCursor
		if cursor == "" {
			sc.Count = strconv.Itoa(n)
			return sc
		}
	}
	sc.Count = strconv.Itoa(n) + "+"
	return sc
}

// formatWindow writes the plots' window in words: "5 minutes".
func formatWindow(d time.Duration) string {
	switch {
	case d%time.Minute == 0 && d > time.Minute:
		return fmt.Sprintf("%d minutes", d/time.Minute)
	case d == time.Minute:
		return "minute"
	case d%time.Second == 0 && d < time.Minute:
		return fmt.Sprintf("%d seconds", d/time.Second)
	}
	return d.String()
}

// jobURL is the console's page of job id.
func jobURL(id string) string { return Prefix + "/jobs/" + url.PathEscape(id) }

// formatTime writes t in UTC to the second, or "—" for the zero time.
func formatTime(t time.Time) string {
	if t.IsZero() {
		return "—"
	}
	return t.UTC().Format("2006-01-02 15:04:05.000 UTC")
}

// stateClass is the CSS class of a state's badge.
func stateClass(st any) string {
	if s, ok := ledgertype.ParseState(fmt.Sprint(st)); ok {
		return "state-" + s.String()
	}
	return "state-unknown"
}
