package ui

import "testing"

func TestChineseSoftLineBreaksDoNotBecomeSpaces(t *testing.T) {
	got := joinCJKLines("说明这次操作已经完成，\n可以确认消息。\nSecond line\n中文")
	want := "说明这次操作已经完成，可以确认消息。\nSecond line\n中文"
	if got != want {
		t.Fatalf("got %q", got)
	}
}
