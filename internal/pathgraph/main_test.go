package main

import (
	"slices"
	"strings"
	"testing"
)

func TestKnots(t *testing.T) {
	tests := []struct {
		name  string
		edges []string // "a>b"
		want  []string // the groups top down, files of a group joined by "+" in sorted order
	}{
		{"a chain reads top down", []string{"a>b", "b>c"}, []string{"a", "b", "c"}},
		{"two files calling each other are one knot", []string{"a>b", "b>a", "b>c"}, []string{"a+b", "c"}},
		{"a call back up through a third file", []string{"bot>agent", "agent>sink", "sink>bot", "sink>leaf"}, []string{"agent+bot+sink", "leaf"}},
		{"a shared leaf is no cycle", []string{"a>leaf", "b>leaf", "a>b"}, []string{"a", "b", "leaf"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			edges := map[[2]string]bool{}
			var files []string
			for _, e := range tt.edges {
				from, to, _ := strings.Cut(e, ">")
				edges[[2]string{from, to}] = true
				files = append(files, from, to)
			}
			slices.Sort(files)
			files = slices.Compact(files)
			order, comp := knots(files, edges)
			var got []string
			for _, c := range order {
				c = slices.Clone(c)
				slices.Sort(c)
				got = append(got, strings.Join(c, "+"))
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("knots = %v, want %v", got, tt.want)
			}
			for _, f := range files {
				if _, ok := comp[f]; !ok {
					t.Errorf("file %s has no group", f)
				}
			}
		})
	}
}
