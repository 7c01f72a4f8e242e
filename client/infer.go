package client

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
)

// Infer is POST /infer: it runs req through the model and returns the
// result. A model that fails is an *Error (422, or 500 for a panic) whose
// ModelError holds its message; a deadline that passes while the model
// runs is a 504; no free worker before it, a 503 (ErrUnavailable).
func (c *Client) Infer(ctx context.Context, req Request) (InferResult, error) {
	body, err := json.Marshal(req)
	if err != nil {
		return InferResult{}, fmt.Errorf("client: encoding the request: %w", err)
	}
	return c.InferJSON(ctx, body)
}

// InferJSON is Infer with the body already encoded.
func (c *Client) InferJSON(ctx context.Context, body []byte) (InferResult, error) {
	var res InferResult
	_, err := c.call(ctx, http.MethodPost, c.route(nil, "infer"), body, http.StatusOK, &res, otherErrors)
	return res, err
}
