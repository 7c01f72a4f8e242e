package linearizability

import (
	"bufio"
	"encoding/json"
	"fmt"
	"strings"
)

// Walks in a history file: one line per page, after the operations, each
// naming its walk by its number (1, 2, ... in the order of hf.Walks) and
// carrying the walk's call and return, so that no line grows with the
// number of jobs a walk lists:
//
//	{"walk":1,"call":120,"return":180,"page":["A...","B..."]}
//
// A walk's pages are its lines in order; a recorded walk has at least one.

type fileWalkPage struct {
	Walk   int      `json:"walk"`
	Call   int64    `json:"call"`
	Return int64    `json:"return"`
	Page   []string `json:"page"`
}

// readWalkPage adds the page on line to hf.Walks: to the last walk if the
// line names it, else as the first page of the next.
func (hf *HistoryFile) readWalkPage(line string) error {
	var p fileWalkPage
	dec := json.NewDecoder(strings.NewReader(line))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&p); err != nil {
		return err
	}
	if p.Page == nil {
		return fmt.Errorf("walk %d: no page", p.Walk)
	}
	if p.Return < p.Call {
		return fmt.Errorf("walk %d: returns at %d before its call at %d", p.Walk, p.Return, p.Call)
	}
	switch n := len(hf.Walks); {
	case p.Walk == n && n > 0:
		w := &hf.Walks[n-1]
		if w.Call != p.Call || w.Return != p.Return {
			return fmt.Errorf("walk %d: a page with another call or return", p.Walk)
		}
		w.Pages = append(w.Pages, p.Page)
	case p.Walk == n+1:
		hf.Walks = append(hf.Walks, Walk{Call: p.Call, Return: p.Return, Pages: [][]string{p.Page}})
	default:
		return fmt.Errorf("walk %d after walk %d", p.Walk, n)
	}
	return nil
}

// writeWalks writes walks, a line per page.
func writeWalks(bw *bufio.Writer, walks []Walk) error {
	for i, w := range walks {
		if len(w.Pages) == 0 {
			return fmt.Errorf("walk %d has no page", i+1)
		}
		for _, page := range w.Pages {
			if page == nil {
				page = []string{}
			}
			b, err := json.Marshal(fileWalkPage{Walk: i + 1, Call: w.Call, Return: w.Return, Page: page})
			if err != nil {
				return err
			}
			bw.Write(b)
			bw.WriteByte('\n')
		}
	}
	return nil
}
