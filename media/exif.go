package media

import (
	"bytes"
	"encoding/binary"
)

// JPEGOrientation reads the EXIF orientation of a JPEG from its first
// bytes (the APP1 segment comes before the image data): 1 to 8 as TIFF
// defines it, 1 (as stored) when there is none. Cameras and phones store
// photographs as the sensor took them and say in this tag how to turn
// them; browsers show them turned, and so must variants and pixel sizes.
func JPEGOrientation(head []byte) int {
	if !bytes.HasPrefix(head, []byte{0xff, 0xd8}) {
		return 1
	}
	for p := head[2:]; len(p) >= 4 && p[0] == 0xff; {
		marker, n := p[1], int(binary.BigEndian.Uint16(p[2:4]))
		if marker == 0xda || n < 2 || len(p) < 2+n { // image data, or cut short
			return 1
		}
		if seg := p[4 : 2+n]; marker == 0xe1 && bytes.HasPrefix(seg, []byte("Exif\x00\x00")) {
			return tiffOrientation(seg[6:])
		}
		p = p[2+n:]
	}
	return 1
}

// tiffOrientation reads tag 0x0112 of the first IFD of a TIFF header.
func tiffOrientation(t []byte) int {
	if len(t) < 8 {
		return 1
	}
	var order binary.ByteOrder
	switch string(t[:2]) {
	case "II":
		order = binary.LittleEndian
	case "MM":
		order = binary.BigEndian
	default:
		return 1
	}
	off := int(order.Uint32(t[4:8]))
	if off < 8 || off+2 > len(t) {
		return 1
	}
	count := int(order.Uint16(t[off:]))
	for i := range count {
		e := off + 2 + 12*i
		if e+12 > len(t) {
			return 1
		}
		if order.Uint16(t[e:]) == 0x0112 && order.Uint16(t[e+2:]) == 3 { // SHORT
			if v := int(order.Uint16(t[e+8:])); v >= 1 && v <= 8 {
				return v
			}
			return 1
		}
	}
	return 1
}

// Turned reports whether an orientation swaps width and height (5 to 8:
// a quarter turn, flipped or not).
func Turned(orientation int) bool { return orientation >= 5 && orientation <= 8 }
