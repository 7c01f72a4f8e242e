package model

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"image"
	_ "image/gif"  // register GIF for image.Decode
	_ "image/jpeg" // register JPEG for image.Decode
	_ "image/png"  // register PNG for image.Decode
	"io"
	"sync"
)

// DefaultMaxPixels is Fingerprint's bound when its MaxPixels is unset:
// 2^24 pixels, 64 MiB as RGBA.
const DefaultMaxPixels = 1 << 24

// Fingerprint is the default model. It decodes the request's image (PNG,
// JPEG or GIF) and returns its size, format, mean colour and a 64-bit
// difference hash: the image is reduced to 9x8 cells of mean luminance, and
// bit 8*y+x (most significant first) is set when cell (x, y) is brighter
// than cell (x+1, y). Similar images have hashes a few bits apart.
//
// Run honours its context throughout, so that it returns, and its worker is
// free, within milliseconds of the deadline whatever the image
// (docs/performance.md has the figures): the pixel loops look at the
// context every checkEvery pixels, and decoding runs in a goroutine of its
// own that Run leaves at the deadline (see decode).
type Fingerprint struct {
	// MaxPixels bounds width times height, checked from the image's header
	// before decoding, so that a small file declaring a huge image cannot
	// take the server's memory and time. Zero means DefaultMaxPixels.
	// jobapi sets it from its Config.MaxPixels.
	MaxPixels int
}

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

var (
	// errNoImage is the detail of a request that has no image.
	errNoImage = errors.New("image is required")
	// errTooManyPixels refuses, with 422, an image whose header declares
	// more than max_pixels.
	errTooManyPixels = &UnprocessableError{Detail: "image exceeds max_pixels"}
	// errEmptyImage fails an image with no pixels. Its header can declare
	// a size while its frame is empty (a GIF's frame is not its logical
	// screen), so it is checked on the decoded bounds as well.
	errEmptyImage = errors.New("decode image: empty image")
)

// maxPixels is f's bound, DefaultMaxPixels when unset.
func (f Fingerprint) maxPixels() int64 {
	if f.MaxPixels <= 0 {
		return DefaultMaxPixels
	}
	return int64(f.MaxPixels)
}

// ValidateRequest refuses a request without an image (400), and one whose
// image header declares more than MaxPixels pixels (422): the job is never
// admitted. An image whose header does not decode is left to Run, which
// fails the job.
func (f Fingerprint) ValidateRequest(req Request) error {
	if len(req.Image) == 0 {
		return errNoImage
	}
	if cfg, _, err := image.DecodeConfig(bytes.NewReader(req.Image)); err == nil && f.tooLarge(cfg) {
		return errTooManyPixels
	}
	return nil
}

// tooLarge reports whether an image of header cfg is over f's bound.
func (f Fingerprint) tooLarge(cfg image.Config) bool {
	return int64(cfg.Width)*int64(cfg.Height) > f.maxPixels()
}

// Run decodes and fingerprints the image.
func (f Fingerprint) Run(ctx context.Context, req Request) (any, error) {
	if len(req.Image) == 0 {
		return nil, errNoImage
	}
	cfg, format, err := image.DecodeConfig(bytes.NewReader(req.Image))
	switch {
	case err != nil:
		return nil, fmt.Errorf("decode image: %w", err)
	case cfg.Width <= 0 || cfg.Height <= 0:
		return nil, errEmptyImage
	case f.tooLarge(cfg):
		return nil, fmt.Errorf("decode image: %w", errTooManyPixels)
	}
	img, err := decode(ctx, req.Image)
	if err != nil {
		return nil, err
	}
	if img.Bounds().Empty() {
		return nil, errEmptyImage
	}
	mean, hash, err := pixelStats(ctx, img)
	if err != nil {
		return nil, err
	}
	b := img.Bounds()
	return FingerprintResult{
		Width:     b.Dx(),
		Height:    b.Dy(),
		Format:    format,
		MeanColor: mean,
		DHash:     fmt.Sprintf("%016x", hash),
	}, nil
}

// decoding counts the decode goroutines still running, including those
// whose Run has returned.
var decoding sync.WaitGroup

// decode decodes data, or returns ctx's cause as soon as ctx ends.
//
// The standard decoders take no context. They read as they decode, and
// read through a ctxReader, so they stop at their first read after the
// deadline; but some steps read nothing for a long while: image/png
// unfilters a whole row, 128 MB for a 16-bit row of 2^24 pixels, and
// image/jpeg rebuilds a progressive image only after its last byte, each
// a few hundred ms at max_pixels. Waiting for them would hold the worker
// that long past the deadline, so the decoder runs in its own goroutine and
// is left to finish that step on its own: it then fails its next read and
// ends, its memory with it. A panic in the decoder is raised again in Run,
// where the server turns it into a failed job, unless Run has returned.
func decode(ctx context.Context, data []byte) (image.Image, error) {
	type result struct {
		img   image.Image
		err   error
		panic any
	}
	done := make(chan result, 1)
	decoding.Add(1)
	go func() {
		defer decoding.Done()
		defer func() {
			if v := recover(); v != nil {
				done <- result{panic: v}
			}
		}()
		img, _, err := image.Decode(ctxReader{ctx, bytes.NewReader(data)})
		done <- result{img: img, err: err}
	}()
	select {
	case r := <-done:
		switch {
		case r.panic != nil:
			panic(r.panic)
		case ctx.Err() != nil:
			return nil, context.Cause(ctx) // the decoder's error may be ours
		case r.err != nil:
			return nil, fmt.Errorf("decode image: %w", r.err)
		}
		return r.img, nil
	case <-ctx.Done():
		return nil, context.Cause(ctx)
	}
}

// ctxReader fails every Read once ctx has ended. The standard decoders
// take no context, but they read as they decode (image.Decode buffers 4
// KiB at a time, and image/png inflates as it reads), so a decode aborts at
// its next read after the deadline.
type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c ctxReader) Read(p []byte) (int, error) {
	if c.ctx.Err() != nil {
		return 0, context.Cause(c.ctx)
	}
	return c.r.Read(p)
}
