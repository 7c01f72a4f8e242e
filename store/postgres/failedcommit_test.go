package postgres_test

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jobledger/jobledger/ledger"
	"github.com/jobledger/jobledger/ledger/ledgertype"
)

// poisonCommits makes the commit of any transaction that gives a job the
// error "poison" fail: a deferred constraint trigger, checked at COMMIT,
// after everything else in the transaction ran.
const poisonCommits = `
CREATE FUNCTION poison() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
	IF NEW.error = 'poison' THEN
		RAISE EXCEPTION 'poisoned commit';
	END IF;
	RETURN NULL;
END $$;
CREATE CONSTRAINT TRIGGER poison AFTER UPDATE ON jobs
	DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION poison();`

// TestFailedEndNotifiesNobody: an end whose commit fails changes nothing
// and wakes nobody, on any replica: its notification is part of its
// transaction, and PostgreSQL drops it with the transaction. A waiter on
// another replica then sees only the end that did commit. Regression: a
// notification sent outside the end's transaction (on another
// connection) reports an end that never happened.
func TestFailedEndNotifiesNobody(t *testing.T) {
	t.Parallel()
	dsn := newDatabase(t)
	a := openStore(t, dsn, ledger.Config{MaxQueue: 8})
	b := openStore(t, dsn, ledger.Config{MaxQueue: 8})
	execSQL(t, dsn, poisonCommits)
	id, _, err := a.Submit(ctx, ledger.Submission{TaskID: "t"}, []byte("req"))
	require.NoError(t, err)
	_, err = a.Start(ctx, id)
	require.NoError(t, err)
	got := waitAsync(b, id)
	requireBlocked(t, b, got)

	_, err = a.Fail(ctx, id, errors.New("poison"))
	require.Error(t, err, "the commit fails")
	snap, err := a.Snapshot(ctx, id)
	require.NoError(t, err)
	require.Equal(t, ledgertype.Running, snap.State, "the failed end changed nothing")
	require.Equal(t, 1, a.Stats().Depth)

	want, err := a.Finish(ctx, id, []byte("res"))
	require.NoError(t, err)
	r := receive(t, got)
	require.NoError(t, r.err)
	require.Equal(t, want, r.snap, "the waiter saw the end that committed, and only it")
}
