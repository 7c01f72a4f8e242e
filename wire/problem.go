package wire

// Problem is an RFC 9457 problem detail (application/problem+json), the
// body of every error reply. Type is always about:blank, so Title is the
// status's reason phrase; Detail is a fixed string per cause (docs/http.md
// lists them). The extensions carry the job's id and state where one is
// known, and a model's own error message.
type Problem struct {
	Type   string `json:"type"`
	Title  string `json:"title"`
	Status int    `json:"status"`
	Detail string `json:"detail"`
	JobID  string `json:"job_id,omitempty"`
	State  State  `json:"state,omitempty"`
	Error  string `json:"error,omitempty"`
}

// DetailKeyConflict is the Detail of the 422 that POST /jobs answers when
// its Idempotency-Key was used for a job with another body.
const DetailKeyConflict = "Idempotency-Key was used for another request"
