package jobtable

import (
	"sync"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"
)

// TestRetainedJobLayout pins the size of a job with an empty request and
// result at 160 bytes, a size class of the Go allocator: the largest part
// of what a retained job costs (BenchmarkRetainedJobMemory, at most 256
// bytes; docs/performance.md, "Memory"). A field added to the job, or one
// placed so that it pads, takes every retained job to the next class, 16
// bytes more.
func TestRetainedJobLayout(t *testing.T) {
	traced := unsafe.Sizeof(jobMutex{}) - unsafe.Sizeof(sync.Mutex{}) // the traced build's section counters
	require.LessOrEqual(t, unsafe.Sizeof(job[struct{}, struct{}]{}), 160+traced)
}
