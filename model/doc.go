// Package model holds the models the job API runs, and the interface they
// implement: a Model takes a parsed Request and returns a result that
// encoding/json can marshal, honouring its context's deadline. Echo (a
// test and demo model) and Fingerprint (an image's size, mean colour and
// difference hash) are examples of writing one; a RequestValidator lets a
// model refuse a request before it is admitted.
//
// # Usage
//
//	upper := model.Func(func(_ context.Context, req model.Request) (any, error) {
//		return map[string]string{"task": strings.ToUpper(req.TaskID)}, nil
//	})
//	srv, err := jobapi.New(store, cfg, jobapi.Options{Model: upper})
package model
