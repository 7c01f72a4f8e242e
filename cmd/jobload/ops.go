package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"os"
	"time"

	"github.com/jobledger/jobledger/client"
)

// result is how one operation ended.
type result int

const (
	resultOK       result = iota
	resultRejected        // 429: the queue was full
	resultError           // anything else
)

// loader runs operations against one server, sending one encoded body.
type loader struct {
	api    *client.Client
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
	return json.Marshal(client.Request{
		TaskID: "jobload",
		Image:  buf.Bytes(),
		Params: fmt.Appendf(nil, `{"sleep_ms":%d}`, sleepMS),
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
	return json.Marshal(client.Request{TaskID: "jobload", Image: data})
}

// infer is one POST /infer.
func (l *loader) infer(ctx context.Context) result {
	if _, err := l.api.InferJSON(ctx, l.body); err != nil {
		return resultError
	}
	return resultOK
}

// maxWaits bounds the waits of one cycle.
const maxWaits = 100

// asyncCycle is POST /jobs, waits until the job is terminal, then reads
// its result. A 429 pauses the client briefly so that it does not spin:
// the load generator measures the server, so it does not sit out the
// server's Retry-After.
func (l *loader) asyncCycle(ctx context.Context) result {
	acc, err := l.api.SubmitJSON(ctx, l.body)
	if errors.Is(err, client.ErrQueueFull) {
		pause(ctx, 5*time.Millisecond)
		return resultRejected
	}
	if err != nil {
		return resultError
	}
	for range maxWaits {
		snap, err := l.api.Wait(ctx, acc.JobID, time.Duration(l.waitMS)*time.Millisecond)
		if err != nil {
			return resultError
		}
		switch snap.State {
		case client.Done:
			if _, err := l.api.Result(ctx, acc.JobID); err != nil {
				return resultError
			}
			return resultOK
		case client.Failed, client.TimedOut:
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
