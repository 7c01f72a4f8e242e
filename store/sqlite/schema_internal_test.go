package sqlite

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestMigrationsAreNumberedInOrder(t *testing.T) {
	ms, err := loadMigrations(migrationFiles, "migrations")
	require.NoError(t, err)
	for i, m := range ms {
		require.Equal(t, i+1, m.version, m.name)
		require.NotEmpty(t, m.sql)
	}
	require.Equal(t, len(ms), SchemaVersion)
}

func TestPendingMigrations(t *testing.T) {
	ms := []migration{{version: 1}, {version: 2}, {version: 3}}
	for version, want := range map[int][]migration{0: ms, 1: ms[1:], 3: {}} {
		got, err := pendingMigrations(ms, version)
		require.NoError(t, err)
		require.Equal(t, want, got, "from version %d", version)
	}
	_, err := pendingMigrations(ms, 4)
	require.ErrorIs(t, err, ErrNewerSchema)
	_, err = pendingMigrations(ms, -1)
	require.ErrorIs(t, err, ErrCorrupt)
}

func TestAdmit(t *testing.T) {
	for _, c := range []struct {
		depth, maxQueue int
		want            bool
	}{{0, 1, true}, {1, 1, false}, {0, 0, false}, {0, -5, false}, {2, 3, true}, {4, 3, false}} {
		require.Equal(t, c.want, admit(c.depth, c.maxQueue), "%+v", c)
	}
}

func TestQueue(t *testing.T) {
	q := newQueue()
	a, b, c := &op{id: "a"}, &op{id: "b"}, &op{id: "c"}
	for _, o := range []*op{a, b, c} {
		require.True(t, q.push(o))
	}
	require.Len(t, q.ready, 1, "one signal, however many pushes")
	require.Equal(t, []*op{a, b}, q.take(2, nil))
	require.Equal(t, int64(3), q.backlog.Load(), "taken is not answered")
	require.Equal(t, []*op{c}, q.take(2, nil))
	require.Empty(t, q.take(2, nil))
	d := &op{id: "d", reply: make(chan reply, 1)}
	require.True(t, q.push(d))
	require.Equal(t, []*op{d}, q.close())
	require.False(t, q.push(&op{}), "closed")
	q.answer(d, reply{})
	require.Equal(t, int64(3), q.backlog.Load())
}
