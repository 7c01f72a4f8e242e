package postgres

import (
	"context"
	"embed"
	"fmt"
	"io/fs"
	"sort"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"
)

//go:embed migrations/*.sql
var migrationFS embed.FS

// migration is one embedded schema step, numbered from its file name.
type migration struct {
	version int
	name    string
	sql     string
}

// migrations returns the embedded migrations in order; their versions must
// be 1, 2, ... with no gap and no repeat, else it fails.
func migrations() ([]migration, error) {
	names, err := fs.Glob(migrationFS, "migrations/*.sql")
	if err != nil {
		return nil, err
	}
	sort.Strings(names)
	var ms []migration
	for _, name := range names {
		base := strings.TrimPrefix(name, "migrations/")
		v, err := strconv.Atoi(strings.SplitN(base, "_", 2)[0])
		if err != nil {
			return nil, fmt.Errorf("postgres: migration %s: no version number: %w", base, err)
		}
		if v != len(ms)+1 {
			return nil, fmt.Errorf("postgres: migration %s: version %d, want %d", base, v, len(ms)+1)
		}
		text, err := migrationFS.ReadFile(name)
		if err != nil {
			return nil, err
		}
		ms = append(ms, migration{version: v, name: base, sql: string(text)})
	}
	return ms, nil
}

// SchemaVersion is the schema this package writes: the last embedded
// migration.
func SchemaVersion() int {
	ms, err := migrations()
	if err != nil || len(ms) == 0 {
		return 0
	}
	return ms[len(ms)-1].version
}

// migrationLock is the key of the transaction-level advisory lock that
// Open holds while it migrates and recovers, so that replicas opening
// together apply each migration once and one at a time.
const migrationLock int64 = 0x6a6f626c6564 // "jobled"

// migrate brings the schema of the database tx runs on up to date, inside
// tx, which holds migrationLock. A database migrated by a newer package is
// refused with ErrNewerSchema; one with a ledger-like table but no version
// table with ErrForeign. Before it migrates a ledger that exists, it locks
// the ledger row, the lock every write takes first. The migrations lock
// the jobs table alone: one that altered the ledger table would wait for
// the table locks that writers queued on the row hold, a deadlock again.
func migrate(ctx context.Context, tx pgx.Tx) error {
	ms, err := migrations()
	if err != nil {
		return err
	}
	var hasVersion, hasJobs bool
	if err := tx.QueryRow(ctx, `SELECT
			to_regclass('jobledger_schema') IS NOT NULL,
			to_regclass('jobs') IS NOT NULL OR to_regclass('ledger') IS NOT NULL`,
	).Scan(&hasVersion, &hasJobs); err != nil {
		return fmt.Errorf("postgres: reading the schema: %w", err)
	}
	current := 0
	switch {
	case hasVersion:
		if err := tx.QueryRow(ctx, `SELECT version FROM jobledger_schema`).Scan(&current); err != nil {
			return fmt.Errorf("postgres: reading the schema version: %w", err)
		}
	case hasJobs:
		return fmt.Errorf("%w: tables jobs or ledger exist without jobledger_schema", ErrForeign)
	default:
		if _, err := tx.Exec(ctx, `CREATE TABLE jobledger_schema (version integer NOT NULL);
			INSERT INTO jobledger_schema (version) VALUES (0)`); err != nil {
			return fmt.Errorf("postgres: creating the schema table: %w", err)
		}
	}
	latest := ms[len(ms)-1].version
	if current > latest {
		return fmt.Errorf("%w: the database has schema %d, this program knows up to %d", ErrNewerSchema, current, latest)
	}
	if current >= 1 && current < latest {
		// Replicas of the earlier schema may be live. Their writes lock
		// the ledger row (schema 1 made it), then job rows; the
		// migrations lock jobs (CREATE INDEX a SHARE lock, ALTER TABLE an
		// ACCESS EXCLUSIVE one). So take the ledger row first, as they
		// do, and wait for their writes in flight, rather than hold jobs
		// while an end holding the ledger row waits for it: a deadlock,
		// which PostgreSQL breaks by failing the end or this Open.
		if _, err := tx.Exec(ctx, `SELECT 1 FROM ledger WHERE id = 1 FOR UPDATE`); err != nil {
			return fmt.Errorf("postgres: locking the ledger before migrating: %w", err)
		}
	}
	for _, m := range ms {
		if m.version <= current {
			continue
		}
		if _, err := tx.Exec(ctx, m.sql); err != nil {
			return fmt.Errorf("postgres: migration %s: %w", m.name, err)
		}
		if _, err := tx.Exec(ctx, `UPDATE jobledger_schema SET version = $1`, m.version); err != nil {
			return fmt.Errorf("postgres: recording migration %s: %w", m.name, err)
		}
	}
	return nil
}
