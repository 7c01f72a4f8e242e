package main

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"io"
	"net/http"
	"os"
	"time"
)

// result is how one operation ended.
type result int

const (
	resultOK       result = iota
	resultRejected        // 429: the queue was full
	resultError           // anything else
)

// client runs operations against one server.
type client struct {
	http   *http.Client
	base   string
	body   []byte
	waitMS int
}

// requestBody is a job body with a 16x16 PNG and params.sleep_ms.
func requestBody(sleepMS int) ([]byte, error) {
	img := image.NewNRGBA(image.Rect(0, 0, 16, 16))
	for y := range 16 {
		for x := range 16 {
			img.SetNRGBA(x, y, color.NRGBA{uint8(x * 16), uint8(y * 16), 128, 255})
		}
	}
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		return nil, err
	}
	return json.Marshal(map[string]any{
		"task_id": "jobload",
		"image":   base64.StdEncoding.EncodeToString(buf.Bytes()),
		"params":  map[string]any{"sleep_ms": sleepMS},
	})
}

// imageBody is a job body with the image in path, base64, and no params,
// for the fingerprint model.
func imageBody(path string) ([]byte, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("-image: %w", err)
	}
	if len(data) == 0 {
		return nil, fmt.Errorf("-image %s: empty file", path)
	}
	return json.Marshal(map[string]any{
		"task_id": "jobload",
		"image":   base64.StdEncoding.EncodeToString(data),
	})
}

// do makes one request and returns its status and body.
func (c *client) do(ctx context.Context, method, path string, body []byte) (int, []byte, error) {
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, bytes.NewReader(body))
	if err != nil {
		return 0, nil, err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	return resp.StatusCode, data, err
}

// infer is one POST /infer.
func (c *client) infer(ctx context.Context) result {
	status, _, err := c.do(ctx, http.MethodPost, "/infer", c.body)
	if err != nil || status != http.StatusOK {
		return resultError
	}
	return resultOK
}

// maxWaits bounds the waits of one cycle.
const maxWaits = 100

// asyncCycle is POST /jobs, waits until the job is terminal, then reads
// its result. A 429 pauses the client briefly so that it does not spin.
func (c *client) asyncCycle(ctx context.Context) result {
	status, data, err := c.do(ctx, http.MethodPost, "/jobs", c.body)
	if err != nil {
		return resultError
	}
	if status == http.StatusTooManyRequests {
		pause(ctx, 5*time.Millisecond)
		return resultRejected
	}
	var acc struct {
		JobID string `json:"job_id"`
	}
	if status != http.StatusAccepted || json.Unmarshal(data, &acc) != nil || acc.JobID == "" {
		return resultError
	}
	for range maxWaits {
		status, data, err = c.do(ctx, http.MethodGet, fmt.Sprintf("/jobs/%s/wait?timeout=%d", acc.JobID, c.waitMS), nil)
		if err != nil || status != http.StatusOK {
			return resultError
		}
		var snap struct {
			State string `json:"state"`
		}
		if json.Unmarshal(data, &snap) != nil {
			return resultError
		}
		switch snap.State {
		case "DONE":
			status, _, err = c.do(ctx, http.MethodGet, "/jobs/"+acc.JobID+"/result", nil)
			if err != nil || status != http.StatusOK {
				return resultError
			}
			return resultOK
		case "FAILED", "TIMEOUT":
			return resultError
		}
	}
	return resultError
}

// pause waits d or until ctx ends.
func pause(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	}
}
