package jobapi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"image"
	"image/color"
	"image/gif"
	"image/jpeg"
	"image/png"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jobledger/jobledger/jobapi"
	"github.com/jobledger/jobledger/model"
)

// gradient is a w x h image whose grey level rises from left to right, or
// falls when falling is true.
func gradient(w, h int, falling bool) *image.NRGBA {
	img := image.NewNRGBA(image.Rect(0, 0, w, h))
	for y := range h {
		for x := range w {
			v := uint8(x * 255 / (w - 1))
			if falling {
				v = 255 - v
			}
			img.SetNRGBA(x, y, color.NRGBA{v, v, v, 255})
		}
	}
	return img
}

func encode(t *testing.T, format string, img image.Image) []byte {
	t.Helper()
	var buf bytes.Buffer
	var err error
	switch format {
	case "png":
		err = png.Encode(&buf, img)
	case "jpeg":
		err = jpeg.Encode(&buf, img, &jpeg.Options{Quality: 95})
	case "gif":
		err = gif.Encode(&buf, img, nil)
	}
	require.NoError(t, err)
	return buf.Bytes()
}

func fingerprint(t *testing.T, data []byte) model.FingerprintResult {
	t.Helper()
	out, err := model.Fingerprint{}.Run(context.Background(), jobapi.Request{Image: data})
	require.NoError(t, err)
	return out.(model.FingerprintResult)
}

func TestFingerprintFormats(t *testing.T) {
	t.Parallel()
	for _, format := range []string{"png", "jpeg", "gif"} {
		t.Run(format, func(t *testing.T) {
			r := fingerprint(t, encode(t, format, gradient(64, 32, true)))
			require.Equal(t, 64, r.Width)
			require.Equal(t, 32, r.Height)
			require.Equal(t, format, r.Format)
			require.InDelta(t, 127, int(r.MeanColor.R), 3)
			require.Equal(t, uint8(255), r.MeanColor.A)
			// Falling brightness: every cell is brighter than its right neighbour.
			require.Equal(t, "ffffffffffffffff", r.DHash)
		})
	}
}

func TestFingerprintHash(t *testing.T) {
	t.Parallel()
	require.Equal(t, "0000000000000000", fingerprint(t, encode(t, "png", gradient(64, 64, false))).DHash)
	// Tiny images repeat pixels rather than divide by zero.
	tiny := fingerprint(t, encode(t, "png", gradient(2, 1, true)))
	require.Equal(t, 2, tiny.Width)
	require.Len(t, tiny.DHash, 16)
	data, err := json.Marshal(tiny)
	require.NoError(t, err)
	require.Contains(t, string(data), `"mean_color":{"r":127,"g":127,"b":127,"a":255}`)
}

func TestFingerprintRefuses(t *testing.T) {
	t.Parallel()
	_, err := model.Fingerprint{}.Run(context.Background(), jobapi.Request{Image: []byte("GIF89a")})
	require.Error(t, err)
	require.Error(t, model.Fingerprint{}.ValidateRequest(jobapi.Request{}))
	// A header that declares a huge image is refused before decoding.
	huge := rgbaPNG(1<<20, 1<<20, 8, nil)
	_, err = model.Fingerprint{}.Run(context.Background(), jobapi.Request{Image: huge})
	require.EqualError(t, err, "decode image: image exceeds max_pixels")
}

func TestEchoModel(t *testing.T) {
	t.Parallel()
	out, err := model.Echo{}.Run(context.Background(), jobapi.Request{})
	require.NoError(t, err)
	require.Equal(t, json.RawMessage(`{}`), out)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = model.Echo{}.Run(ctx, jobapi.Request{Params: json.RawMessage(`{"sleep_ms": 60000}`)})
	require.ErrorIs(t, err, context.Canceled)
	require.Error(t, model.Echo{}.ValidateRequest(jobapi.Request{Params: json.RawMessage(`{"sleep_ms": "x"}`)}))
	_, err = jobapi.NewModel("nope")
	require.ErrorIs(t, err, jobapi.ErrUnknownModel)
}
