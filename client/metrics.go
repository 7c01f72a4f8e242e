package client

import (
	"bufio"
	"bytes"
	"context"
	"net/http"
	"strconv"
	"strings"
)

// Metrics is GET /metrics, read into a map from each series, its name and
// labels as the server writes them (`jobledger_jobs_completed_total{state="DONE"}`),
// to its value. Comments, and lines whose value does not parse, are left
// out; a histogram's buckets, sum and count are series of their own.
func (c *Client) Metrics(ctx context.Context) (map[string]float64, error) {
	r, err := c.do(ctx, http.MethodGet, c.route(nil, "metrics"), nil)
	if err != nil {
		return nil, err
	}
	if r.status != http.StatusOK {
		return nil, newError(r, otherErrors[r.status])
	}
	m := make(map[string]float64)
	sc := bufio.NewScanner(bytes.NewReader(r.body))
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "#") {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		if i < 0 {
			continue
		}
		if v, err := strconv.ParseFloat(line[i+1:], 64); err == nil {
			m[line[:i]] = v
		}
	}
	return m, sc.Err()
}
