package slack

import (
	"strconv"
	"testing"

	"github.com/countersign/countersign/adapters/slack/slacktest"
)

// The adapter's per-process memories are bounded in size (and in age:
// each is an expiring LRU).
func TestMemoriesAreBounded(t *testing.T) {
	fake := slacktest.New(t)
	env := fake.Env()
	a, err := New(Config{}, func(k string) string { return env[k] }, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := range maxThreads + 100 {
		a.remember("C1", strconv.Itoa(i))
	}
	for i := range maxUploaded + 100 {
		a.uploaded.Add(strconv.Itoa(i), struct{}{})
	}
	if a.threads.Len() != maxThreads || a.uploaded.Len() != maxUploaded {
		t.Errorf("threads %d, uploaded %d; want at most %d and %d", a.threads.Len(), a.uploaded.Len(), maxThreads, maxUploaded)
	}
}
