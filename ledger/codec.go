package ledger

import (
	"context"
	"fmt"
)

// Codec turns values of T into bytes and back, for a store that keeps
// requests or results as bytes. Decode must accept everything Encode
// returns, and return an error, never panic, for any other input.
type Codec[T any] interface {
	Encode(v T) ([]byte, error)
	Decode(b []byte) (T, error)
}

// Bytes is the identity codec.
type Bytes struct{}

func (Bytes) Encode(v []byte) ([]byte, error) { return v, nil }
func (Bytes) Decode(b []byte) ([]byte, error) { return b, nil }

// String keeps a string as its bytes.
type String struct{}

func (String) Encode(v string) ([]byte, error) { return []byte(v), nil }
func (String) Decode(b []byte) (string, error) { return string(b), nil }

// WithCodecs returns l as a store of Req and Res, encoding requests on
// Submit and results on Finish, and decoding them on TakeRequest and
// Result. An encoding error fails the call before it reaches l, changing
// nothing; a decoding error is returned as a failure of the store.
func WithCodecs[Req, Res any](l Ledger[[]byte, []byte], req Codec[Req], res Codec[Res]) Ledger[Req, Res] {
	return &coded[Req, Res]{Ledger: l, req: req, res: res}
}

// coded is WithCodecs's store; it only converts, so it needs no
// synchronisation of its own.
type coded[Req, Res any] struct {
	Ledger[[]byte, []byte]
	req Codec[Req]
	res Codec[Res]
}

func (c *coded[Req, Res]) Submit(ctx context.Context, s Submission, req Req) (string, bool, error) {
	b, err := c.req.Encode(req)
	if err != nil {
		return "", false, fmt.Errorf("ledger: encoding the request: %w", err)
	}
	return c.Ledger.Submit(ctx, s, b)
}

func (c *coded[Req, Res]) TakeRequest(ctx context.Context, id string) (Req, error) {
	var zero Req
	b, err := c.Ledger.TakeRequest(ctx, id)
	if err != nil {
		return zero, err
	}
	v, err := c.req.Decode(b)
	if err != nil {
		return zero, fmt.Errorf("ledger: decoding the request of job %s: %w", id, err)
	}
	return v, nil
}

func (c *coded[Req, Res]) Finish(ctx context.Context, id string, res Res) (Snapshot, error) {
	b, err := c.res.Encode(res)
	if err != nil {
		return Snapshot{}, fmt.Errorf("ledger: encoding the result: %w", err)
	}
	return c.Ledger.Finish(ctx, id, b)
}

func (c *coded[Req, Res]) Result(ctx context.Context, id string) (Res, Snapshot, error) {
	var zero Res
	b, snap, err := c.Ledger.Result(ctx, id)
	if err != nil {
		return zero, snap, err
	}
	v, err := c.res.Decode(b)
	if err != nil {
		return zero, snap, fmt.Errorf("ledger: decoding the result of job %s: %w", id, err)
	}
	return v, snap, nil
}
