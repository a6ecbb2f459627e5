package catalog

import (
	"strings"
	"testing"
)

func TestALineIsSaidAgainWithItsOwnArguments(t *testing.T) {
	var c Catalog
	k := c.Add("SIGKILL %s (pid %d) at %s: the process is gone", "zh", "SIGKILL %s（pid %d，停在 %s）：进程已结束")
	c.Add("channel %s closed by the broker: %s", "zh", "通道 %s 被 broker 关闭：%s")
	c.Add("NotifyClose +%s: %s", "zh", "NotifyClose +%s：%s")
	c.Add("%d deliver%s held", "zh", "持有 %[1]s 条投递")
	c.Add("%s waited %s for %s", "zh", "%[3]s 等了 %[2]s（%[1]s）")
	line := k.F("c1", 4242, "after-ack")
	if line != "SIGKILL c1 (pid 4242) at after-ack: the process is gone" {
		t.Fatalf("F gave %q", line)
	}
	for _, x := range []struct{ in, want string }{
		{line, "SIGKILL c1（pid 4242，停在 after-ack）：进程已结束"},
		{"NotifyClose +3ms: channel B closed by the broker: 406 PRECONDITION_FAILED", "NotifyClose +3ms：通道 B 被 broker 关闭：406 PRECONDITION_FAILED"},
		{"2 deliveries held", "持有 2 条投递"},
		{"a waited 1s for b", "b 等了 1s（a）"},
		{"NotifyClose +1ms: 2 deliveries held; 3 deliveries held", "NotifyClose +1ms：持有 2 条投递; 持有 3 条投递"},
		// Not a sentence of the catalog: it comes back whole.
		{"SIGKILL c1 (pid x) at after-ack: the process is gone", "SIGKILL c1 (pid x) at after-ack: the process is gone"},
		{"applied: +10 points to user 7", "applied: +10 points to user 7"},
	} {
		if got := c.In("zh", x.in); got != x.want {
			t.Errorf("In(zh, %q) = %q, want %q", x.in, got, x.want)
		}
		if got := c.In("en", x.in); got != x.in {
			t.Errorf("In(en, %q) = %q, want it unchanged", x.in, got)
		}
	}
}

func TestCheckFindsATranslationThatLosesOrInventsAnArgument(t *testing.T) {
	var c Catalog
	c.Add("%s is %d", "zh", "%s 是 %d")
	if p := c.Check("zh"); len(p) != 0 {
		t.Fatalf("a whole table has faults: %v", p)
	}
	for _, bad := range []string{"%s 是", "%s 是 %d %s", "%[3]s", "", "x"} {
		var c Catalog
		c.Add("%s is %d", "zh", bad)
		if p := c.Check("zh"); len(p) == 0 {
			t.Errorf("translation %q passed Check", bad)
		}
	}
	var none Catalog
	none.Add("%s is %d")
	if p := none.Check("zh"); len(p) != 1 || !strings.Contains(p[0], "no zh") {
		t.Errorf("a phrase with no zh: %v", p)
	}
}

func TestSentenceFindsEnglishOutsideQuotes(t *testing.T) {
	for _, x := range []struct{ in, want string }{
		{"SIGKILL c1（pid 4242，停在 after-ack）：进程已结束", ""},
		{"the process is gone", "the process is gone"},
		{"等待 'a lock held by another' 完成", ""},
		{"basic.publish exchange=\"\" routing-key=\"orders\"", ""},
		{"通道 B：406 PRECONDITION_FAILED - unknown delivery tag 1", "unknown delivery tag"},
	} {
		if got := Sentence(x.in); got != x.want {
			t.Errorf("Sentence(%q) = %q, want %q", x.in, got, x.want)
		}
	}
}

// Of the phrases that match a line, the one that explains most of it says
// it: a general "%s published %s" loses to a timed line whose text is a
// sentence of its own.
func TestTheReadingThatExplainsMostOfALineSaysIt(t *testing.T) {
	var c Catalog
	c.Add("%s published %s", "zh", "%s 发布了 %s")
	c.Add("%7.2fs  %s", "zh", "%s 秒  %s")
	c.Add("published by the lab's %s as %s", "zh", "实验室的 %s 以 %s 发布")
	for _, x := range []struct{ in, want string }{
		{"   1.18s  published by the lab's relay-1 as m-1", "   1.18 秒  实验室的 relay-1 以 m-1 发布"},
		{"   2.00s  relay-2 published m-2", "   2.00 秒  relay-2 发布了 m-2"},
		{"relay-2 published m-2", "relay-2 发布了 m-2"},
	} {
		if got := c.In("zh", x.in); got != x.want {
			t.Errorf("In(zh, %q) = %q, want %q", x.in, got, x.want)
		}
	}
}

// A Writer says each line of a write, keeping its indent and the command
// it begins with, and leaves a line it does not know as it is.
func TestAWriterSaysEachLineKeepingItsIndentAndItsCommand(t *testing.T) {
	c := Add("the catalog's own test line %d", "zh", "目录自己的测试行 %s")
	var b strings.Builder
	w := Writer("zh", &b)
	if _, err := w.Write([]byte("lab x: " + c.F(1) + "\n    " + c.F(2) + "\nnot one of its lines\n")); err != nil {
		t.Fatal(err)
	}
	want := "lab x: 目录自己的测试行 1\n    目录自己的测试行 2\nnot one of its lines\n"
	if b.String() != want {
		t.Errorf("wrote %q, want %q", b.String(), want)
	}
	if LangOf(w) != "zh" || LangOf(&b) != "en" {
		t.Errorf("LangOf: %s, %s", LangOf(w), LangOf(&b))
	}
}
