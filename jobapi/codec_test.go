package jobapi_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jobledger/jobledger/jobapi"
	"github.com/jobledger/jobledger/ledger"
)

func TestRequestJSONRoundTrip(t *testing.T) {
	t.Parallel()
	for name, req := range map[string]jobapi.Request{
		"empty":     {},
		"task id":   {TaskID: "t-1 ünïcode"},
		"image":     {Image: []byte{0, 1, 2, 0xff, 'P', 'N', 'G'}},
		"params":    {Params: json.RawMessage(`{"sleep_ms":5,"nested":{"a":[1,"<b>"]}}`)},
		"all of it": {TaskID: "t", Image: []byte("img"), Params: json.RawMessage(`{}`)},
	} {
		t.Run(name, func(t *testing.T) {
			b, err := jobapi.RequestJSON{}.Encode(req)
			require.NoError(t, err)
			got, err := jobapi.RequestJSON{}.Decode(b)
			require.NoError(t, err)
			require.Equal(t, req, got)
		})
	}
}

// Params are stored compacted: the same JSON value, without its spaces.
func TestRequestJSONCompactsParams(t *testing.T) {
	t.Parallel()
	b, err := jobapi.RequestJSON{}.Encode(jobapi.Request{Params: json.RawMessage("{ \"a\" : [ 1 ,2 ] }\n")})
	require.NoError(t, err)
	got, err := jobapi.RequestJSON{}.Decode(b)
	require.NoError(t, err)
	require.Equal(t, json.RawMessage(`{"a":[1,2]}`), got.Params)
}

func TestRequestJSONEncodeRefusesParamsThatAreNotJSON(t *testing.T) {
	t.Parallel()
	_, err := jobapi.RequestJSON{}.Encode(jobapi.Request{Params: json.RawMessage(`{"a":`)})
	require.Error(t, err)
}

// requestGarbage is stored bytes no Encode wrote.
var requestGarbage = []string{
	"", " ", "null", "[]", `"str"`, "1", "{", "}", "\xff\xfe",
	`{"task_id":1}`, `{"unknown":1}`, `{"TaskID":"a"}`, `{"image":"!!not base64"}`,
	`{"params":[1]}`, `{"params":null}`, `{"params":"{}"}`, `{"params":{"a":}}`,
	`{} {}`, `{"task_id":"a"}x`, `{"task_id":"a"`,
}

// Decode refuses, without panicking, whatever Encode could not have written.
func TestRequestJSONDecodeRefusesGarbage(t *testing.T) {
	t.Parallel()
	for _, g := range requestGarbage {
		_, err := jobapi.RequestJSON{}.Decode([]byte(g))
		require.Error(t, err, "%q", g)
	}
}

func TestResultJSON(t *testing.T) {
	t.Parallel()
	for _, v := range []string{`{"width":640,"tags":["a"]}`, `"text"`, `null`, `[]`, `1.5`} {
		b, err := jobapi.ResultJSON{}.Encode(json.RawMessage(v))
		require.NoError(t, err)
		got, err := jobapi.ResultJSON{}.Decode(b)
		require.NoError(t, err)
		require.Equal(t, json.RawMessage(v), got)
		b[0] = 'X' // the decoded result does not share the store's bytes
		require.Equal(t, json.RawMessage(v), got)
	}
	for _, g := range []string{"", "{", "nul", "\xff", `{"a":1}}`} {
		_, err := jobapi.ResultJSON{}.Encode(json.RawMessage(g))
		require.Error(t, err, "%q", g)
		_, err = jobapi.ResultJSON{}.Decode([]byte(g))
		require.Error(t, err, "%q", g)
	}
}

// The codecs put a server's jobs in a store of bytes, as a durable store
// keeps them: a request goes in, and the runner takes it back whole.
func TestCodecsThroughAStoreOfBytes(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	raw, err := ledger.NewMemory[[]byte, []byte](ledger.Config{MaxQueue: 1})
	require.NoError(t, err)
	l := ledger.WithCodecs[jobapi.Request, json.RawMessage](raw, jobapi.RequestJSON{}, jobapi.ResultJSON{})
	req := jobapi.Request{TaskID: "t", Image: []byte{1, 2}, Params: json.RawMessage(`{"k":"v"}`)}
	id, _, err := l.Submit(ctx, ledger.Submission{TaskID: req.TaskID}, req)
	require.NoError(t, err)
	got, err := l.TakeRequest(ctx, id)
	require.NoError(t, err)
	require.Equal(t, req, got)
	_, err = l.Finish(ctx, id, json.RawMessage(`{"ok":true}`))
	require.NoError(t, err)
	res, _, err := l.Result(ctx, id)
	require.NoError(t, err)
	require.JSONEq(t, `{"ok":true}`, string(res))
}

// FuzzRequestJSON: Decode never panics, and what it accepts survives a
// round trip.
func FuzzRequestJSON(f *testing.F) {
	for _, g := range requestGarbage {
		f.Add([]byte(g))
	}
	f.Add([]byte(`{"task_id":"t","image":"AAE=","params":{"a":1}}`))
	f.Add([]byte(`{"imAge":""}`)) // found by fuzzing: an empty image came back as []byte{}, then nil
	f.Fuzz(func(t *testing.T, data []byte) {
		req, err := jobapi.RequestJSON{}.Decode(data)
		if err != nil {
			return
		}
		b, err := jobapi.RequestJSON{}.Encode(req)
		require.NoError(t, err)
		again, err := jobapi.RequestJSON{}.Decode(b)
		require.NoError(t, err)
		require.Equal(t, req, again)
	})
}
