package main

import (
	"os"
	"path/filepath"

	"github.com/jobledger/jobledger/internal/lossyfs"
)

// disk is the lossyfs mount that -power-cut puts the store on: dir/disk,
// the durable state, served at dir/mnt.
type disk struct {
	durable, mnt string
	fs           *lossyfs.FS
}

// mountDisk mounts a fresh disk under dir.
func mountDisk(dir string) (*disk, error) {
	d := &disk{durable: filepath.Join(dir, "disk"), mnt: filepath.Join(dir, "mnt")}
	for _, p := range []string{d.durable, d.mnt} {
		if err := os.MkdirAll(p, 0o755); err != nil {
			return nil, err
		}
	}
	var err error
	d.fs, err = lossyfs.Mount(d.durable, d.mnt)
	return d, err
}

// cut is the power cut of a crash test's kill: the server is dead; what it
// had not synced is dropped, and the durable rest is mounted again.
func (d *disk) cut() error {
	if err := d.unmount(); err != nil {
		return err
	}
	var err error
	d.fs, err = lossyfs.Mount(d.durable, d.mnt)
	return err
}

// unmount cuts the power and unmounts; a no-op when not mounted.
func (d *disk) unmount() error {
	if d.fs == nil {
		return nil
	}
	fs := d.fs
	d.fs = nil
	fs.Cut()
	return fs.Unmount()
}
