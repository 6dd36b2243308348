package adaptertest

import "testing"

// TestFake runs the suite against the fake, which has buttons and
// redelivers: the parts of the suite the terminal skips run here.
func TestFake(t *testing.T) {
	Run(t, func(*testing.T) Harness { return FakeHarness{F: NewFake("fake")} })
}
