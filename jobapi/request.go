package jobapi

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"mime"
	"net"
	"net/http"
	"os"
	"strings"
	"unicode"
)

// maxTaskIDBytes bounds the task_id field.
const maxTaskIDBytes = 128

// requestError is a request refused before any work: the status and the
// fixed detail of its problem reply.
type requestError struct {
	status int
	detail string
}

func (e *requestError) Error() string { return e.detail }

func badRequest(detail string) *requestError {
	return &requestError{status: http.StatusBadRequest, detail: detail}
}

// jobBody is the body of POST /jobs and POST /infer as parseRequest reads
// it: pointers, so that an absent member, null and one of the wrong type
// are told apart (wire.Request is the body as a client writes it).
type jobBody struct {
	TaskID *string          `json:"task_id"`
	Image  *string          `json:"image"`
	Params *json.RawMessage `json:"params"`
}

// parseRequest reads the JSON body of POST /jobs or POST /infer into a
// Request, checking in this order: the media type (415), the size (413), the
// JSON itself and its fields (400), then the model's own validation (400, or
// 422 for an *UnprocessableError).
func parseRequest(w http.ResponseWriter, r *http.Request, maxBody int64, m Model) (Request, *requestError) {
	if !jsonMediaType(r.Header.Get("Content-Type")) {
		w.Header().Set("Accept-Post", "application/json")
		return Request{}, &requestError{status: http.StatusUnsupportedMediaType, detail: detailMediaType}
	}
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, maxBody))
	dec.DisallowUnknownFields()
	var body jobBody
	if err := dec.Decode(&body); err != nil {
		return Request{}, decodeError(err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		switch {
		case timedOut(err):
			return Request{}, &requestError{status: http.StatusRequestTimeout, detail: detailBodyTimeout}
		case tooLarge(err):
			return Request{}, &requestError{status: http.StatusRequestEntityTooLarge, detail: detailTooLarge}
		}
		return Request{}, badRequest(detailTrailingData)
	}
	var req Request
	if body.TaskID != nil {
		if len(*body.TaskID) > maxTaskIDBytes {
			return Request{}, badRequest(detailTaskIDTooLong)
		}
		if strings.IndexFunc(*body.TaskID, unicode.IsControl) >= 0 {
			// NUL among them, which a PostgreSQL store cannot hold (a
			// JSON string decodes to valid UTF-8, so that is the one
			// byte such a store refuses).
			return Request{}, badRequest(detailTaskIDControl)
		}
		req.TaskID = *body.TaskID
	}
	if body.Image != nil && *body.Image != "" {
		img, err := base64.StdEncoding.DecodeString(*body.Image)
		if err != nil {
			return Request{}, badRequest(detailBadBase64)
		}
		req.Image = img
	}
	if body.Params != nil {
		p := bytes.TrimSpace(*body.Params)
		if len(p) == 0 || p[0] != '{' {
			return Request{}, badRequest(detailParamsObject)
		}
		req.Params = p
	}
	if v, ok := m.(RequestValidator); ok {
		if err := v.ValidateRequest(req); err != nil {
			if unprocessable(err) {
				return Request{}, &requestError{status: http.StatusUnprocessableEntity, detail: err.Error()}
			}
			return Request{}, badRequest(err.Error())
		}
	}
	return req, nil
}

// jsonMediaType reports whether a Content-Type is JSON: application/json
// or a +json type, with any parameters.
func jsonMediaType(ct string) bool {
	if ct == "application/json" {
		return true // the common case, without mime's allocations
	}
	mt, _, err := mime.ParseMediaType(ct)
	return err == nil && (mt == "application/json" || strings.HasSuffix(mt, "+json"))
}

// decodeError maps a json.Decoder error to its reply.
func decodeError(err error) *requestError {
	var typeErr *json.UnmarshalTypeError
	switch {
	case timedOut(err):
		return &requestError{status: http.StatusRequestTimeout, detail: detailBodyTimeout}
	case tooLarge(err):
		return &requestError{status: http.StatusRequestEntityTooLarge, detail: detailTooLarge}
	case errors.As(err, &typeErr):
		return badRequest(detailBadField)
	case strings.HasPrefix(err.Error(), "json: unknown field "):
		return badRequest(detailUnknownField)
	default:
		return badRequest(detailBadJSON)
	}
}

// timedOut reports whether err is a body read cut off by a deadline (the
// http.Server's ReadTimeout while the body was still arriving): the
// request may be valid, so it is answered 408, which a client may retry,
// not 400, which says the request itself is wrong.
func timedOut(err error) bool {
	if err == nil {
		return false
	}
	var ne net.Error
	return errors.Is(err, os.ErrDeadlineExceeded) || (errors.As(err, &ne) && ne.Timeout())
}

func tooLarge(err error) bool {
	if err == nil {
		return false // before errors.As, whose target would be allocated
	}
	var maxErr *http.MaxBytesError
	return errors.As(err, &maxErr)
}
