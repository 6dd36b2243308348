package approval

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

func TestEncodeTurn(t *testing.T) {
	tests := []struct {
		name    string
		turn    *Turn
		pending []string
		err     error
	}{
		{"nil", nil, nil, ErrInvalid},
		{"no id", &Turn{Pending: []string{"a1"}}, nil, ErrInvalid},
		{"in order", &Turn{ID: "t1", Pending: []string{"b", "a"}}, []string{"b", "a"}, nil},
		{"repeats dropped", &Turn{ID: "t1", Pending: []string{"a", "b", "a", "b"}}, []string{"a", "b"}, nil},
		{"none pending", &Turn{ID: "t1"}, nil, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			data, pending, err := EncodeTurn(tt.turn)
			if !errors.Is(err, tt.err) {
				t.Fatalf("EncodeTurn error = %v, want %v", err, tt.err)
			}
			if err != nil {
				return
			}
			if !slices.Equal(pending, tt.pending) {
				t.Errorf("pending = %q, want %q", pending, tt.pending)
			}
			if strings.Contains(string(data), `"a"`) || strings.Contains(string(data), `"b"`) {
				t.Errorf("encoded turn %s holds the pending ids", data)
			}
		})
	}
}

func TestDecodeTurn(t *testing.T) {
	data, order, err := EncodeTurn(&Turn{ID: "t1", State: []byte(`{"k":1}`), Pending: []string{"c", "a", "b"}})
	if err != nil {
		t.Fatal(err)
	}
	left := map[string]bool{"a": true, "c": true}
	got, err := DecodeTurn("t1", data, order, func(id string) bool { return left[id] })
	if err != nil {
		t.Fatalf("DecodeTurn: %v", err)
	}
	if got.ID != "t1" || string(got.State) != `{"k":1}` || !slices.Equal(got.Pending, []string{"c", "a"}) {
		t.Errorf("DecodeTurn = %+v, want t1 with state and pending [c a]", got)
	}
	if _, err := DecodeTurn("t1", []byte("{"), order, func(string) bool { return true }); err == nil {
		t.Error("DecodeTurn of broken JSON succeeded")
	}
}
