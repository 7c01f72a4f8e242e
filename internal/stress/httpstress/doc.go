// Package httpstress drives jobserver processes and in-process servers
// through their HTTP API with recording clients: the HTTP level, the crash
// test and the replicas test of package stress's harness.
//
// # The HTTP level
//
// RunHTTP starts a server (jobapi, echo model) on 127.0.0.1 and records what
// real HTTP clients see through its API (HTTPClient, which sends each request
// through package client); linearizability.CheckHTTP checks
// that history. One submit in stress.Config.KeyedEvery sends an
// Idempotency-Key, under a small set of keys that the run's keyed submits
// take in turn (stress.KeyTurn, shared with the table level), so that replays,
// several submits on one fresh key at once, and 422s for another body
// happen; the crash and replicas tests send them too, across their
// restarts and replicas.
//
//	res, err := httpstress.RunHTTP(ctx, httpstress.DefaultHTTPConfig())
//	rep := linearizability.CheckHTTP(res.History, linearizability.CheckConfig{MaxQueue: res.Config.MaxQueue, KnowsTTL: true})
//
// # The crash test
//
// RunCrash starts a jobserver binary on a durable store, puts the HTTP
// level's clients on it, kills it with SIGKILL at random moments and starts
// it again on the same store, then drains a last life. After each restart
// it reads every acknowledged job (none may be gone, none seen ended may
// have changed); the history, restarts and all, is for CheckHTTP with
// CheckConfig.Retained set, since its retention evicts nothing.
//
//	res, err := httpstress.RunCrash(ctx, cfg) // cfg from DefaultCrashConfig, with Server, Store, Dir
//	rep := linearizability.CheckHTTP(res.History, linearizability.CheckConfig{MaxQueue: cfg.MaxQueue, Retained: true, KnowsTTL: true})
//
// # Replicas
//
// RunReplicas starts several jobserver replicas on one shared store (a
// PostgreSQL database), puts the HTTP level's clients on each (their reads
// pick jobs any replica admitted), kills one with SIGKILL mid-run and
// starts it again under its name, reads every acknowledged job through it,
// then drains through all of them. Its history too is for CheckHTTP with
// CheckConfig.Retained set.
//
//	res, err := httpstress.RunReplicas(ctx, cfg) // cfg from DefaultReplicasConfig, with Server, Store, Dir
//
// docs/verification.md describes the drivers, their end-of-run checks and
// the gates that run them.
package httpstress
