package model

import (
	"context"
	"image"
	"image/color"
)

// The fingerprint's pixel loops: the mean colour and the difference hash
// (see Fingerprint), over pixels read by a rowReader. Their results are
// those of plain loops over img.At, to the bit, and they look at the
// context every checkEvery pixels.

// checkEvery is how many pixels the loops read between two looks at the
// context: some microseconds of work.
const checkEvery = 4096

// The dHash grid: cols x rows cells, compared left to right.
const cols, rows = 9, 8

// pixelStats returns the mean colour and the dHash of img, which is not
// empty. When every pixel falls in exactly one cell (img is at least
// cols x rows) one pass computes both; a smaller image repeats pixels
// across cells, and its mean takes a pass of its own.
func pixelStats(ctx context.Context, img image.Image) (MeanColor, uint64, error) {
	b := img.Bounds()
	n := uint64(b.Dx()) * uint64(b.Dy())
	if n == 0 {
		return MeanColor{}, 0, errEmptyImage
	}
	read := newRowReader(img)
	t := &ticker{ctx: ctx}
	buf := make([]color.NRGBA, min(checkEvery, b.Dx()))
	var sums channelSums
	onePass := b.Dx() >= cols && b.Dy() >= rows
	if !onePass {
		for y := b.Min.Y; y < b.Max.Y; y++ {
			if err := readSpan(t, read, buf, b.Min.X, b.Max.X, y, sums.add); err != nil {
				return MeanColor{}, 0, err
			}
		}
	}
	cells, err := cellLuma(t, read, buf, b, onePass, &sums)
	if err != nil {
		return MeanColor{}, 0, err
	}
	return sums.mean(n), dHash(cells), nil
}

// channelSums sums the channels of pixels.
type channelSums struct{ r, g, b, a uint64 }

func (s *channelSums) add(seg []color.NRGBA) {
	for _, c := range seg {
		s.r, s.g, s.b, s.a = s.r+uint64(c.R), s.g+uint64(c.G), s.b+uint64(c.B), s.a+uint64(c.A)
	}
}

// mean is the mean colour of n pixels, not premultiplied.
func (s *channelSums) mean(n uint64) MeanColor {
	return MeanColor{R: uint8(s.r / n), G: uint8(s.g / n), B: uint8(s.b / n), A: uint8(s.a / n)}
}

// cellLuma returns the mean luminance of each cell of the grid over the
// bounds b, adding every pixel it reads to sums as well when addSums is
// set. A cell sums its pixels row by row, left to right, as the reference
// does, so that the floating-point sums are the same.
func cellLuma(t *ticker, read rowReader, buf []color.NRGBA, b image.Rectangle, addSums bool, sums *channelSums) (*[rows][cols]float64, error) {
	var cell [rows][cols]float64
	w, h := b.Dx(), b.Dy()
	for cy := range rows {
		y0, y1 := span(cy, rows, h)
		for y := y0; y < y1; y++ {
			for cx := range cols {
				x0, x1 := span(cx, cols, w)
				sum := &cell[cy][cx]
				err := readSpan(t, read, buf, b.Min.X+x0, b.Min.X+x1, b.Min.Y+y, func(seg []color.NRGBA) {
					s := *sum // the same additions, in the same order
					for _, c := range seg {
						s += luma(c)
					}
					*sum = s
					if addSums {
						sums.add(seg)
					}
				})
				if err != nil {
					return nil, err
				}
			}
		}
		for cx := range cols {
			x0, x1 := span(cx, cols, w)
			cell[cy][cx] /= float64((y1 - y0) * (x1 - x0))
		}
	}
	return &cell, nil
}

// dHash sets bit 8*y+x of the hash, most significant first, when cell
// (x, y) is brighter than cell (x+1, y).
func dHash(cell *[rows][cols]float64) uint64 {
	var hash uint64
	for y := range rows {
		for x := range cols - 1 {
			hash <<= 1
			if cell[y][x] > cell[y][x+1] {
				hash |= 1
			}
		}
	}
	return hash
}

// span returns the pixel range [lo, hi) of cell i of n over size pixels; it
// is never empty, so an image narrower than n cells repeats pixels.
func span(i, n, size int) (lo, hi int) {
	lo = i * size / n
	hi = (i + 1) * size / n
	if hi <= lo {
		hi = lo + 1
	}
	return lo, hi
}

// luma is the Rec. 601 luma of c, 0-255.
func luma(c color.NRGBA) float64 {
	return 0.299*float64(c.R) + 0.587*float64(c.G) + 0.114*float64(c.B)
}

// ticker counts pixels and looks at ctx once every checkEvery of them.
type ticker struct {
	ctx  context.Context
	left int
}

// add counts n pixels about to be read, and returns the context's cause
// when it is time to look and the context has ended.
func (t *ticker) add(n int) error {
	if t.left -= n; t.left > 0 {
		return nil
	}
	t.left = checkEvery
	if t.ctx.Err() != nil {
		return context.Cause(t.ctx)
	}
	return nil
}

// readSpan reads the pixels [x0, x1) of row y in pieces of at most
// len(buf), calling f on each in order, and stops with t's error.
func readSpan(t *ticker, read rowReader, buf []color.NRGBA, x0, x1, y int, f func([]color.NRGBA)) error {
	for x := x0; x < x1; {
		seg := buf[:min(len(buf), x1-x)]
		if err := t.add(len(seg)); err != nil {
			return err
		}
		read(seg, x, y)
		f(seg)
		x += len(seg)
	}
	return nil
}
