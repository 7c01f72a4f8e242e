package fuzz

import (
	"reflect"
	"testing"
)

// TestConcurrentSeedsEncode checks that every seed decodes to the spec it
// was written as, so that the comments on the seeds say what runs.
func TestConcurrentSeedsEncode(t *testing.T) {
	for i, s := range concurrentSeeds {
		if got := decodeConc(s.encode()); !reflect.DeepEqual(got, s) {
			t.Errorf("seed %d decodes to\n%v\nwant\n%v", i, got, s)
		}
	}
}
