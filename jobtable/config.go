package jobtable

import (
	"time"

	"github.com/jobledger/jobledger/ledger/ledgertype"
)

// Defaults that New fills in for zero Config fields.
const (
	DefaultJobTTL       = ledgertype.DefaultJobTTL
	DefaultMaxCompleted = ledgertype.DefaultMaxCompleted
)

// Config configures a Table: the contract's Config (see ledgertype.Config).
// A nil Now means time.Now; a nil NewID means 26 base32 characters of
// crypto/rand, read in batches (see newID). Submit panics if an injected
// NewID repeats an id.
type Config = ledgertype.Config

// withDefaults validates c and returns it with every zero field filled in.
func withDefaults(c Config) (Config, error) {
	if c.Now == nil {
		c.Now = time.Now
	}
	if c.NewID == nil {
		c.NewID = newID
	}
	return c.WithDefaults()
}
