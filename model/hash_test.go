package model

import (
	"context"
	"errors"
	"image"
	"image/color"
	"testing"

	"github.com/stretchr/testify/require"
)

// countingImage is a one-colour image of any size that counts the pixels
// read from it (through At: it is no type the fast paths know) and cancels
// ctx at pixel number cancelAt.
type countingImage struct {
	rect     image.Rectangle
	reads    int
	cancelAt int
	cancel   context.CancelCauseFunc
}

var errCancelled = errors.New("cancelled by the image")

func (m *countingImage) ColorModel() color.Model { return color.NRGBAModel }
func (m *countingImage) Bounds() image.Rectangle { return m.rect }
func (m *countingImage) At(x, y int) color.Color {
	m.reads++
	if m.reads == m.cancelAt {
		m.cancel(errCancelled)
	}
	return color.NRGBA{R: 10, G: 20, B: 30, A: 255}
}

// TestFingerprintIgnoredDeadlineInsideRow pins the bug where the pixel
// loops looked at the context once a row, and the hash never: a PNG of
// 67,108,864 x 1 pixels ran 55 s past a 4 s deadline, its worker busy all
// along. Now the loops stop within checkEvery pixels of the context's end,
// wherever it falls: inside the one row of the mean, or inside the hash,
// in one pass or two.
func TestFingerprintIgnoredDeadlineInsideRow(t *testing.T) {
	const wide = 1 << 20
	for _, c := range []struct {
		name     string
		rect     image.Rectangle
		cancelAt int
	}{
		{"one row, mean pass", image.Rect(0, 0, wide, 1), 1000},
		{"one row, hash pass", image.Rect(0, 0, wide, 1), wide + 1000},
		{"one row, hash pass, late", image.Rect(0, 0, wide, 1), 5*wide + 7},
		{"one column, hash pass", image.Rect(0, 0, 1, wide), wide + 1000},
		{"one pass", image.Rect(0, 0, wide/8, 8), 1000},
		{"one pass, last row", image.Rect(0, 0, wide/8, 8), wide - 3*checkEvery},
	} {
		t.Run(c.name, func(t *testing.T) {
			ctx, cancel := context.WithCancelCause(context.Background())
			defer cancel(nil)
			img := &countingImage{rect: c.rect, cancelAt: c.cancelAt, cancel: cancel}
			_, _, err := pixelStats(ctx, img)
			require.ErrorIs(t, err, errCancelled)
			require.LessOrEqual(t, img.reads-c.cancelAt, checkEvery,
				"pixels read after the context ended")
		})
	}
}

// TestPixelLoopsStopAtContextEnd: a context that has already ended stops
// the loops, in one pass or two, with its cause; an empty image is an
// error, not a division by zero.
func TestPixelLoopsStopAtContextEnd(t *testing.T) {
	ctx, cancel := context.WithCancelCause(context.Background())
	cancel(errCancelled)
	for _, r := range []image.Rectangle{image.Rect(0, 0, 3*checkEvery, 9), image.Rect(0, 0, 3*checkEvery, 3)} {
		_, _, err := pixelStats(ctx, image.NewNRGBA(r))
		require.ErrorIs(t, err, errCancelled)
	}
	for _, r := range []image.Rectangle{image.Rect(0, 0, 0, 5), image.Rect(2, 2, 2, 2)} {
		_, _, err := pixelStats(context.Background(), image.NewNRGBA(r))
		require.ErrorIs(t, err, errEmptyImage)
	}
}
