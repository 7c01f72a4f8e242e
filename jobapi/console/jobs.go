package console

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/jobledger/jobledger/ledger/ledgertype"
	"github.com/jobledger/jobledger/wire"
)

// The pages of the jobs: the listing, a job's page, and the cancel with its
// confirmation. Each is a call of the job API on the caller's behalf.

// jobsData is the listing's.
type jobsData struct {
	States []string
	State  string
	TaskID string
	Jobs   []wire.Snapshot
	Next   string // the next page's URL, "" on the last
	First  string // the first page's URL, "" on the first
}

// jobs is GET /console/jobs?state=&task_id=&cursor=: a page of GET /jobs.
// An empty task_id, as an empty field of the form sends, filters nothing.
func (c *Console) jobs(w http.ResponseWriter, r *http.Request) {
	in := r.URL.Query()
	d := jobsData{State: in.Get("state"), TaskID: in.Get("task_id")}
	for _, st := range ledgertype.States() {
		d.States = append(d.States, st.String())
	}
	filter := url.Values{}
	if d.State != "" {
		filter.Set("state", d.State)
	}
	if d.TaskID != "" {
		filter.Set("task_id", d.TaskID)
	}
	q := url.Values{"limit": {strconv.Itoa(pageSize)}}
	for k, v := range filter {
		q[k] = v
	}
	if cur := in.Get("cursor"); cur != "" {
		q.Set("cursor", cur)
		d.First = Prefix + "/jobs?" + filter.Encode()
	}
	var pg wire.Page
	if err := c.getJSON(r, "/jobs?"+q.Encode(), &pg); err != nil {
		c.failAPI(w, r, err)
		return
	}
	d.Jobs = pg.Jobs
	if pg.NextCursor != "" {
		next := url.Values{"cursor": {pg.NextCursor}}
		for k, v := range filter {
			next[k] = v
		}
		d.Next = Prefix + "/jobs?" + next.Encode()
	}
	c.render(w, r, http.StatusOK, "jobs", page{Title: "Jobs", Nav: "jobs", Data: d})
}

// jobData is a job page's.
type jobData struct {
	Job     wire.Snapshot
	Live    bool
	Result  string // the result, indented, when DONE
	Cut     bool   // the result was too long to show whole
	Notice  string
	Confirm bool // the cancel's confirmation
}

// notices are the messages a job page shows after a cancel, by the
// notice parameter of its URL.
var notices = map[string]string{
	"canceled": "The job was canceled.",
	"ended":    "The job had already ended; nothing was canceled.",
}

// job is GET /console/jobs/{id}: its snapshot and, once DONE, its result.
func (c *Console) job(w http.ResponseWriter, r *http.Request) {
	d, ok := c.loadJob(w, r)
	if !ok {
		return
	}
	d.Notice = notices[r.URL.Query().Get("notice")]
	refresh := time.Duration(0)
	if d.Live {
		refresh = c.opts.Refresh
	}
	c.render(w, r, http.StatusOK, "job", page{Title: "Job " + d.Job.JobID, Nav: "jobs", Refresh: refresh, Data: d})
}

// confirmCancel is GET /console/jobs/{id}/cancel: the form that cancels.
func (c *Console) confirmCancel(w http.ResponseWriter, r *http.Request) {
	d, ok := c.loadJob(w, r)
	if !ok {
		return
	}
	if !d.Live {
		http.Redirect(w, r, jobURL(d.Job.JobID)+"?notice=ended", http.StatusSeeOther)
		return
	}
	d.Confirm = true
	c.render(w, r, http.StatusOK, "job", page{Title: "Cancel job " + d.Job.JobID, Nav: "jobs", Data: d})
}

// cancel is POST /console/jobs/{id}/cancel: POST /jobs/{id}/cancel, then
// back to the job's page.
func (c *Console) cancel(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	rep, err := c.call(r, http.MethodPost, "/jobs/"+url.PathEscape(id)+"/cancel")
	switch {
	case err != nil:
		c.failAPI(w, r, err)
	case rep.status == http.StatusOK:
		http.Redirect(w, r, jobURL(id)+"?notice=canceled", http.StatusSeeOther)
	case rep.status == http.StatusConflict:
		http.Redirect(w, r, jobURL(id)+"?notice=ended", http.StatusSeeOther)
	default:
		c.failAPI(w, r, newAPIError(rep))
	}
}

// loadJob reads the job of the request's path, and its result once DONE;
// on a failure it answers and returns false.
func (c *Console) loadJob(w http.ResponseWriter, r *http.Request) (jobData, bool) {
	id := r.PathValue("id")
	var d jobData
	if err := c.getJSON(r, "/jobs/"+url.PathEscape(id), &d.Job); err != nil {
		c.failAPI(w, r, err)
		return d, false
	}
	st, _ := ledgertype.ParseState(string(d.Job.State))
	d.Live = !st.Terminal()
	if d.Job.State == wire.State(ledgertype.Done.String()) {
		rep, err := c.call(r, http.MethodGet, "/jobs/"+url.PathEscape(id)+"/result")
		if err == nil && rep.status == http.StatusOK {
			var res wire.Result
			if json.Unmarshal(rep.body, &res) == nil {
				d.Result = indent(res.Result)
			}
			d.Cut = rep.cut
		}
	}
	return d, true
}

// indent is raw indented for reading, or raw itself if it is not JSON.
func indent(raw json.RawMessage) string {
	var b bytes.Buffer
	if json.Indent(&b, raw, "", "  ") != nil {
		return string(raw)
	}
	return b.String()
}
