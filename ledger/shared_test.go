package ledger_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/jobledger/jobledger/ledger"
	"github.com/jobledger/jobledger/ledger/ledgertype"
)

// sharedBytes is a store of bytes with a Shared side: a memory store whose
// Claim hands out one fixed job.
type sharedBytes struct {
	ledger.Ledger[[]byte, []byte]
	req []byte
}

func (s *sharedBytes) Claim(context.Context) (ledger.Snapshot, []byte, error) {
	if s.req == nil {
		return ledger.Snapshot{}, nil, ledger.ErrNoWork
	}
	return ledger.Snapshot{ID: "j1", State: ledgertype.Running}, s.req, nil
}
func (s *sharedBytes) Work() <-chan struct{}                  { return nil }
func (s *sharedBytes) OnEnd(func(ledger.Snapshot))            {}
func (s *sharedBytes) Now(context.Context) (time.Time, error) { return time.Unix(1, 0), nil }

func TestAsSharedLooksThroughCodecs(t *testing.T) {
	mem, err := ledger.NewMemory[[]byte, []byte](ledger.Config{MaxQueue: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer mem.Close()
	if _, ok := ledger.AsShared(mem); ok {
		t.Fatal("the memory store has no Shared side")
	}
	if _, ok := ledger.AsShared(ledger.WithCodecs(mem, ledger.String{}, ledger.String{})); ok {
		t.Fatal("WithCodecs of the memory store has no Shared side")
	}

	s := &sharedBytes{Ledger: mem, req: []byte("hello")}
	if _, ok := ledger.AsShared[[]byte, []byte](s); !ok {
		t.Fatal("AsShared missed a store of bytes that is Shared itself")
	}
	sh, ok := ledger.AsShared(ledger.WithCodecs(ledger.Ledger[[]byte, []byte](s), ledger.String{}, ledger.String{}))
	if !ok {
		t.Fatal("AsShared did not look through WithCodecs")
	}
	snap, req, err := sh.Claim(context.Background())
	if err != nil || snap.ID != "j1" || req != "hello" {
		t.Fatalf("Claim through the codec = %+v, %q, %v; want j1, \"hello\", nil", snap, req, err)
	}
	s.req = nil
	if _, _, err := sh.Claim(context.Background()); !errors.Is(err, ledger.ErrNoWork) {
		t.Fatalf("Claim with no work: %v, want ErrNoWork", err)
	}
}

// pinger is an optional interface of a store, for TestAsLooksThroughCodecs.
type pinger interface{ Ping() string }

type pingingBytes struct{ ledger.Ledger[[]byte, []byte] }

func (pingingBytes) Ping() string { return "pong" }

func TestAsLooksThroughCodecs(t *testing.T) {
	mem, err := ledger.NewMemory[[]byte, []byte](ledger.Config{MaxQueue: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer mem.Close()
	for name, tc := range map[string]struct {
		l    any
		want bool
	}{
		"without":                 {mem, false},
		"without, behind a codec": {ledger.WithCodecs(mem, ledger.String{}, ledger.String{}), false},
		"with":                    {pingingBytes{mem}, true},
		"with, behind a codec":    {ledger.WithCodecs(ledger.Ledger[[]byte, []byte](pingingBytes{mem}), ledger.String{}, ledger.String{}), true},
	} {
		p, ok := ledger.As[pinger](tc.l)
		if ok != tc.want || (ok && p.Ping() != "pong") {
			t.Errorf("%s: As found %v, %v; want found %v", name, p, ok, tc.want)
		}
	}
}
