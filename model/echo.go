package model

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"time"
)

// maxSleepMS is the largest sleep_ms, in milliseconds, a time.Duration
// holds.
const maxSleepMS = math.MaxInt64 / int64(time.Millisecond)

// Echo is the model for load tests and demos. It reads two optional params:
// sleep_ms, how long to sleep (cut short by the deadline, which then wins),
// and fail, a message to fail with after the sleep. It returns its params
// object unchanged ({} when there is none).
type Echo struct{}

// echoParams are the params Echo reads; others are returned but ignored.
type echoParams struct {
	SleepMS int64  `json:"sleep_ms"`
	Fail    string `json:"fail"`
}

// errEchoParams is Echo's answer to params it cannot read.
var errEchoParams = errors.New("params: sleep_ms must be a non-negative integer and fail a string")

// ValidateRequest refuses params whose sleep_ms or fail have the wrong type.
func (Echo) ValidateRequest(req Request) error {
	_, err := parseEchoParams(req.Params)
	return err
}

func parseEchoParams(raw json.RawMessage) (echoParams, error) {
	var p echoParams
	if len(raw) == 0 {
		return p, nil
	}
	if err := json.Unmarshal(raw, &p); err != nil || p.SleepMS < 0 || p.SleepMS > maxSleepMS {
		return p, errEchoParams
	}
	return p, nil
}

// Run sleeps, then fails or echoes.
func (Echo) Run(ctx context.Context, req Request) (any, error) {
	p, err := parseEchoParams(req.Params)
	if err != nil {
		return nil, err
	}
	if p.SleepMS > 0 {
		t := time.NewTimer(time.Duration(p.SleepMS) * time.Millisecond)
		defer t.Stop()
		select {
		case <-t.C:
		case <-ctx.Done():
			return nil, context.Cause(ctx)
		}
	}
	if p.Fail != "" {
		return nil, errors.New(p.Fail)
	}
	if len(req.Params) == 0 {
		return json.RawMessage(`{}`), nil
	}
	return req.Params, nil
}
