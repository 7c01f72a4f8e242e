package lossyfs

import (
	"context"
	"path/filepath"
	"syscall"

	gofs "github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"
)

// node is a loopback node on the scratch copy that tells its FS what is
// written, truncated, synced and unlinked.
type node struct {
	*gofs.LoopbackNode
	fsys *FS
}

// handle is a loopback file handle that the kernel may not bypass: FUSE
// passthrough would send reads and writes to the scratch file directly.
type handle struct{ *gofs.LoopbackFile }

// PassthroughFd refuses passthrough.
func (handle) PassthroughFd() (int, bool) { return 0, false }

var (
	_ gofs.NodeWrapChilder    = (*node)(nil)
	_ gofs.NodeOpener         = (*node)(nil)
	_ gofs.NodeCreater        = (*node)(nil)
	_ gofs.NodeOpendirHandler = (*node)(nil)
	_ gofs.NodeWriter         = (*node)(nil)
	_ gofs.NodeWritever       = (*node)(nil)
	_ gofs.NodeSetattrer      = (*node)(nil)
	_ gofs.NodeAllocater      = (*node)(nil)
	_ gofs.NodeCopyFileRanger = (*node)(nil)
	_ gofs.NodeFsyncer        = (*node)(nil)
	_ gofs.NodeUnlinker       = (*node)(nil)
	_ gofs.NodeRenamer        = (*node)(nil)
)

func (n *node) WrapChild(_ context.Context, ops gofs.InodeEmbedder) gofs.InodeEmbedder {
	return &node{LoopbackNode: ops.(*gofs.LoopbackNode), fsys: n.fsys}
}

func (n *node) ino() uint64 { return n.StableAttr().Ino }

// path is the node's path in the scratch copy.
func (n *node) path() string { return filepath.Join(n.fsys.work, n.Path(nil)) }

func (n *node) Open(ctx context.Context, flags uint32) (gofs.FileHandle, uint32, syscall.Errno) {
	fh, fl, errno := n.LoopbackNode.Open(ctx, flags)
	if errno != 0 {
		return nil, 0, errno
	}
	return handle{fh.(*gofs.LoopbackFile)}, fl, 0
}

func (n *node) Create(ctx context.Context, name string, flags, mode uint32, out *fuse.EntryOut) (*gofs.Inode, gofs.FileHandle, uint32, syscall.Errno) {
	in, fh, fl, errno := n.LoopbackNode.Create(ctx, name, flags, mode, out)
	if errno != 0 {
		return nil, nil, 0, errno
	}
	return in, handle{fh.(*gofs.LoopbackFile)}, fl, 0
}

// dirHandle is the loopback's directory handle without its Fsyncdir, so
// that a directory's fsync comes to node.Fsync.
type dirHandle struct{ ds gofs.FileHandle }

func (h dirHandle) Readdirent(ctx context.Context) (*fuse.DirEntry, syscall.Errno) {
	return h.ds.(gofs.FileReaddirenter).Readdirent(ctx)
}

func (h dirHandle) Seekdir(ctx context.Context, off uint64) syscall.Errno {
	return h.ds.(gofs.FileSeekdirer).Seekdir(ctx, off)
}

func (h dirHandle) Releasedir(ctx context.Context, flags uint32) {
	h.ds.(gofs.FileReleasedirer).Releasedir(ctx, flags)
}

func (n *node) OpendirHandle(ctx context.Context, flags uint32) (gofs.FileHandle, uint32, syscall.Errno) {
	ds, fl, errno := n.LoopbackNode.OpendirHandle(ctx, flags)
	if errno != 0 {
		return nil, 0, errno
	}
	return dirHandle{ds}, fl, 0
}

// Tmpfile is refused: its handle would be the loopback's own.
func (n *node) Tmpfile(context.Context, uint32, uint32, *fuse.EntryOut) (*gofs.Inode, gofs.FileHandle, uint32, syscall.Errno) {
	return nil, nil, 0, syscall.EOPNOTSUPP
}

func (n *node) Write(ctx context.Context, fh gofs.FileHandle, data []byte, off int64) (uint32, syscall.Errno) {
	if n.fsys.isCut() {
		return 0, syscall.EIO
	}
	fw, ok := fh.(gofs.FileWriter)
	if !ok {
		return 0, syscall.EBADF
	}
	w, errno := fw.Write(ctx, data, off)
	n.fsys.written(n.ino(), off, off+int64(w))
	return w, errno
}

func (n *node) Writev(ctx context.Context, fh gofs.FileHandle, data [][]byte, off int64) (uint32, syscall.Errno) {
	var all []byte
	for _, d := range data {
		all = append(all, d...)
	}
	return n.Write(ctx, fh, all, off)
}

func (n *node) Setattr(ctx context.Context, fh gofs.FileHandle, in *fuse.SetAttrIn, out *fuse.AttrOut) syscall.Errno {
	size, ok := in.GetSize()
	if ok {
		if n.fsys.isCut() {
			return syscall.EIO
		}
		n.fsys.truncated(n.ino(), int64(size))
	}
	return n.LoopbackNode.Setattr(ctx, fh, in, out)
}

func (n *node) Allocate(ctx context.Context, fh gofs.FileHandle, off, size uint64, mode uint32) syscall.Errno {
	if n.fsys.isCut() {
		return syscall.EIO
	}
	fa, ok := fh.(gofs.FileAllocater)
	if !ok {
		return syscall.EBADF
	}
	errno := fa.Allocate(ctx, off, size, mode)
	n.fsys.written(n.ino(), int64(off), int64(off+size))
	return errno
}

// CopyFileRange is left to the kernel, which then reads and writes.
func (n *node) CopyFileRange(context.Context, gofs.FileHandle, uint64, *gofs.Inode, gofs.FileHandle, uint64, uint64, uint64) (uint32, syscall.Errno) {
	return 0, syscall.ENOSYS
}

// Fsync makes a file's writes durable, or a directory's entries.
func (n *node) Fsync(_ context.Context, fh gofs.FileHandle, _ uint32) syscall.Errno {
	if n.IsDir() {
		return gofs.ToErrno(n.fsys.syncDir(n.Path(nil)))
	}
	h, ok := fh.(handle)
	if !ok {
		return syscall.EBADF
	}
	fd, ok := h.LoopbackFile.PassthroughFd() // the scratch file's descriptor
	if !ok {
		return syscall.EBADF
	}
	return gofs.ToErrno(n.fsys.syncFile(n.ino(), fd))
}

func (n *node) Unlink(ctx context.Context, name string) syscall.Errno {
	if n.fsys.isCut() {
		return syscall.EIO
	}
	var st syscall.Stat_t
	p := filepath.Join(n.path(), name)
	last := syscall.Lstat(p, &st) == nil && st.Mode&syscall.S_IFMT == syscall.S_IFREG && st.Nlink == 1
	errno := n.LoopbackNode.Unlink(ctx, name)
	if errno == 0 && last {
		n.fsys.forget(st.Ino)
	}
	return errno
}

func (n *node) Rename(ctx context.Context, name string, newParent gofs.InodeEmbedder, newName string, flags uint32) syscall.Errno {
	if n.fsys.isCut() {
		return syscall.EIO
	}
	var st, src syscall.Stat_t
	to := filepath.Join(newParent.EmbeddedInode().Path(nil), newName)
	replaced := flags&unixRenameExchange == 0 &&
		syscall.Lstat(filepath.Join(n.fsys.work, to), &st) == nil &&
		syscall.Lstat(filepath.Join(n.path(), name), &src) == nil &&
		st.Ino != src.Ino && st.Mode&syscall.S_IFMT == syscall.S_IFREG && st.Nlink == 1
	errno := n.LoopbackNode.Rename(ctx, name, newParent, newName, flags)
	if errno == 0 && replaced {
		n.fsys.forget(st.Ino)
	}
	return errno
}

// unixRenameExchange is RENAME_EXCHANGE: both names stay.
const unixRenameExchange = 2
