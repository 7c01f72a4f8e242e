package postgres

import (
	"time"

	"github.com/jobledger/jobledger/ledger"
)

// listenerHealth is the listener's state as last stored in Store.health;
// a stored value is never changed. While the listener is down, the Waits
// poll their jobs (wait.go), since no notification reaches them.
type listenerHealth struct {
	up    bool
	since time.Time     // when it came up, or went down
	err   error         // while down: the latest failure
	down  chan struct{} // while up: closed when it goes down; nil while down
}

// ListenerHealth reports whether the listener, which hears the ends and
// admissions of every replica, is connected and LISTENing, since when it
// has been so, or not, and while it is not, the latest failure. While it
// is down, a Wait reads its job every Lease/3 instead of being woken;
// Work and OnEnd hear nothing until the reconnect, which makes up for it.
func (s *Store) ListenerHealth() (ok bool, since time.Time, err error) {
	h := s.health.Load()
	if s.closed.Load() {
		return false, h.since, ledger.ErrClosed
	}
	return h.up, h.since, h.err
}

// listenerUp records that the listener is connected and LISTENing, and
// logs it if it was down.
func (s *Store) listenerUp() {
	was := s.health.Load()
	if was != nil && was.up {
		return
	}
	now := time.Now()
	s.health.Store(&listenerHealth{up: true, since: now, down: make(chan struct{})})
	if was != nil {
		s.opts.Logger.Info("postgres: the listener reconnected", "replica", s.opts.Replica,
			"down_for", now.Sub(was.since).String())
	}
}

// listenerDown records that the listener's connection failed with err, or
// that a reconnect did, and logs it if it was up. Its Waits then poll.
func (s *Store) listenerDown(err error) {
	was := s.health.Load()
	if !was.up {
		s.health.Store(&listenerHealth{since: was.since, err: err})
		return
	}
	s.health.Store(&listenerHealth{since: time.Now(), err: err})
	close(was.down)
	s.opts.Logger.Warn("postgres: the listener lost its connection; waits poll their jobs until it reconnects",
		"replica", s.opts.Replica, "error", err.Error())
}
