package percolator

import (
	"bytes"
	"math"
	"testing"
)

// checkInlinedPut fails t unless inlinedPut agrees with decodeWrite on b:
// it takes exactly the well-formed inlined puts, returning their value,
// never nil, whatever the spelling of their start timestamp.
func checkInlinedPut(t *testing.T, b []byte) {
	t.Helper()
	v, ok := inlinedPut(b)
	w, err := decodeWrite(b)
	want := err == nil && w.kind == kindPut && w.inline
	if ok != want {
		t.Fatalf("inlinedPut(%x) ok = %v; decodeWrite: %+v, %v", b, ok, w, err)
	}
	if !ok {
		return
	}
	if v == nil || !bytes.Equal(v, w.value) {
		t.Fatalf("inlinedPut(%x) = %x (nil %v), want %x", b, v, v == nil, w.value)
	}
}

func TestInlinedPut(t *testing.T) {
	for _, ts := range []uint64{0, 1, 127, 128, 1<<52 - 1, 1 << 56, math.MaxUint64} {
		for _, val := range [][]byte{nil, {}, {0}, {1}, []byte("value"), bytes.Repeat([]byte{0x80}, 64)} {
			checkInlinedPut(t, write{kind: kindPut, startTs: ts, inline: true, value: val}.encode())
			checkInlinedPut(t, write{kind: kindPut, startTs: ts}.encode())
			checkInlinedPut(t, write{kind: kindDelete, startTs: ts}.encode())
			checkInlinedPut(t, write{kind: kindDelete, startTs: ts, inline: true, value: val}.encode())
		}
	}
	for _, b := range [][]byte{
		nil, {}, {kindPut}, {kindPut, 1}, {kindPut, 1, 1}, {kindPut, 1, 2, 'v'},
		{kindPut, 0x80}, {kindPut, 0x80, 1}, {kindPut, 0x80, 0x80, 1, 'v'},
		{3, 1, 1, 'v'}, {0, 1, 1, 'v'},
		// uvarints of ten and eleven bytes: decodeWrite takes the first when
		// its last byte is 1, and neither past that.
		{kindPut, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01, 1, 'v'},
		{kindPut, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02, 1, 'v'},
		{kindPut, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01, 1, 'v'},
	} {
		checkInlinedPut(t, b)
	}
}

func FuzzInlinedPut(f *testing.F) {
	f.Add(write{kind: kindPut, startTs: 1 << 40, inline: true, value: []byte("v")}.encode())
	f.Add(write{kind: kindPut, startTs: 300}.encode())
	f.Add(write{kind: kindDelete, startTs: 7}.encode())
	f.Fuzz(func(t *testing.T, b []byte) { checkInlinedPut(t, b) })
}
