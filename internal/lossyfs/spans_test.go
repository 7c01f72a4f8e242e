package lossyfs

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestSpansAdd(t *testing.T) {
	tests := []struct {
		name string
		adds [][2]int64
		want spans
	}{
		{"empty range", [][2]int64{{5, 5}}, nil},
		{"disjoint, out of order", [][2]int64{{10, 20}, {0, 5}, {30, 40}}, spans{{0, 5}, {10, 20}, {30, 40}}},
		{"touching ranges merge", [][2]int64{{0, 5}, {5, 10}}, spans{{0, 10}}},
		{"a range spanning several", [][2]int64{{0, 2}, {4, 6}, {8, 10}, {1, 9}}, spans{{0, 10}}},
		{"inside another", [][2]int64{{0, 10}, {3, 4}}, spans{{0, 10}}},
		{"sequential appends", [][2]int64{{0, 4096}, {4096, 8192}, {8192, 8200}}, spans{{0, 8200}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var s spans
			for _, a := range tt.adds {
				s = s.add(a[0], a[1])
			}
			require.Equal(t, tt.want, s)
		})
	}
}
