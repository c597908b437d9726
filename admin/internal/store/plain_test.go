package store

import (
	"reflect"
	"testing"
	"time"
)

// TestPlainRun: a run is plain only while every field that the plain
// runs' insert leaves to its column's default is zero. A field added to
// Run, stored by appendInsertArgs and not by appendPlainArgs, fails the
// test until plainRun checks it.
func TestPlainRun(t *testing.T) {
	t.Parallel()
	// The fields the plain insert stores, and those no insert stores.
	stored := map[string]bool{"JobID": true, "GroupID": true, "Handler": true, "Param": true, "ShardIndex": true,
		"ShardTotal": true, "TriggerType": true, "ScheduledAt": true, "TriggeredAt": true, "Status": true, "Attempt": true,
		"DueAt": true, "TimeoutSeconds": true, "ID": true, "RoutedTo": true}
	var zero Run
	if !plainRun(&zero) {
		t.Fatal("a zero run is not plain")
	}
	rt := reflect.TypeFor[Run]()
	for i := range rt.NumField() {
		f := rt.Field(i)
		var r Run
		setNonZero(t, reflect.ValueOf(&r).Elem().Field(i))
		if got, want := plainRun(&r), stored[f.Name]; got != want {
			t.Errorf("a run whose %s alone is set: plainRun = %v, want %v", f.Name, got, want)
		}
	}
	if got, want := len(appendPlainArgs(nil, &zero)), plainInsertArgs; got != want {
		t.Errorf("appendPlainArgs gives %d values, want %d (plainInsertColumns)", got, want)
	}
}

// setNonZero sets v, a field of Run, to a value other than its zero.
func setNonZero(t *testing.T, v reflect.Value) {
	t.Helper()
	switch v.Kind() {
	case reflect.String:
		v.SetString("x")
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		v.SetInt(1)
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Map:
		v.Set(reflect.MakeMapWithSize(v.Type(), 1))
		v.SetMapIndex(reflect.ValueOf("k"), reflect.ValueOf("v"))
	case reflect.Pointer:
		v.Set(reflect.New(v.Type().Elem()))
	case reflect.Struct: // time.Time
		v.Set(reflect.ValueOf(time.Date(2026, 11, 23, 8, 0, 0, 0, time.UTC)))
	default:
		t.Fatalf("no non-zero value for a %s", v.Type())
	}
}
