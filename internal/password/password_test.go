package password

import "testing"

// MySQL's PASSWORD('abc'), as the server computes it.
func TestNativeHashIsTheServersOwnForm(t *testing.T) {
	if got, want := NativeHash("abc"), "*0D3CED9BEC10A777AEC23CCC353A8C08A633045E"; got != want {
		t.Fatalf("NativeHash(abc) = %s, want %s", got, want)
	}
	if a, b := New(), New(); a == b || len(a) != 36 {
		t.Fatalf("two new passwords: %q %q", a, b)
	}
}
