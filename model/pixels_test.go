package model

import (
	"context"
	"fmt"
	"image"
	"image/color"
	"image/color/palette"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jobledger/jobledger/internal/benchcmp"
)

// The dumb reference: the fingerprint's pixel loops as they were before
// the fast paths, one img.At and one color.NRGBAModel.Convert a pixel.

func meanColorAt(img image.Image) MeanColor {
	b := img.Bounds()
	var r, g, bl, a uint64
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			c := color.NRGBAModel.Convert(img.At(x, y)).(color.NRGBA)
			r, g, bl, a = r+uint64(c.R), g+uint64(c.G), bl+uint64(c.B), a+uint64(c.A)
		}
	}
	n := uint64(b.Dx()) * uint64(b.Dy())
	return MeanColor{R: uint8(r / n), G: uint8(g / n), B: uint8(bl / n), A: uint8(a / n)}
}

func dHashAt(img image.Image) uint64 {
	const cols, rows = 9, 8
	var cell [rows][cols]float64
	b := img.Bounds()
	w, h := b.Dx(), b.Dy()
	for cy := range rows {
		y0, y1 := span(cy, rows, h)
		for cx := range cols {
			x0, x1 := span(cx, cols, w)
			var sum float64
			for y := y0; y < y1; y++ {
				for x := x0; x < x1; x++ {
					sum += luminanceAt(img.At(b.Min.X+x, b.Min.Y+y))
				}
			}
			cell[cy][cx] = sum / float64((y1-y0)*(x1-x0))
		}
	}
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

func luminanceAt(c color.Color) float64 {
	n := color.NRGBAModel.Convert(c).(color.NRGBA)
	return 0.299*float64(n.R) + 0.587*float64(n.G) + 0.114*float64(n.B)
}

// randomImages returns an image of every type the row readers know, and a
// few they do not, w x h with origin at (ox, oy), every byte random.
func randomImages(rng *rand.Rand, ox, oy, w, h int) map[string]image.Image {
	r := image.Rect(ox, oy, ox+w, oy+h)
	fill := func(p []byte) {
		for i := range p {
			p[i] = byte(rng.Uint32())
		}
	}
	imgs := map[string]image.Image{}
	add := func(name string, img image.Image, pix ...[]byte) {
		for _, p := range pix {
			fill(p)
		}
		imgs[name] = img
	}
	nrgba := image.NewNRGBA(r)
	add("NRGBA", nrgba, nrgba.Pix)
	rgba := image.NewRGBA(r) // random bytes: not all valid premultiplied colours, on purpose
	add("RGBA", rgba, rgba.Pix)
	n64 := image.NewNRGBA64(r)
	add("NRGBA64", n64, n64.Pix)
	r64 := image.NewRGBA64(r)
	add("RGBA64", r64, r64.Pix)
	gray := image.NewGray(r)
	add("Gray", gray, gray.Pix)
	g16 := image.NewGray16(r)
	add("Gray16", g16, g16.Pix)
	cmyk := image.NewCMYK(r)
	add("CMYK", cmyk, cmyk.Pix)
	for _, ratio := range []image.YCbCrSubsampleRatio{
		image.YCbCrSubsampleRatio444, image.YCbCrSubsampleRatio422, image.YCbCrSubsampleRatio420,
		image.YCbCrSubsampleRatio440, image.YCbCrSubsampleRatio411, image.YCbCrSubsampleRatio410,
	} {
		m := image.NewYCbCr(r, ratio)
		add("YCbCr"+strings.TrimPrefix(ratio.String(), "YCbCrSubsampleRatio"), m, m.Y, m.Cb, m.Cr)
	}
	// A palette of every colour type, with alpha, and fewer than 256
	// entries, as image/png and image/gif return them.
	pal := color.Palette{color.NRGBA{1, 2, 3, 4}, color.RGBA{9, 8, 7, 200}, color.Gray{77}, color.Transparent}
	pal = append(pal, palette.WebSafe[:100]...)
	pm := image.NewPaletted(r, pal)
	for i := range pm.Pix {
		pm.Pix[i] = byte(rng.IntN(len(pal)))
	}
	imgs["Paletted"] = pm
	alpha := image.NewAlpha(r)
	add("Alpha (At)", alpha, alpha.Pix)
	nya := image.NewNYCbCrA(r, image.YCbCrSubsampleRatio420)
	add("NYCbCrA (At)", nya, nya.Y, nya.Cb, nya.Cr, nya.A)
	// A sub-image: its Pix starts before its bounds.
	sub := image.NewNRGBA(image.Rect(ox-3, oy-2, ox+w+5, oy+h+1))
	fill(sub.Pix)
	imgs["NRGBA sub-image"] = sub.SubImage(r)
	return imgs
}

// TestRowReaderMatchesAt compares the fast pixel paths of the fingerprint
// (newRowReader, pixelStats) with the At-based code they replaced,
// pixel by pixel and result by result, on every image type and on sizes
// that repeat pixels across dHash cells (narrower than 9, shorter than 8).
func TestRowReaderMatchesAt(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, size := range []struct{ ox, oy, w, h int }{
		{0, 0, 1, 1}, {0, 0, 2, 1}, {3, -4, 1, 17}, {0, 0, 9, 8}, {-5, 7, 31, 13}, {2, 1, 70, 40}, {0, 0, 5000, 2},
	} {
		for name, img := range randomImages(rng, size.ox, size.oy, size.w, size.h) {
			t.Run(fmt.Sprintf("%s %dx%d", name, size.w, size.h), func(t *testing.T) {
				b := img.Bounds()
				read := newRowReader(img)
				row := make([]color.NRGBA, b.Dx())
				for y := b.Min.Y; y < b.Max.Y; y++ {
					read(row, b.Min.X, y)
					for i, got := range row {
						want := color.NRGBAModel.Convert(img.At(b.Min.X+i, y)).(color.NRGBA)
						require.Equal(t, want, got, "pixel (%d, %d)", b.Min.X+i, y)
					}
				}
				mean, hash, err := pixelStats(context.Background(), img)
				require.NoError(t, err)
				require.Equal(t, meanColorAt(img), mean)
				require.Equal(t, dHashAt(img), hash)
			})
		}
	}
}

// BenchmarkPixelLoops compares pixelStats, the mean colour and the dHash,
// with
// the At-based reference, on a 1024x1024 image of the types the decoders
// return most. ratio is the speed-up; divide the ns/op by 1,048,576 for
// the cost of a pixel.
func BenchmarkPixelLoops(b *testing.B) {
	rng := rand.New(rand.NewPCG(3, 4))
	imgs := randomImages(rng, 0, 0, 1024, 1024)
	for _, name := range []string{"NRGBA", "RGBA", "YCbCr420", "Paletted", "Gray", "NRGBA64"} {
		img := imgs[name]
		b.Run(name, func(b *testing.B) {
			ctx := context.Background()
			benchcmp.Alternate(b, 1, func() error {
				_, _, err := pixelStats(ctx, img)
				return err
			}, func() error {
				meanColorAt(img)
				dHashAt(img)
				return nil
			})
		})
	}
}
