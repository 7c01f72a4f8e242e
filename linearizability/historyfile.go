package linearizability

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/anishathalye/porcupine"
)

// A history file holds one operation per line as a JSON object:
//
//	{"client":0,"call":1,"return":4,"in":{"kind":"submit","task":"t1","value":"r1"},"out":{"outcome":"ok","id":"j1"}}
//	{"client":1,"call":5,"return":9,"in":{"kind":"snapshot","id":"j1"},"out":{"outcome":"ok","state":"PENDING","task":"t1"}}
//
// "return" left out means pending forever. Lines starting with # are
// comments, except "# max_queue: N", which sets the bound the admission
// model checks against, "# level: http", which marks a history
// recorded through the HTTP API (checked by CheckHTTP), "# retained:
// true", which says that retention evicted nothing (CheckConfig.Retained),
// and "# knows_ttl: true", which says that the server knew its retention
// TTL, so that its terminal snapshots carry expires_at
// (CheckConfig.KnowsTTL). Kinds and outcomes are spelled as their String
// methods spell them, states by their wire names (State.String). A
// submit-wait's "waited" is the wait the server applied, in the unit of
// "call" and "return"; "expires" says that a view carried expires_at. A
// submit-keyed (POST /jobs with an Idempotency-Key) has its "key" and the
// "digest" of its body, its outcome "ok" (a 202, with the "id"),
// "queue-full" (429), "key-conflict" (422) or "unknown"; at the table
// level an "ok" that replayed its key's job has "replayed": true:
//
//	{"client":2,"call":6,"return":8,"in":{"kind":"submit-keyed","task":"t2","value":"r2","key":"k1","digest":"d2"},"out":{"outcome":"ok","id":"j2"}}
//
// A submit of a tenant has its "tenant" and, if bounded, "tenant_max"; its
// outcome may be "tenant-full". A call scoped to a tenant has "scoped":
// true and the "tenant" it is scoped to:
//
//	{"client":3,"call":9,"return":11,"in":{"kind":"snapshot","id":"j1","tenant":"b","scoped":true},"out":{"outcome":"not-found"}}

// HistoryFile is a history read from or written to a file.
type HistoryFile struct {
	MaxQueue int
	// Level is "http" for a history recorded through the HTTP API, empty
	// for the table level.
	Level string
	// Retained is CheckConfig.Retained for this history.
	Retained bool
	// KnowsTTL is CheckConfig.KnowsTTL for this history.
	KnowsTTL bool
	Ops      []porcupine.Operation
	// Walks are the walks of the listing recorded beside Ops (HTTP level),
	// one line per page after the operations (historywalks.go).
	Walks []Walk
}

type fileOp struct {
	Client int     `json:"client"`
	Call   int64   `json:"call"`
	Return *int64  `json:"return,omitempty"`
	In     fileIn  `json:"in"`
	Out    fileOut `json:"out"`
}

type fileIn struct {
	Kind  string `json:"kind"`
	ID    string `json:"id,omitempty"`
	Task  string `json:"task,omitempty"`
	Value string `json:"value,omitempty"`
	Depth int    `json:"depth,omitempty"`
	Key   string `json:"key,omitempty"`
	Dig   string `json:"digest,omitempty"`
	// Tenant, Scoped and TenantMax are Input's.
	Tenant    string `json:"tenant,omitempty"`
	Scoped    bool   `json:"scoped,omitempty"`
	TenantMax int    `json:"tenant_max,omitempty"`
}

type fileOut struct {
	Outcome   string `json:"outcome"`
	ID        string `json:"id,omitempty"`
	Value     string `json:"value,omitempty"`
	State     string `json:"state,omitempty"`
	Task      string `json:"task,omitempty"`
	Err       string `json:"err,omitempty"`
	Started   bool   `json:"started,omitempty"`
	Completed bool   `json:"completed,omitempty"`
	Expires   bool   `json:"expires,omitempty"`
	Waited    int64  `json:"waited,omitempty"`
	Replayed  bool   `json:"replayed,omitempty"`
}

// ReadHistory parses a history file.
func ReadHistory(r io.Reader) (HistoryFile, error) {
	var hf HistoryFile
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" {
			continue
		}
		if c, ok := strings.CutPrefix(line, "#"); ok {
			if v, ok := strings.CutPrefix(strings.TrimSpace(c), "max_queue:"); ok {
				q, err := strconv.Atoi(strings.TrimSpace(v))
				if err != nil {
					return hf, fmt.Errorf("line %d: max_queue: %w", n, err)
				}
				hf.MaxQueue = q
			}
			if v, ok := strings.CutPrefix(strings.TrimSpace(c), "level:"); ok {
				hf.Level = strings.TrimSpace(v)
			}
			if v, ok := strings.CutPrefix(strings.TrimSpace(c), "retained:"); ok {
				b, err := strconv.ParseBool(strings.TrimSpace(v))
				if err != nil {
					return hf, fmt.Errorf("line %d: retained: %w", n, err)
				}
				hf.Retained = b
			}
			if v, ok := strings.CutPrefix(strings.TrimSpace(c), "knows_ttl:"); ok {
				b, err := strconv.ParseBool(strings.TrimSpace(v))
				if err != nil {
					return hf, fmt.Errorf("line %d: knows_ttl: %w", n, err)
				}
				hf.KnowsTTL = b
			}
			continue
		}
		if strings.HasPrefix(line, `{"walk":`) {
			if err := hf.readWalkPage(line); err != nil {
				return hf, fmt.Errorf("line %d: %w", n, err)
			}
			continue
		}
		var fo fileOp
		dec := json.NewDecoder(strings.NewReader(line))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&fo); err != nil {
			return hf, fmt.Errorf("line %d: %w", n, err)
		}
		op, err := fo.operation()
		if err != nil {
			return hf, fmt.Errorf("line %d: %w", n, err)
		}
		hf.Ops = append(hf.Ops, op)
	}
	return hf, sc.Err()
}

func (fo fileOp) operation() (porcupine.Operation, error) {
	kind, ok := parseName(kindNames[:], fo.In.Kind)
	if !ok || kind == 0 {
		return porcupine.Operation{}, fmt.Errorf("unknown kind %q", fo.In.Kind)
	}
	outcome, ok := parseName(outcomeNames[:], fo.Out.Outcome)
	if !ok {
		return porcupine.Operation{}, fmt.Errorf("unknown outcome %q", fo.Out.Outcome)
	}
	out := Output{
		Outcome: Outcome(outcome), ID: fo.Out.ID, Value: fo.Out.Value,
		TaskID: fo.Out.Task, Err: fo.Out.Err, Started: fo.Out.Started, Completed: fo.Out.Completed,
		Expires: fo.Out.Expires, Waited: fo.Out.Waited, Replayed: fo.Out.Replayed,
	}
	if fo.Out.State != "" {
		s, ok := ParseState(fo.Out.State)
		if !ok {
			return porcupine.Operation{}, fmt.Errorf("unknown state %q", fo.Out.State)
		}
		out.State = s
	}
	ret := int64(Pending)
	if fo.Return != nil {
		ret = *fo.Return
	}
	if out.Waited < 0 {
		return porcupine.Operation{}, fmt.Errorf("negative waited %d", out.Waited)
	}
	if ret < fo.Call {
		return porcupine.Operation{}, fmt.Errorf("return %d before call %d", ret, fo.Call)
	}
	return porcupine.Operation{
		ClientId: fo.Client,
		Input: Input{Kind: Kind(kind), ID: fo.In.ID, TaskID: fo.In.Task, Value: fo.In.Value, Depth: fo.In.Depth, Key: fo.In.Key, Digest: fo.In.Dig,
			Tenant: fo.In.Tenant, Scoped: fo.In.Scoped, TenantMax: fo.In.TenantMax},
		Output: out,
		Call:   fo.Call,
		Return: ret,
	}, nil
}

func parseName(names []string, s string) (int, bool) {
	for i, n := range names {
		if n != "" && n == s {
			return i, true
		}
	}
	return 0, false
}

// WriteHistory writes hf in the history file format.
func WriteHistory(w io.Writer, hf HistoryFile) error {
	bw := bufio.NewWriter(w)
	fmt.Fprintf(bw, "# max_queue: %d\n", hf.MaxQueue)
	if hf.Level != "" {
		fmt.Fprintf(bw, "# level: %s\n", hf.Level)
	}
	if hf.Retained {
		fmt.Fprintf(bw, "# retained: true\n")
	}
	if hf.KnowsTTL {
		fmt.Fprintf(bw, "# knows_ttl: true\n")
	}
	for _, op := range hf.Ops {
		in, out := op.Input.(Input), op.Output.(Output)
		fo := fileOp{
			Client: op.ClientId,
			Call:   op.Call,
			In: fileIn{Kind: in.Kind.String(), ID: in.ID, Task: in.TaskID, Value: in.Value, Depth: in.Depth, Key: in.Key, Dig: in.Digest,
				Tenant: in.Tenant, Scoped: in.Scoped, TenantMax: in.TenantMax},
			Out: fileOut{
				Outcome: out.Outcome.String(), ID: out.ID, Value: out.Value, Task: out.TaskID,
				Err: out.Err, Started: out.Started, Completed: out.Completed,
				Expires: out.Expires, Waited: out.Waited, Replayed: out.Replayed,
			},
		}
		if op.Return != Pending {
			r := op.Return
			fo.Return = &r
		}
		if HasView(in.Kind, out.Outcome) {
			fo.Out.State = out.State.String()
		}
		b, err := json.Marshal(fo)
		if err != nil {
			return err
		}
		bw.Write(b)
		bw.WriteByte('\n')
	}
	if err := writeWalks(bw, hf.Walks); err != nil {
		return err
	}
	return bw.Flush()
}
