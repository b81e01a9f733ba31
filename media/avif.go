package media

import (
	"encoding/binary"
	"errors"
	"io"
)

// The pixel size of an AVIF image is in its ISOBMFF boxes (ISO/IEC
// 14496-12, HEIF ISO/IEC 23008-12): the top-level meta box names the
// primary item (pitm) and associates items with properties (iprp: the
// properties in ipco, the associations in ipma); the primary item's image
// spatial extents property (ispe) holds its width and height, and an
// image rotation property (irot) of a quarter or three quarters of a turn
// swaps them as shown. A few dozen lines read that, where the only Go
// AVIF libraries decode whole images through cgo or WebAssembly.

// maxMetaBox bounds the meta box read into memory (it holds item
// locations and properties, a few hundred bytes in practice; the pixels
// are in mdat).
const maxMetaBox = 1 << 20

var errAVIF = errors.New("bad AVIF boxes")

// box is one ISOBMFF box: its type and the bounds of its payload.
type box struct {
	typ        string
	start, end int64
}

// boxes lists the boxes in [start, end) of r.
func boxes(r io.ReaderAt, start, end int64) ([]box, error) {
	var out []box
	for off := start; off < end; {
		var h [16]byte
		if end-off < 8 {
			return nil, errAVIF
		}
		if _, err := r.ReadAt(h[:8], off); err != nil {
			return nil, errAVIF
		}
		size, hdr := int64(binary.BigEndian.Uint32(h[:4])), int64(8)
		switch size {
		case 0: // to the end
			size = end - off
		case 1: // 64-bit size follows
			if _, err := r.ReadAt(h[8:16], off+8); err != nil {
				return nil, errAVIF
			}
			size, hdr = int64(binary.BigEndian.Uint64(h[8:16])), 16
		}
		if size < hdr || size > end-off {
			return nil, errAVIF
		}
		out = append(out, box{typ: string(h[4:8]), start: off + hdr, end: off + size})
		off += size
	}
	return out, nil
}

// avifSize returns the displayed pixel size of the primary image of an
// AVIF file of size bytes.
func avifSize(r io.ReaderAt, size int64) (int, int, error) {
	top, err := boxes(r, 0, size)
	if err != nil {
		return 0, 0, err
	}
	var meta []byte
	for _, b := range top {
		if b.typ == "meta" {
			if b.end-b.start > maxMetaBox || b.end-b.start < 4 {
				return 0, 0, errAVIF
			}
			meta = make([]byte, b.end-b.start)
			if _, err := r.ReadAt(meta, b.start); err != nil {
				return 0, 0, errAVIF
			}
			break
		}
	}
	if meta == nil {
		return 0, 0, errAVIF
	}
	return metaSize(meta[4:]) // meta is a full box: version and flags first
}

// metaSize reads the primary item's size from the children of a meta box.
func metaSize(meta []byte) (int, int, error) {
	mr := byteReaderAt(meta)
	children, err := boxes(mr, 0, int64(len(meta)))
	if err != nil {
		return 0, 0, err
	}
	primary := uint32(0)
	var props []box  // ipco's children, property index 1 is props[0]
	var assoc []byte // ipma's payload
	for _, c := range children {
		p := meta[c.start:c.end]
		switch c.typ {
		case "pitm":
			if len(p) < 6 {
				return 0, 0, errAVIF
			}
			if p[0] == 0 {
				primary = uint32(binary.BigEndian.Uint16(p[4:6]))
			} else if len(p) >= 8 {
				primary = binary.BigEndian.Uint32(p[4:8])
			}
		case "iprp":
			ip, err := boxes(mr, c.start, c.end)
			if err != nil {
				return 0, 0, err
			}
			for _, b := range ip {
				switch b.typ {
				case "ipco":
					if props, err = boxes(mr, b.start, b.end); err != nil {
						return 0, 0, err
					}
				case "ipma":
					assoc = meta[b.start:b.end]
				}
			}
		}
	}
	indexes, err := associated(assoc, primary)
	if err != nil {
		return 0, 0, err
	}
	w, h, turned := 0, 0, false
	for _, i := range indexes {
		if i < 1 || i > len(props) {
			continue
		}
		p := props[i-1]
		data := meta[p.start:p.end]
		switch p.typ {
		case "ispe":
			if len(data) < 12 {
				return 0, 0, errAVIF
			}
			w, h = int(binary.BigEndian.Uint32(data[4:8])), int(binary.BigEndian.Uint32(data[8:12]))
		case "irot":
			if len(data) >= 1 {
				turned = data[0]&3 == 1 || data[0]&3 == 3
			}
		}
	}
	if w == 0 || h == 0 {
		return 0, 0, errAVIF
	}
	if turned {
		w, h = h, w
	}
	return w, h, nil
}

// associated returns the property indexes ipma associates with item (all
// properties' indexes count from 1).
func associated(ipma []byte, item uint32) ([]int, error) {
	if len(ipma) < 8 {
		return nil, errAVIF
	}
	version, flags := ipma[0], ipma[3]
	n := binary.BigEndian.Uint32(ipma[4:8])
	p := ipma[8:]
	for range n {
		var id uint32
		if version < 1 {
			if len(p) < 3 {
				return nil, errAVIF
			}
			id, p = uint32(binary.BigEndian.Uint16(p)), p[2:]
		} else {
			if len(p) < 5 {
				return nil, errAVIF
			}
			id, p = binary.BigEndian.Uint32(p), p[4:]
		}
		count := int(p[0])
		p = p[1:]
		width := 1
		if flags&1 != 0 {
			width = 2
		}
		if len(p) < count*width {
			return nil, errAVIF
		}
		var idx []int
		for j := range count {
			if width == 2 {
				idx = append(idx, int(binary.BigEndian.Uint16(p[2*j:])&0x7fff))
			} else {
				idx = append(idx, int(p[j]&0x7f))
			}
		}
		p = p[count*width:]
		if id == item {
			return idx, nil
		}
	}
	return nil, errAVIF
}

// byteReaderAt reads a byte slice at offsets.
type byteReaderAt []byte

func (b byteReaderAt) ReadAt(p []byte, off int64) (int, error) {
	if off < 0 || off >= int64(len(b)) {
		return 0, io.EOF
	}
	n := copy(p, b[off:])
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}
