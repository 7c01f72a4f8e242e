package model

import (
	"image"
	"image/color"
)

// rowReader fills dst with the pixels (x, y), (x+1, y), ... of an image, each
// exactly as color.NRGBAModel.Convert(img.At(x, y)) gives it. The caller
// keeps every pixel inside the image's bounds.
type rowReader func(dst []color.NRGBA, x, y int)

// newRowReader returns the rowReader of img. It reads the Pix slices of the
// image types the decoders of image/png, image/jpeg and image/gif return,
// and calls At for any other type. img.At costs an interface call and an
// allocation per pixel (about 390 ns); these read a few ns a pixel. Each
// branch builds the pixel's concrete color value and converts it as
// color.NRGBAModel does, so the results are At's to the bit, for every
// type.
func newRowReader(img image.Image) rowReader {
	switch m := img.(type) {
	case *image.NRGBA:
		return func(dst []color.NRGBA, x, y int) {
			p := m.Pix[m.PixOffset(x, y):]
			for i := range dst {
				s := p[4*i : 4*i+4 : 4*i+4]
				dst[i] = color.NRGBA{R: s[0], G: s[1], B: s[2], A: s[3]}
			}
		}
	case *image.RGBA:
		return func(dst []color.NRGBA, x, y int) {
			p := m.Pix[m.PixOffset(x, y):]
			for i := range dst {
				s := p[4*i : 4*i+4 : 4*i+4]
				dst[i] = toNRGBA(color.RGBA{R: s[0], G: s[1], B: s[2], A: s[3]}.RGBA())
			}
		}
	case *image.NRGBA64:
		return func(dst []color.NRGBA, x, y int) {
			p := m.Pix[m.PixOffset(x, y):]
			for i := range dst {
				s := p[8*i : 8*i+8 : 8*i+8]
				dst[i] = toNRGBA(color.NRGBA64{R: be16(s[0:]), G: be16(s[2:]), B: be16(s[4:]), A: be16(s[6:])}.RGBA())
			}
		}
	case *image.RGBA64:
		return func(dst []color.NRGBA, x, y int) {
			p := m.Pix[m.PixOffset(x, y):]
			for i := range dst {
				s := p[8*i : 8*i+8 : 8*i+8]
				dst[i] = toNRGBA(color.RGBA64{R: be16(s[0:]), G: be16(s[2:]), B: be16(s[4:]), A: be16(s[6:])}.RGBA())
			}
		}
	case *image.Gray:
		return func(dst []color.NRGBA, x, y int) {
			p := m.Pix[m.PixOffset(x, y):]
			for i := range dst {
				dst[i] = toNRGBA(color.Gray{Y: p[i]}.RGBA())
			}
		}
	case *image.Gray16:
		return func(dst []color.NRGBA, x, y int) {
			p := m.Pix[m.PixOffset(x, y):]
			for i := range dst {
				dst[i] = toNRGBA(color.Gray16{Y: be16(p[2*i:])}.RGBA())
			}
		}
	case *image.CMYK:
		return func(dst []color.NRGBA, x, y int) {
			p := m.Pix[m.PixOffset(x, y):]
			for i := range dst {
				s := p[4*i : 4*i+4 : 4*i+4]
				dst[i] = toNRGBA(color.CMYK{C: s[0], M: s[1], Y: s[2], K: s[3]}.RGBA())
			}
		}
	case *image.YCbCr:
		return func(dst []color.NRGBA, x, y int) {
			ys := m.Y[m.YOffset(x, y):]
			for i := range dst {
				ci := m.COffset(x+i, y)
				dst[i] = toNRGBA(color.YCbCr{Y: ys[i], Cb: m.Cb[ci], Cr: m.Cr[ci]}.RGBA())
			}
		}
	case *image.Paletted:
		return palettedReader(m)
	}
	return func(dst []color.NRGBA, x, y int) {
		for i := range dst {
			dst[i] = color.NRGBAModel.Convert(img.At(x+i, y)).(color.NRGBA)
		}
	}
}

// palettedReader reads m through its palette, converted once. An index
// outside the palette, or a nil entry, goes through At, which fails as it
// always did.
func palettedReader(m *image.Paletted) rowReader {
	var table [256]struct {
		c  color.NRGBA
		ok bool
	}
	for i, c := range m.Palette[:min(len(m.Palette), len(table))] {
		if c != nil {
			table[i].c, table[i].ok = color.NRGBAModel.Convert(c).(color.NRGBA), true
		}
	}
	return func(dst []color.NRGBA, x, y int) {
		p := m.Pix[m.PixOffset(x, y):]
		for i := range dst {
			if e := table[p[i]]; e.ok {
				dst[i] = e.c
			} else {
				dst[i] = color.NRGBAModel.Convert(m.At(x+i, y)).(color.NRGBA)
			}
		}
	}
}

// toNRGBA converts alpha-premultiplied 16-bit channels, as Color.RGBA
// returns them, to NRGBA: the code of color.NRGBAModel for a color that is
// not already an NRGBA.
func toNRGBA(r, g, b, a uint32) color.NRGBA {
	if a == 0xffff {
		return color.NRGBA{R: uint8(r >> 8), G: uint8(g >> 8), B: uint8(b >> 8), A: 0xff}
	}
	if a == 0 {
		return color.NRGBA{}
	}
	r = (r * 0xffff) / a
	g = (g * 0xffff) / a
	b = (b * 0xffff) / a
	return color.NRGBA{R: uint8(r >> 8), G: uint8(g >> 8), B: uint8(b >> 8), A: uint8(a >> 8)}
}

// be16 is the big-endian uint16 at the start of p, the layout of the 16-bit
// image types' Pix.
func be16(p []byte) uint16 { return uint16(p[0])<<8 | uint16(p[1]) }
