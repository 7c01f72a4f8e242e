package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/jobledger/jobledger/store/sqlite"
)

// repairStore is -repair: it repairs the SQLite file that store
// (sqlite:PATH) names with sqlite.Repair, writes its report to out, and
// returns; a store of another kind is an error.
func repairStore(store string, out io.Writer) error {
	path, ok := strings.CutPrefix(store, "sqlite:")
	if !ok || path == "" {
		return fmt.Errorf("-repair needs -store sqlite:PATH, not %q", store)
	}
	r, err := sqlite.Repair(context.Background(), path)
	if err != nil {
		return fmt.Errorf("repairing %s: %w", path, err)
	}
	_, err = io.WriteString(out, r.String())
	return err
}

// repairHint adds to an error of the store's open, for a file that -repair
// makes usable again, the command that does it.
func repairHint(err error, store string) error {
	if !errors.Is(err, sqlite.ErrMissingCommits) && !errors.Is(err, sqlite.ErrDepthMismatch) {
		return err
	}
	return fmt.Errorf("%w; to accept the file as it is, run: jobserver -store %s -repair", err, store)
}
