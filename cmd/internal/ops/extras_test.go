package ops

import (
	"context"
	"reflect"
	"sync"
	"testing"

	"github.com/countersign/countersign/adapters"
	"github.com/countersign/countersign/adapters/adaptertest"
)

// everyExtra is an adapter with every extra, each recording its calls.
type everyExtra struct {
	*adaptertest.Fake
	mu    sync.Mutex
	calls map[string]int
}

func (e *everyExtra) hit(name string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.calls[name]++
}

func (e *everyExtra) called(name string) int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.calls[name]
}

func (e *everyExtra) Extras() adapters.Extras {
	return adapters.Extras{Buttons: true, Forms: true, Status: e, Stream: e, WholeText: true, Home: e, Undelivered: e, Link: e, Permalink: e, ByEmail: e}
}

func (e *everyExtra) Permalink(context.Context, adapters.Place, string) (string, error) {
	e.hit("Permalink")
	return "https://chat.test/p1", nil
}

func (e *everyExtra) UserByEmail(context.Context, string) (string, error) {
	e.hit("UserByEmail")
	return "U1", nil
}

func (e *everyExtra) SetStatus(context.Context, adapters.Place, string) error {
	e.hit("SetStatus")
	return nil
}

func (e *everyExtra) StartStream(context.Context, adapters.Place, adapters.User) (adapters.Stream, error) {
	e.hit("StartStream")
	return e, nil
}

func (e *everyExtra) Text(context.Context, string) error {
	e.hit("Text")
	return nil
}

func (e *everyExtra) Task(context.Context, adapters.Task) error {
	e.hit("Task")
	return nil
}

func (e *everyExtra) Stop(context.Context, string) error {
	e.hit("Stop")
	return nil
}

func (e *everyExtra) PublishHome(context.Context, adapters.User, []adapters.HomeItem) error {
	e.hit("PublishHome")
	return nil
}

func (e *everyExtra) Member(context.Context, string, adapters.User) (bool, error) {
	e.hit("Member")
	return true, nil
}

func (e *everyExtra) Undelivered() uint64 {
	e.hit("Undelivered")
	return 0
}

func (e *everyExtra) Connected() bool {
	e.hit("Connected")
	return true
}

// callExtra calls each method of the interface value v (an extra) that
// Adapter does not have, with zero arguments, and checks that it reached
// inner; a method that returns another interface (StartStream's Stream)
// has that value's methods called too.
func callExtra(t *testing.T, field string, v reflect.Value, inner *everyExtra) {
	t.Helper()
	base := reflect.TypeFor[adapters.Adapter]()
	it := v.Type()
	for i := range it.NumMethod() {
		m := it.Method(i)
		if _, ok := base.MethodByName(m.Name); ok {
			continue // the adapter's own methods: TestMeteredAdapter
		}
		fn := v.Elem().MethodByName(m.Name)
		args := make([]reflect.Value, fn.Type().NumIn())
		for j := range args {
			if at := fn.Type().In(j); at == reflect.TypeFor[context.Context]() {
				args[j] = reflect.ValueOf(context.Background())
			} else {
				args[j] = reflect.Zero(at)
			}
		}
		was := inner.called(m.Name)
		out := fn.Call(args)
		if inner.called(m.Name) != was+1 {
			t.Errorf("Extras.%s.%s did not reach the wrapped adapter", field, m.Name)
		}
		for _, o := range out {
			if o.Kind() == reflect.Interface && !o.IsNil() && o.Type() != reflect.TypeFor[error]() {
				callExtra(t, field+"."+m.Name+"()", o, inner)
			}
		}
	}
}

// TestMeteredAdapterForwardsEveryExtra: each extra an adapter declares
// (every field of adapters.Extras, the ones added after this test was
// written too) is declared by the metered adapter, and each of its
// methods reaches the wrapped adapter; an adapter without extras gets
// none. The metrics can switch no extra off.
func TestMeteredAdapterForwardsEveryExtra(t *testing.T) {
	m := NewMetrics(nil, quietLog())
	inner := &everyExtra{Fake: adaptertest.NewFake("slack"), calls: map[string]int{}}
	got := reflect.ValueOf(m.MeterAdapter(inner).Extras())
	want := reflect.ValueOf(inner.Extras())
	if got.NumField() < 8 {
		t.Fatalf("adapters.Extras has %d fields; the reflection is broken", got.NumField())
	}
	for i := range got.NumField() {
		name := got.Type().Field(i).Name
		g, w := got.Field(i), want.Field(i)
		switch g.Kind() {
		case reflect.Bool:
			if g.Bool() != w.Bool() {
				t.Errorf("Extras.%s = %v through the metrics, %v without", name, g.Bool(), w.Bool())
			}
		case reflect.Interface:
			if g.IsNil() {
				t.Errorf("Extras.%s is lost through the metrics", name)
				continue
			}
			callExtra(t, name, g, inner)
		default:
			t.Errorf("Extras.%s is a %s; teach this test to check it", name, g.Kind())
		}
	}

	none := reflect.ValueOf(m.MeterAdapter(plainAdapter{adaptertest.NewFake("discord")}).Extras())
	if !none.IsZero() {
		t.Errorf("an adapter without extras has %+v through the metrics", none.Interface())
	}
}
