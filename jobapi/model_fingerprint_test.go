package jobapi_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"hash/crc32"
	"image"
	"image/color"
	"image/gif"
	"net/http"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobledger/jobledger/client"
	"github.com/jobledger/jobledger/jobapi"
	"github.com/jobledger/jobledger/model"
)

// emptyFrameGIF is a GIF whose logical screen is 1x1 but whose one frame
// is 0x0: its header passes a size check, its decoded image is empty.
func emptyFrameGIF(t testing.TB) []byte {
	t.Helper()
	pal := color.Palette{color.Black, color.White}
	var buf bytes.Buffer
	require.NoError(t, gif.EncodeAll(&buf, &gif.GIF{
		Image:  []*image.Paletted{image.NewPaletted(image.Rect(0, 0, 0, 0), pal)},
		Delay:  []int{0},
		Config: image.Config{Width: 1, Height: 1, ColorModel: pal},
	}))
	return buf.Bytes()
}

// TestEmptyGIFFramePanicked pins the bug where a 63-byte GIF with a 0x0
// frame panicked the fingerprint model (an integer divide by zero in the
// mean colour): /infer answered 500 and the job ended FAILED "model
// panicked". An empty image is bad input: /infer answers 422, and a job
// ends FAILED "decode image: empty image".
func TestEmptyGIFFramePanicked(t *testing.T) {
	t.Parallel()
	data := emptyFrameGIF(t)
	cfg, _, err := image.DecodeConfig(bytes.NewReader(data))
	require.NoError(t, err)
	require.Equal(t, 1, cfg.Width*cfg.Height, "the header declares a pixel")

	require.NotPanics(t, func() {
		_, err = model.Fingerprint{}.Run(context.Background(), jobapi.Request{Image: data})
	})
	require.EqualError(t, err, "decode image: empty image")

	h := newHarness(t, nil, nil) // the fingerprint model
	_, err = h.api.Infer(t.Context(), client.Request{Image: data})
	e := requireAPIError(t, err, http.StatusUnprocessableEntity, "model failed")
	require.Equal(t, "decode image: empty image", e.ModelError)

	accepted, err := h.api.Submit(t.Context(), client.Request{Image: data})
	require.NoError(t, err)
	done := h.waitDone(accepted.JobID)
	require.Equal(t, client.Failed, done.State)
	require.Equal(t, "decode image: empty image", done.Error)
}

// TestImageOverMaxPixelsDecoded pins the other half of the bug of the
// 67,108,864 x 1 PNG: max_pixels bounds the images decoded, checked on the
// header before decoding, and an image over it is refused with 422 by both
// POST /infer and POST /jobs, which admits no job.
func TestImageOverMaxPixelsDecoded(t *testing.T) {
	t.Parallel()
	h := newHarness(t, nil, func(c *jobapi.Config) { c.MaxPixels = 100 })
	fits := encode(t, "png", gradient(10, 10, false))
	over := encode(t, "png", gradient(11, 10, false))
	// A header declaring 2^40 pixels and no pixel data: refused from the
	// header alone, never decoded.
	huge := rgbaPNG(1<<20, 1<<20, 8, nil)

	_, err := h.api.Infer(t.Context(), client.Request{Image: fits})
	require.NoError(t, err)
	for _, img := range [][]byte{over, huge} {
		_, err := h.api.Infer(t.Context(), client.Request{Image: img})
		requireAPIError(t, err, http.StatusUnprocessableEntity, "image exceeds max_pixels")
		_, err = h.api.Submit(t.Context(), client.Request{Image: img})
		requireAPIError(t, err, http.StatusUnprocessableEntity, "image exceeds max_pixels")
	}
	require.Zero(t, h.metric("jobledger_jobs_submitted_total"))

	var u *jobapi.UnprocessableError
	require.ErrorAs(t, model.Fingerprint{MaxPixels: 100}.ValidateRequest(jobapi.Request{Image: huge}), &u)
	_, err = model.Fingerprint{MaxPixels: 100}.Run(context.Background(), jobapi.Request{Image: huge})
	require.EqualError(t, err, "decode image: image exceeds max_pixels")
	// The zero value bounds at DefaultMaxPixels, 2^24.
	require.ErrorAs(t, model.Fingerprint{}.ValidateRequest(jobapi.Request{Image: huge}), &u)
	require.NoError(t, model.Fingerprint{}.ValidateRequest(jobapi.Request{Image: wideRowPNG(1 << 24)}))
	require.ErrorAs(t, model.Fingerprint{}.ValidateRequest(jobapi.Request{Image: wideRowPNG(1<<24 + 1)}), &u)
}

// watchedModel runs Model and reports when each run starts and returns.
type watchedModel struct {
	jobapi.Model
	started  chan struct{}
	returned chan time.Time
}

func (m watchedModel) Run(ctx context.Context, req jobapi.Request) (any, error) {
	m.started <- struct{}{}
	defer func() { m.returned <- time.Now() }()
	return m.Model.Run(ctx, req)
}

// TestOneRowImageHeldWorkerPastDeadline pins the symptom of the 67,108,864
// x 1 PNG: its job ended TIMEOUT but the model ran on, holding its worker,
// so the next /infer got 503 and SIGTERM could not exit. With the worst
// image under max_pixels (a 2^24 x 1 RGBA PNG, Paeth-filtered) the model
// returns, and the worker is free, at once after the deadline. The bound
// asserted is generous; BenchmarkFingerprintDeadline measures the figure.
func TestOneRowImageHeldWorkerPastDeadline(t *testing.T) {
	m := watchedModel{Model: model.Fingerprint{}, started: make(chan struct{}, 2), returned: make(chan time.Time, 2)}
	h := newHarness(t, m, nil) // one worker
	accepted, err := h.api.Submit(t.Context(), client.Request{TaskID: "wide", Image: wideRowPNG(1 << 24)})
	require.NoError(t, err)
	<-m.started
	deadline := time.Now()
	h.clock.Advance(h.srv.Config().AsyncTimeout)
	late := (<-m.returned).Sub(deadline)
	t.Logf("the model returned %v after its deadline", late)
	require.Less(t, late, 5*time.Second)
	done := h.waitDone(accepted.JobID)
	require.Equal(t, client.TimedOut, done.State)

	// The one worker is free: a small image is fingerprinted.
	small := encode(t, "png", gradient(16, 16, false))
	got := make(chan error, 1)
	go func() {
		_, err := h.api.Infer(context.Background(), client.Request{Image: small})
		got <- err
	}()
	<-m.started
	<-m.returned
	require.NoError(t, <-got)
	waitDecodes(t) // the abandoned decode stops at its next read
}

// BenchmarkFingerprintDeadline runs the fingerprint model on the worst
// inputs under the default max_pixels with deadlines spread over a whole
// run, and reports, over the runs that the deadline cut short, how long
// after it Run returned (late-ms, mean and max: the worker is free from
// then) and how long after it the decode left running in the background
// ended (decode-ms).
func BenchmarkFingerprintDeadline(b *testing.B) {
	for _, in := range []struct {
		name string
		data []byte
	}{
		{"png-rgba8-2^24x1", wideRowPNG(1 << 24)},
		{"png-rgba16-2^24x1", wideRowPNGDepth(1<<24, 16)},
		{"jpeg-progressive-4096x4096", progressiveJPEG(4096, 4096)},
	} {
		b.Run(in.name, func(b *testing.B) {
			req := jobapi.Request{Image: in.data}
			start := time.Now()
			_, err := model.Fingerprint{}.Run(context.Background(), req)
			require.NoError(b, err)
			full := time.Since(start)
			const steps = 16
			var late, decode, maxLate, maxDecode time.Duration
			i, timedOut := 0, 0
			for b.Loop() {
				d := full * time.Duration(i%steps) / steps
				i++
				ctx, cancel := context.WithTimeout(context.Background(), d)
				deadline, _ := ctx.Deadline()
				_, err := model.Fingerprint{}.Run(ctx, req)
				returned := time.Since(deadline)
				waitDecodes(b)
				ended := time.Since(deadline)
				cancel()
				if err == nil {
					continue // finished before its deadline
				}
				require.ErrorIs(b, err, context.DeadlineExceeded)
				timedOut++
				late, decode = late+returned, decode+ended
				maxLate, maxDecode = max(maxLate, returned), max(maxDecode, ended)
			}
			require.Positive(b, timedOut)
			ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
			b.ReportMetric(ms(full), "full-run-ms")
			b.ReportMetric(ms(late)/float64(timedOut), "late-ms")
			b.ReportMetric(ms(maxLate), "max-late-ms")
			b.ReportMetric(ms(decode)/float64(timedOut), "decode-ms")
			b.ReportMetric(ms(maxDecode), "max-decode-ms")
			b.ReportMetric(0, "ns/op")
		})
	}
}

// wideRowPNG is an RGBA PNG of w x 1 pixels, all zero, Paeth-filtered.
func wideRowPNG(w int) []byte { return wideRowPNGDepth(w, 8) }

// wideRowPNGDepth is wideRowPNG with depth bits a channel (8 or 16). Its
// zlib stream is written by hand (zeroDeflate): compressing tens of MB
// takes seconds under -race.
func wideRowPNGDepth(w, depth int) []byte {
	const paeth = 4
	return rgbaPNG(w, 1, depth, zeroDeflate(paeth, w*4*depth/8))
}

// rgbaPNG is an RGBA PNG of w x h pixels, depth bits a channel, with idat
// as its pixel data.
func rgbaPNG(w, h, depth int, idat []byte) []byte {
	var buf bytes.Buffer
	buf.WriteString("\x89PNG\r\n\x1a\n")
	chunk := func(typ string, data []byte) {
		buf.Write(binary.BigEndian.AppendUint32(nil, uint32(len(data))))
		buf.WriteString(typ)
		buf.Write(data)
		buf.Write(binary.BigEndian.AppendUint32(nil, crc32.ChecksumIEEE(append([]byte(typ), data...))))
	}
	ihdr := binary.BigEndian.AppendUint32(nil, uint32(w))
	ihdr = binary.BigEndian.AppendUint32(ihdr, uint32(h))
	ihdr = append(ihdr, byte(depth), 6, 0, 0, 0) // RGBA, deflate, adaptive filters, no interlace
	chunk("IHDR", ihdr)
	chunk("IDAT", idat)
	chunk("IEND", nil)
	return buf.Bytes()
}

// zeroDeflate is a zlib stream of the byte first followed by n zeros: one
// fixed-Huffman block of literals and copies of 258 bytes at distance 1.
func zeroDeflate(first byte, n int) []byte {
	var out []byte
	var acc uint64
	var nacc uint
	bits := func(v uint64, k uint) { // LSB first
		acc |= v << nacc
		for nacc += k; nacc >= 8; nacc -= 8 {
			out = append(out, byte(acc))
			acc >>= 8
		}
	}
	code := func(c uint64, k uint) { // Huffman codes go MSB first
		for i := int(k) - 1; i >= 0; i-- {
			bits(c>>uint(i)&1, 1)
		}
	}
	literal := func(b byte) { code(0x30+uint64(b), 8) } // literals 0-143
	out = append(out, 0x78, 0x01)                       // zlib header
	bits(1, 1)                                          // final block
	bits(1, 2)                                          // fixed Huffman codes
	literal(first)
	left := n
	if left > 0 {
		literal(0)
		left--
	}
	for ; left >= 258; left -= 258 {
		code(0xc5, 8) // length symbol 285: 258 bytes
		code(0, 5)    // distance symbol 0: distance 1
	}
	for ; left > 0; left-- {
		literal(0)
	}
	code(0, 7) // end of block
	if nacc > 0 {
		out = append(out, byte(acc))
	}
	// Adler-32 of first and n zeros: a stays 1+first, b adds a each byte.
	a := (1 + uint64(first)) % 65521
	b := a * uint64(n+1) % 65521
	return binary.BigEndian.AppendUint32(out, uint32(b<<16|a))
}

// progressiveJPEG is a w x h progressive JPEG (w, h multiples of 8) of
// three full-resolution components carrying a DC scan only: image/jpeg
// rebuilds the whole image after reading its last byte.
func progressiveJPEG(w, h int) []byte {
	var b bytes.Buffer
	b.Write([]byte{0xff, 0xd8})                                  // SOI
	b.Write([]byte{0xff, 0xdb, 0, 67, 0})                        // DQT 0
	b.Write(bytes.Repeat([]byte{1}, 64))                         //
	b.Write([]byte{0xff, 0xc2, 0, 17, 8, byte(h >> 8), byte(h)}) // SOF2
	b.Write([]byte{byte(w >> 8), byte(w), 3, 1, 0x11, 0, 2, 0x11, 0, 3, 0x11, 0})
	b.Write([]byte{0xff, 0xc4, 0, 20, 0x00, 1})                      // DHT: DC table 0, one code of length 1,
	b.Write(make([]byte, 15))                                        //
	b.Write([]byte{0})                                               // for category 0
	b.Write([]byte{0xff, 0xda, 0, 12, 3, 1, 0, 2, 0, 3, 0, 0, 0, 0}) // SOS: DC first scan
	b.Write(make([]byte, (w/8)*(h/8)*3/8))                           // one 0 bit a block
	b.Write([]byte{0xff, 0xd9})                                      // EOI
	return b.Bytes()
}

// waitDecodes waits until no goroutine runs the fingerprint model's
// decode, including those left running by a Run that returned at its
// deadline. It asserts nothing about time: the bounds (tries and a
// minute) only stop a broken test from hanging.
func waitDecodes(tb testing.TB) {
	tb.Helper()
	buf := make([]byte, 1<<20)
	giveUp := time.Now().Add(time.Minute)
	for i := 0; i < 1_000_000 && time.Now().Before(giveUp); i++ {
		n := runtime.Stack(buf, true)
		if n == len(buf) {
			buf = make([]byte, 2*len(buf))
			continue
		}
		if !bytes.Contains(buf[:n], []byte("jobledger/model.decode")) {
			return
		}
		runtime.Gosched()
	}
	tb.Fatal("the fingerprint model's decodes never ended")
}
