package jobapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/jobledger/jobledger/ledger"
)

// The codecs that put the server's requests and results in a store of
// bytes (ledger.WithCodecs). What they write is read back by later
// processes, so the form is fixed here, apart from the Go types: change
// it only with a decoder for the old one.

var (
	_ ledger.Codec[Request]         = RequestJSON{}
	_ ledger.Codec[json.RawMessage] = ResultJSON{}
)

// RequestJSON stores a Request as a JSON object: {"task_id": "...",
// "image": "<base64>", "params": {...}}, each member left out when empty.
// Params are stored compacted, as JSON text with its insignificant spaces
// taken out; an empty Image is read back as nil.
type RequestJSON struct{}

// storedRequest is the stored form of a Request: its fields, under names
// of their own. A field added to Request stops the conversions below from
// compiling until the stored form says how to keep it.
type storedRequest struct {
	TaskID string          `json:"task_id,omitempty"`
	Image  []byte          `json:"image,omitempty"`
	Params json.RawMessage `json:"params,omitempty"`
}

// Encode fails only for Params that are not JSON, which parseRequest never
// admits.
// HTML characters in params are kept as they are, not escaped.
func (RequestJSON) Encode(r Request) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(storedRequest(r)); err != nil {
		return nil, fmt.Errorf("jobapi: encoding a request: %w", err)
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// Decode reads what Encode wrote. Anything else (not one JSON object, an
// unknown member, params that are not an object) is an error; member names
// match without regard to case, as encoding/json matches them.
func (RequestJSON) Decode(b []byte) (Request, error) {
	bad := func(why string, args ...any) (Request, error) {
		return Request{}, fmt.Errorf("jobapi: a stored request: "+why, args...)
	}
	if t := bytes.TrimSpace(b); len(t) == 0 || t[0] != '{' {
		return bad("not a JSON object")
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	var s storedRequest
	if err := dec.Decode(&s); err != nil {
		return bad("%v", err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return bad("data after the JSON object")
	}
	if s.Params != nil && s.Params[0] != '{' {
		return bad("params is not a JSON object")
	}
	if len(s.Image) == 0 {
		s.Image = nil // as parseRequest leaves an empty image
	}
	return Request(s), nil
}

// ResultJSON stores a job's result, JSON text, as it is.
type ResultJSON struct{}

// Encode refuses a result that is not JSON.
func (ResultJSON) Encode(v json.RawMessage) ([]byte, error) {
	if !json.Valid(v) {
		return nil, errors.New("jobapi: encoding a result: not JSON")
	}
	return v, nil
}

// Decode refuses stored bytes that are not JSON, and copies the rest, so
// that the result never shares memory with the store.
func (ResultJSON) Decode(b []byte) (json.RawMessage, error) {
	if !json.Valid(b) {
		return nil, errors.New("jobapi: a stored result: not JSON")
	}
	return bytes.Clone(b), nil
}
