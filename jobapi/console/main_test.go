package console_test

import (
	"testing"

	"go.uber.org/goleak"
)

// Every test's server, console and sampler end before it returns.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
