package approvaltest

import (
	"context"
	"reflect"
	"testing"

	"github.com/countersign/countersign/approval"
)

// CallEach calls every method of approval.Store on s, in the contract's
// order, with zero arguments (a background context, pointers to zero
// values), Close last; before each call it runs before, and after each
// after with what the call panicked with, if anything. A wrapper's test
// wraps a store whose every method panics and checks that each method
// reaches it: a wrapper cannot leave a part of the contract behind.
func CallEach(t *testing.T, s approval.Store, before func(name string), after func(name string, panicked any)) {
	t.Helper()
	st := reflect.TypeFor[approval.Store]()
	if st.NumMethod() < 20 {
		t.Fatalf("approval.Store has %d methods; the reflection is broken", st.NumMethod())
	}
	v := reflect.ValueOf(s)
	var names []string
	for i := range st.NumMethod() {
		if n := st.Method(i).Name; n != "Close" {
			names = append(names, n)
		}
	}
	names = append(names, "Close")
	ctxType := reflect.TypeFor[context.Context]()
	for _, name := range names {
		fn := v.MethodByName(name)
		args := make([]reflect.Value, fn.Type().NumIn())
		for i := range args {
			switch at := fn.Type().In(i); {
			case at == ctxType:
				args[i] = reflect.ValueOf(context.Background())
			case at.Kind() == reflect.Pointer:
				args[i] = reflect.New(at.Elem())
			default:
				args[i] = reflect.Zero(at)
			}
		}
		before(name)
		func() {
			defer func() { after(name, recover()) }()
			if fn.Type().IsVariadic() {
				fn.CallSlice(args) // the zero slice as the variadic argument
				return
			}
			fn.Call(args)
		}()
	}
}
