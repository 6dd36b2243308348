package tools

import (
	"strings"
	"testing"
	"time"
)

func TestLimit(t *testing.T) {
	tests := []struct {
		name    string
		in      time.Duration
		want    time.Duration
		wantErr string
	}{
		{name: "zero takes the default", in: 0, want: time.Minute},
		{name: "positive stays", in: time.Second, want: time.Second},
		{name: "negative is an error naming the key", in: -time.Second, want: -time.Second, wantErr: "timeout -1s must be positive"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := tt.in
			err := Limit("timeout", &v, time.Minute)
			if (err == nil) != (tt.wantErr == "") || (err != nil && !strings.Contains(err.Error(), tt.wantErr)) {
				t.Errorf("error %v, want %q", err, tt.wantErr)
			}
			if v != tt.want {
				t.Errorf("value %v, want %v", v, tt.want)
			}
		})
	}
}
