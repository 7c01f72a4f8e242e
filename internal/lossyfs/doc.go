// Package lossyfs is a FUSE file system for tests that loses, at a
// simulated power cut, every write that was not made durable: file data
// and sizes not fsynced (fsync or fdatasync) since they were written, and
// directory entries created, removed or renamed since that directory was
// last fsynced. It plays the part LazyFS plays for Jepsen.
//
// # Usage
//
//	f, err := lossyfs.Mount(disk, mnt) // serve disk at mnt; needs root
//	// ... a process writes under mnt, and is killed ...
//	f.Cut()            // nothing written from now on is durable
//	err = f.Unmount()  // drop what was not synced: disk holds the rest
//	f, err = lossyfs.Mount(disk, mnt) // power back on
//
// # Model
//
// Mount copies disk (the durable state) into a scratch directory and
// serves that copy, read and written through, at the mount point: the
// processes on it see their own writes at once, as through a page cache.
// An fsync of a file copies the ranges written since its last fsync, and
// its size, into the file's durable copy under disk; an fsync of a
// directory makes disk's entries of that directory the live ones (a file
// entry pointing at the file's durable copy, a subdirectory created if
// missing). After Cut nothing more is made durable; Unmount throws the
// scratch copy away, so disk holds exactly the durable state. A file whose
// data was fsynced but whose name was never made durable is gone after a
// cut; an unlink not followed by the directory's fsync is undone. The
// scratch copy lives in the system's temporary directory: the unsynced
// writes are the page cache's, kept apart from disk, not the daemon's heap.
//
// Files are served without direct I/O, so shared writable mmap works (an
// SQLite -shm file is mmapped; with direct I/O the kernel refuses a shared
// mapping unless the daemon sets FUSE_DIRECT_IO_ALLOW_MMAP); the kernel's
// page cache is written through to the scratch copy (FUSE without
// writeback caching) and dropped by the unmount. Locks are the kernel's
// own, local to the mount. The process that mounts must not mmap files of
// its own mount: a page fault that waits for the FUSE server stalls the Go
// runtime's stop-the-world, and the server with it. Programs under test
// run in child processes.
//
// What it does not model: a cut that keeps some of the unsynced writes
// (it loses them all, as LazyFS's clear-cache fault does; a real disk may
// keep any subset, torn pages included), a subdirectory's entry moved by
// rename (it is created empty where the rename put it), and durability of
// a directory whose parent was never fsynced (its fsync creates it in
// disk).
package lossyfs
