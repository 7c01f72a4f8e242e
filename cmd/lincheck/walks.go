package main

import (
	"fmt"
	"io"
	"time"

	"github.com/anishathalye/porcupine"

	"github.com/jobledger/jobledger/linearizability"
)

// checkWalks checks the walks of the listing a run recorded beside its
// history (linearizability.CheckRecordedWalks), prints what it checked, and
// returns the violation, if any, for verdict.
func checkWalks(history []porcupine.Operation, walks []linearizability.Walk, retained bool, stdout io.Writer) error {
	pages, most := 0, 0
	for _, w := range walks {
		n := 0
		for _, p := range w.Pages {
			n += len(p)
		}
		pages, most = pages+len(w.Pages), max(most, n)
	}
	start := time.Now()
	err := linearizability.CheckRecordedWalks(history, walks, retained)
	fmt.Fprintf(stdout, "  walks:  %d of the listing, %d pages, at most %d jobs listed, checked in %v\n",
		len(walks), pages, most, time.Since(start).Round(time.Millisecond))
	return err
}
