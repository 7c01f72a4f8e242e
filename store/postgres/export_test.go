package postgres

import "context"

// DropListener terminates the listener connections on s's database, so
// that a test sees the store reconnect.
func (s *Store) DropListener(ctx context.Context) error { return s.dropListener(ctx) }

// Waiting is the number of Waits registered on s.
func (s *Store) Waiting() int { return s.waiting() }
