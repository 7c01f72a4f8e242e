package jobapi

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"image"
	"image/color"
	_ "image/gif"  // register GIF for image.Decode
	_ "image/jpeg" // register JPEG for image.Decode
	_ "image/png"  // register PNG for image.Decode
)

// Fingerprint is the default model. It decodes the request's image (PNG,
// JPEG or GIF) and returns its size, format, mean colour and a 64-bit
// difference hash: the image is reduced to 9x8 cells of mean luminance, and
// bit 8*y+x (most significant first) is set when cell (x, y) is brighter
// than cell (x+1, y). Similar images have hashes a few bits apart.
type Fingerprint struct{}

// FingerprintResult is what Fingerprint returns.
type FingerprintResult struct {
	Width     int       `json:"width"`
	Height    int       `json:"height"`
	Format    string    `json:"format"`
	MeanColor MeanColor `json:"mean_color"`
	// DHash is the difference hash as 16 lowercase hex digits.
	DHash string `json:"dhash"`
}

// MeanColor is the mean of every pixel, not premultiplied, 0-255.
type MeanColor struct {
	R uint8 `json:"r"`
	G uint8 `json:"g"`
	B uint8 `json:"b"`
	A uint8 `json:"a"`
}

// maxPixels bounds the images Fingerprint decodes, so that a small file
// declaring a huge size cannot take the server's memory.
const maxPixels = 1 << 26

// errNoImage is the detail of a request that has no image.
var errNoImage = errors.New("image is required")

// ValidateRequest refuses a request without an image.
func (Fingerprint) ValidateRequest(req Request) error {
	if len(req.Image) == 0 {
		return errNoImage
	}
	return nil
}

// Run decodes and fingerprints the image.
func (Fingerprint) Run(ctx context.Context, req Request) (any, error) {
	if len(req.Image) == 0 {
		return nil, errNoImage
	}
	cfg, format, err := image.DecodeConfig(bytes.NewReader(req.Image))
	if err != nil {
		return nil, fmt.Errorf("decode image: %w", err)
	}
	if cfg.Width <= 0 || cfg.Height <= 0 || int64(cfg.Width)*int64(cfg.Height) > maxPixels {
		return nil, fmt.Errorf("decode image: %dx%d is empty or over %d pixels", cfg.Width, cfg.Height, maxPixels)
	}
	img, _, err := image.Decode(bytes.NewReader(req.Image))
	if err != nil {
		return nil, fmt.Errorf("decode image: %w", err)
	}
	mean, err := meanColor(ctx, img)
	if err != nil {
		return nil, err
	}
	b := img.Bounds()
	return FingerprintResult{
		Width:     b.Dx(),
		Height:    b.Dy(),
		Format:    format,
		MeanColor: mean,
		DHash:     fmt.Sprintf("%016x", dHash(img)),
	}, nil
}

// meanColor averages every pixel of img, checking ctx once a row.
func meanColor(ctx context.Context, img image.Image) (MeanColor, error) {
	b := img.Bounds()
	var r, g, bl, a uint64
	for y := b.Min.Y; y < b.Max.Y; y++ {
		if err := ctx.Err(); err != nil {
			return MeanColor{}, context.Cause(ctx)
		}
		for x := b.Min.X; x < b.Max.X; x++ {
			c := color.NRGBAModel.Convert(img.At(x, y)).(color.NRGBA)
			r, g, bl, a = r+uint64(c.R), g+uint64(c.G), bl+uint64(c.B), a+uint64(c.A)
		}
	}
	n := uint64(b.Dx()) * uint64(b.Dy())
	return MeanColor{R: uint8(r / n), G: uint8(g / n), B: uint8(bl / n), A: uint8(a / n)}, nil
}

// dHash is the 64-bit difference hash of img (see Fingerprint).
func dHash(img image.Image) uint64 {
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
					sum += luminance(img.At(b.Min.X+x, b.Min.Y+y))
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

// luminance is the Rec. 601 luma of c, 0-255.
func luminance(c color.Color) float64 {
	n := color.NRGBAModel.Convert(c).(color.NRGBA)
	return 0.299*float64(n.R) + 0.587*float64(n.G) + 0.114*float64(n.B)
}
