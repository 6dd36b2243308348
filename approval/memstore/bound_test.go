package memstore_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/countersign/countersign/approval/memstore"
)

// TestConversationsBounded: however many conversations are saved, the
// store keeps at most MaxConversations, dropping those closest to
// expiring first.
func TestConversationsBounded(t *testing.T) {
	ctx := context.Background()
	s := memstore.New(memstore.Options{Logger: quiet(), MaxConversations: 100})
	for i := range 1000 {
		if err := s.SaveConversation(ctx, fmt.Sprint("slack:C1:T", i), []byte("[]"), time.Hour+time.Duration(i)*time.Second); err != nil {
			t.Fatal(err)
		}
	}
	kept := 0
	for i := range 1000 {
		b, err := s.LoadConversation(ctx, fmt.Sprint("slack:C1:T", i))
		if err != nil {
			t.Fatal(err)
		}
		if b != nil {
			kept++
		}
	}
	if kept > 100 {
		t.Errorf("%d conversations kept, want at most 100", kept)
	}
	if b, _ := s.LoadConversation(ctx, "slack:C1:T999"); b == nil {
		t.Error("the newest conversation was dropped")
	}
}
