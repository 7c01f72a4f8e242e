package sqlite

import (
	"context"
	"database/sql"
	"embed"
	"fmt"
	"path"
	"sort"
	"strconv"
	"strings"
)

// The schema is a numbered list of migrations, migrations/NNNN_name.sql,
// applied in order at Open inside the transaction that also applies the
// restart (see recover), each followed by the update of meta's
// schema_version. A database is never migrated down: one whose version is
// above the last migration this package knows is refused (ErrNewerSchema),
// because this code cannot know what the newer columns mean.
//
//go:embed migrations/*.sql
var migrationFiles embed.FS

// migration is one file of migrations/.
type migration struct {
	version int
	name    string
	sql     string
}

// schema is the list of migrations, in order; loadMigrations checks it.
var schema = mustLoadMigrations()

// SchemaVersion is the version of the schema this package writes: the
// number of its last migration.
var SchemaVersion = schema[len(schema)-1].version

func mustLoadMigrations() []migration {
	ms, err := loadMigrations(migrationFiles, "migrations")
	if err != nil {
		panic(err) // a broken build, not input: the files are embedded
	}
	return ms
}

// loadMigrations reads the migrations under dir of fsys: files named
// NNNN_name.sql, numbered 1, 2, 3, ... without a gap.
func loadMigrations(fsys embed.FS, dir string) ([]migration, error) {
	entries, err := fsys.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var ms []migration
	for _, e := range entries {
		num, _, ok := strings.Cut(e.Name(), "_")
		v, err := strconv.Atoi(num)
		if !ok || err != nil || !strings.HasSuffix(e.Name(), ".sql") {
			return nil, fmt.Errorf("sqlite: migration %q is not named NNNN_name.sql", e.Name())
		}
		b, err := fsys.ReadFile(path.Join(dir, e.Name()))
		if err != nil {
			return nil, err
		}
		ms = append(ms, migration{version: v, name: e.Name(), sql: string(b)})
	}
	sort.Slice(ms, func(i, j int) bool { return ms[i].version < ms[j].version })
	for i, m := range ms {
		if m.version != i+1 {
			return nil, fmt.Errorf("sqlite: migration %s should be number %d", m.name, i+1)
		}
	}
	if len(ms) == 0 {
		return nil, fmt.Errorf("sqlite: no migrations under %s", dir)
	}
	return ms, nil
}

// pendingMigrations returns the migrations of ms that a database at version
// has not had, or ErrNewerSchema if version is beyond them all.
func pendingMigrations(ms []migration, version int) ([]migration, error) {
	switch {
	case version < 0:
		return nil, fmt.Errorf("%w: schema version %d", ErrCorrupt, version)
	case version > len(ms):
		return nil, fmt.Errorf("%w: the database is at schema %d, this program knows up to %d",
			ErrNewerSchema, version, len(ms))
	}
	return ms[version:], nil
}

// migrate brings the database of tx up to SchemaVersion. A database with no
// table at all is new and gets every migration; one with tables but no
// meta table is someone else's (ErrForeign).
func migrate(ctx context.Context, tx *sql.Tx) error {
	version, err := schemaVersion(ctx, tx)
	if err != nil {
		return err
	}
	todo, err := pendingMigrations(schema, version)
	if err != nil {
		return err
	}
	for _, m := range todo {
		if _, err := tx.ExecContext(ctx, m.sql); err != nil {
			return fmt.Errorf("sqlite: migration %s: %w", m.name, err)
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO meta (key, value) VALUES ('schema_version', ?)
			ON CONFLICT (key) DO UPDATE SET value = excluded.value`, m.version); err != nil {
			return fmt.Errorf("sqlite: migration %s: %w", m.name, err)
		}
	}
	return nil
}

// schemaVersion reads the version of the database of tx: 0 for a database
// without tables.
func schemaVersion(ctx context.Context, tx *sql.Tx) (int, error) {
	var tables, metas int
	err := tx.QueryRowContext(ctx, `SELECT count(*), count(*) FILTER (WHERE name = 'meta')
		FROM sqlite_schema WHERE type = 'table' AND name NOT LIKE 'sqlite\_%' ESCAPE '\'`).Scan(&tables, &metas)
	switch {
	case err != nil:
		return 0, err
	case tables == 0:
		return 0, nil
	case metas == 0:
		return 0, fmt.Errorf("%w: %d tables, none of them meta", ErrForeign, tables)
	}
	var version int
	err = tx.QueryRowContext(ctx, `SELECT value FROM meta WHERE key = 'schema_version'`).Scan(&version)
	if err == sql.ErrNoRows {
		return 0, fmt.Errorf("%w: meta holds no schema_version", ErrCorrupt)
	}
	return version, err
}
