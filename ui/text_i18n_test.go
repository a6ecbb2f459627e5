package ui

import (
	"github.com/rmlab/lab/steps"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"
)

var verbRe = regexp.MustCompile(`%[-+# 0-9.]*[a-zA-Z%]`)

// TestChromeTablesAgree: every language fills every string, keeps the same
// format verbs in the same order and the same map keys as English, and
// uses no East-Asian-ambiguous glyph (only ASCII, CJK ideographs and
// punctuation, and full-width forms, whose width every terminal agrees on).
func TestChromeTablesAgree(t *testing.T) {
	en := reflect.ValueOf(textEN)
	for lang, tx := range texts {
		v := reflect.ValueOf(*tx)
		for i := 0; i < v.NumField(); i++ {
			name := en.Type().Field(i).Name
			compare(t, lang+"."+name, en.Field(i), v.Field(i))
		}
	}
}

func compare(t *testing.T, where string, en, v reflect.Value) {
	t.Helper()
	switch v.Kind() {
	case reflect.String:
		s := v.String()
		if s == "" {
			t.Errorf("%s is empty", where)
		}
		if a, b := verbRe.FindAllString(en.String(), -1), verbRe.FindAllString(s, -1); !reflect.DeepEqual(a, b) {
			t.Errorf("%s: verbs %v, English has %v", where, b, a)
		}
		for _, r := range s {
			if !safeWidth(r) {
				t.Errorf("%s: %q holds %q (U+%04X), whose width terminals disagree on", where, s, r, r)
			}
		}
	case reflect.Slice, reflect.Array:
		if v.Len() == 0 {
			t.Errorf("%s is empty", where)
		}
		for i := 0; i < v.Len(); i++ {
			e := en
			if i < en.Len() {
				e = en.Index(i)
			} else {
				e = reflect.ValueOf("")
			}
			if v.Kind() == reflect.Array {
				compare(t, where, e, v.Index(i))
			} else {
				compare(t, where, reflect.ValueOf(verbRe.ReplaceAllString(e.String(), "")), v.Index(i))
			}
		}
	case reflect.Map:
		if v.Len() != en.Len() {
			t.Errorf("%s: %d keys, English has %d", where, v.Len(), en.Len())
		}
		for _, k := range en.MapKeys() {
			x := v.MapIndex(k)
			if !x.IsValid() {
				t.Errorf("%s lacks %v", where, k)
				continue
			}
			compare(t, where+"["+k.String()+"]", en.MapIndex(k), x)
		}
	}
}

func safeWidth(r rune) bool {
	switch {
	case r == utf8.RuneError:
		return false
	case r >= 0x20 && r < 0x7f:
		return true
	case r >= 0x3001 && r <= 0x303f: // CJK punctuation (、。「」)
		return true
	case r >= 0x4e00 && r <= 0x9fff: // CJK ideographs
		return true
	case r >= 0xff01 && r <= 0xff5e: // full-width forms (，：；（）)
		return true
	}
	return false
}

// TestChineseChromeMatchesGoldenFiles pins the screen's own text in Chinese
// at 80x24: panels, the list and the help overlay.
func TestChineseChromeMatchesGoldenFiles(t *testing.T) {
	a := newTestApp(t, fakeEnv(), "zh", "fixture-basics", 80, 24)
	fill(t, a)
	panels := map[string]Component{"tables": a.panels.tables, "queues": a.panels.queues,
		"workers": a.panels.workers, "ledger": a.panels.ledger}
	for i, name := range []string{"tables", "queues", "workers", "ledger"} {
		a.panels.active = i
		a.panels.markActive()
		golden(t, "panel_"+name+"_zh_80x24", ascii(panels[name].View()))
	}
	a.panels.active = panelTables
	a.panels.markActive()
	a.press("esc")
	golden(t, "screen_list_zh_80x24", ascii(a.render()))
	a.press("?")
	golden(t, "screen_help_zh_80x24", ascii(a.render()))
}

// TestLanguageSwitchSwitchesTheChrome: l changes the screen's own words and
// the help overlay's key descriptions with the lesson.
func TestLanguageSwitchSwitchesTheChrome(t *testing.T) {
	a := newTestApp(t, fakeEnv(), "en", "fixture-basics", 100, 30)
	fill(t, a)
	v := plainView(a.render())
	for _, want := range []string{"reliable-messaging lab", "Tables", "enter run next"} {
		if !contains(v, want) {
			t.Errorf("en screen lacks %q:\n%s", want, v)
		}
	}
	a.press("l")
	v = plainView(a.render())
	for _, want := range []string{"可靠消息实验室", "表格", "enter 运行下一步"} {
		if !contains(v, want) {
			t.Errorf("zh screen lacks %q:\n%s", want, v)
		}
	}
	a.press("?")
	if v := plainView(a.render()); !contains(v, textZH.Keys["l"]) || !contains(v, "按键") {
		t.Errorf("zh help:\n%s", v)
	}
	a.press("x")
	a.press("l")
	if v := plainView(a.render()); !contains(v, "reliable-messaging lab") || a.c.keys.Lang.Help().Desc != textEN.Keys["l"] {
		t.Errorf("back in en:\n%s", v)
	}
}

func contains(s, sub string) bool { return strings.Contains(s, sub) }

// Every verdict a ledger can reach is said in every language: a missing one
// would show the English word in a Chinese ledger.
func TestEveryLedgerVerdictIsTranslated(t *testing.T) {
	for lang, tx := range texts {
		for _, v := range steps.Verdicts {
			if _, ok := tx.Verdicts[v]; !ok {
				t.Errorf("%s: verdict %q has no text", lang, v)
			}
		}
	}
}
