package ui

import (
	"fmt"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"
	lab "github.com/rmlab/lab"
	"github.com/rmlab/lab/steps"
)

// auditSizes are the sizes the screen audit draws every frame at: the
// smallest terminal the lab supports, a laptop's, a large monitor's.
var auditSizes = [][2]int{{80, 24}, {120, 40}, {200, 60}}

// auditor checks frames of one walk: each way a learner could lose a word
// of what the screen must show them.
type auditor struct {
	t      *testing.T
	d      *driver
	a      *App
	prose  map[string]bool // lang/lesson/width whose prose was checked
	said   map[string]bool // untranslated lines already reported
	chrome []string        // English chrome fragments no Chinese frame may show
	frames int
}

func newAuditor(t *testing.T, d *driver, a *App) *auditor {
	return &auditor{t: t, d: d, a: a, prose: map[string]bool{}, said: map[string]bool{}, chrome: englishChrome()}
}

// frame draws the App's present state at every audit size, in English and
// in Chinese, then puts language and size back.
func (au *auditor) frame(where string) {
	t, a := au.t, au.a
	t.Helper()
	w0, h0, lang0 := a.width, a.height, a.c.lang
	for _, lang := range []string{"en", "zh"} {
		if a.c.lang != lang {
			au.d.run(a.switchLang())
		}
		if a.c.lang != lang {
			t.Fatalf("%s: the screen did not switch to %s: %s", where, lang, a.status)
		}
		for _, sz := range auditSizes {
			au.d.handle(tea.WindowSizeMsg{Width: sz[0], Height: sz[1]})
			au.frames++
			probs := au.check(lang)
			for i, p := range probs {
				if i == 3 {
					t.Errorf("%s, %s %dx%d: %d more", where, lang, sz[0], sz[1], len(probs)-3)
					break
				}
				t.Errorf("%s, %s %dx%d: %s", where, lang, sz[0], sz[1], p)
			}
		}
	}
	if a.c.lang != lang0 {
		au.d.run(a.switchLang())
	}
	au.d.handle(tea.WindowSizeMsg{Width: w0, Height: h0})
	// The steps' own lines as the Chinese screen says them (the frames
	// above allow them wholesale: rows and programs' lines are data).
	if l := a.current(); l != nil && a.sess != nil {
		var rs []lab.Result
		for _, r := range a.sess.results {
			rs = append(rs, r)
		}
		for _, u := range steps.Untranslated("zh", l, rs) {
			if !au.said[u] {
				au.said[u] = true
				t.Errorf("%s: English in a Chinese frame: %s", where, u)
			}
		}
	}
}

// check audits the frame drawn now.
func (au *auditor) check(lang string) []string {
	a := au.a
	var probs []string
	W, H := a.width, a.height
	frame := a.render()
	lines := strings.Split(frame, "\n")
	if len(lines) != H {
		probs = append(probs, fmt.Sprintf("the frame has %d lines, the terminal %d: the terminal cuts it", len(lines), H))
	}
	for i, l := range lines {
		if w := lipgloss.Width(l); w != W {
			probs = append(probs, fmt.Sprintf("frame line %d is %d cells wide, the terminal %d: %q", i+1, w, W, ansi.Strip(l)))
			break
		}
	}
	if a.mode != modeList && a.sess != nil {
		probs = append(probs, au.lessonPane()...)
	}
	probs = append(probs, au.orphans(lang)...)
	probs = append(probs, au.ledger()...)
	if lang == "zh" {
		probs = append(probs, au.english(ansi.Strip(frame))...)
	}
	return probs
}

// lessonPane: nothing in the lesson pane is cut (it wraps), its action area
// is never dropped for want of lines, and every option of a pending menu
// and both keys of the resume offer are on screen whole.
func (au *auditor) lessonPane() []string {
	p, s := au.a.lesson, au.a.sess
	var probs []string
	iw := p.textWidth()
	content, _ := p.content(iw)
	for _, l := range content {
		if displayWidth(l) > iw {
			probs = append(probs, fmt.Sprintf("a lesson pane line is %d cells in a %d-cell pane (cut): %q", displayWidth(l), iw, ansi.Strip(l)))
			break
		}
	}
	act := p.action(iw)
	if need := p.textLines(len(act)) + 1 + len(act); need > p.h-2 {
		probs = append(probs, fmt.Sprintf("the lesson pane needs %d lines for its text, rule and %d action lines and has %d: the last are dropped", need, len(act), p.h-2))
	}
	view := ansi.Strip(p.View())
	shown := squash(view)
	if ch := s.pendingChoice(); ch != nil {
		probs = append(probs, missingOptions(view, p.shown(ch))...)
	}
	if s.offer > 0 {
		t := au.a.c.t()
		if !strings.Contains(shown, squash(t.ResumeHint)) || !strings.Contains(shown, squash(fmt.Sprintf(t.ResumeOffer, s.offer, len(s.steps)))) {
			probs = append(probs, "the resume offer is not whole on screen")
		}
	}
	return probs
}

// missingOptions names the options (and prompt) of menu ch that view
// does not show whole.
func missingOptions(view string, ch *lab.Step) []string {
	shown := squash(view)
	var probs []string
	for _, o := range steps.Options(ch) {
		if want := squash(oneLine(o.Name) + ": " + oneLine(o.Text)); !strings.Contains(shown, want) {
			probs = append(probs, fmt.Sprintf("%s option %q is not whole on screen", ch.Kind, o.Name))
		}
	}
	if prompt := ch.Attrs["prompt"]; prompt != "" && !strings.Contains(shown, squash(oneLine(prompt))) {
		probs = append(probs, fmt.Sprintf("the %s prompt is not whole on screen", ch.Kind))
	}
	return probs
}

// squash drops whitespace and pane borders: text wrapped across lines
// compares equal to itself unwrapped.
func squash(s string) string {
	return strings.Map(func(r rune) rune {
		switch r {
		case ' ', '\n', '\t', '│':
			return -1
		}
		return r
	}, asciiSafe(s))
}

// orphans: lesson prose rendered at the pane's width leaves no word alone
// on a line when it would have fitted on the line above (a soft break kept
// from the source). Code fences and tables are left out: their lines are
// the author's.
func (au *auditor) orphans(lang string) []string {
	a := au.a
	l := a.current()
	if l == nil || a.mode == modeList {
		return nil
	}
	w := a.lesson.textWidth()
	key := fmt.Sprintf("%s/%s/%d", lang, l.ID, w)
	if au.prose[key] {
		return nil
	}
	au.prose[key] = true
	var probs []string
	var c proseCache
	for bi, b := range l.Blocks {
		if b.Step != nil {
			continue
		}
		for _, o := range orphanLines(c.lines(fmt.Sprint(bi), proseOnly(b.Prose), w, a.c.st), w) {
			probs = append(probs, fmt.Sprintf("lesson %d prose block %d: %s", l.Number, bi, o))
		}
	}
	return probs
}

// orphanLines finds the lines of prose rendered in w cells that hold one
// word (or, in Chinese, one character with its punctuation) which the wrap
// should have kept with its neighbours: it would have fitted at the end of
// the line above, or the next line's first word would have fitted beside
// it (a word alone in mid-paragraph); and a list bullet alone on a line.
// A line that begins a list item, or follows a blank one, begins a block.
func orphanLines(ls []string, w int) []string {
	plain := func(i int) string {
		if i < 0 || i >= len(ls) {
			return ""
		}
		return strings.TrimPrefix(strings.TrimRight(ansi.Strip(ls[i]), " \u00a0"), "│ ")
	}
	cont := func(i int) bool { // line i continues the block above it
		b := strings.TrimLeft(plain(i), " ")
		return b != "" && strings.TrimSpace(plain(i-1)) != "" && !startsBlock(b) && !strings.HasPrefix(b, "• ")
	}
	first := func(s string) string {
		toks := breakCJK(strings.TrimLeft(s, " "), 1<<20, 1<<20)
		f := strings.Fields(strings.Join(toks, ""))
		if len(f) == 0 {
			return ""
		}
		rs := []rune(f[0])
		if !isCJK(rs[0]) {
			return f[0]
		}
		out := string(rs[0])
		for _, r := range rs[1:] {
			if !strings.ContainsRune("，。、；：！？）」』》〉】", r) {
				break
			}
			out += string(r)
		}
		return out
	}
	sep := func(a, b string) int {
		ar, br := []rune(a), []rune(b)
		if len(ar) > 0 && len(br) > 0 && isCJK(ar[len(ar)-1]) && isCJK(br[0]) {
			return 0
		}
		return 1
	}
	var out []string
	for i := range ls {
		line := plain(i)
		body := strings.TrimSpace(line)
		switch body {
		case "-", "*", "•", "+":
			out = append(out, fmt.Sprintf("a list bullet alone on a line, above %q", strings.TrimSpace(plain(i+1))))
			continue
		}
		if body == "" || first(line) != body {
			continue // blank, or more than one word
		}
		if cont(i) {
			prev := plain(i - 1)
			pad := 0
			if strings.HasPrefix(prev, " ") && !strings.HasPrefix(prev, "  ") {
				pad = 1 // a title, drawn with a space each side
			}
			if displayWidth(prev)+pad+sep(prev, body)+displayWidth(body) <= w {
				out = append(out, fmt.Sprintf("%q stands alone and would have fitted after %q", body, strings.TrimSpace(prev)))
				continue
			}
		}
		if cont(i + 1) {
			if f := first(plain(i + 1)); displayWidth(line)+sep(line, f)+displayWidth(f) <= w {
				out = append(out, fmt.Sprintf("%q stands alone in mid-paragraph: %q would have fitted beside it", body, f))
			}
		}
	}
	return out
}

var fenceLine = regexp.MustCompile("^\\s*(```|~~~)")

// proseOnly blanks a Markdown block's code fences and table lines.
func proseOnly(md string) string {
	md = onPath(md, nil) // as the pane shows it: path markers removed
	var out []string
	fence := false
	for _, l := range strings.Split(md, "\n") {
		t := strings.TrimSpace(l)
		switch {
		case fenceLine.MatchString(l):
			fence = !fence
			out = append(out, "")
		case fence || strings.HasPrefix(t, "|"):
			out = append(out, "")
		default:
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

// ledger: a field row is drawn only when a ledger measured it.
func (au *auditor) ledger() []string {
	p := au.a.panels.ledger
	t := au.a.c.t()
	unsafe, _ := p.latest("unsafe")
	safe, _ := p.latest("safe")
	return unmeasuredRows(ansi.Strip(p.View()), t.Fields, func(name string) bool {
		return (unsafe != nil && unsafe.Measured(name)) || (safe != nil && safe.Measured(name))
	})
}

// unmeasuredRows finds the ledger view's rows labelled with a field (by
// labels, field → label) that measured says no ledger gave.
func unmeasuredRows(view string, labels map[string]string, measured func(string) bool) []string {
	var probs []string
	for _, line := range strings.Split(view, "\n") {
		line = strings.Trim(line, "│ ")
		for name, label := range labels {
			if strings.HasPrefix(line, label+" ") && !measured(name) {
				probs = append(probs, fmt.Sprintf("the ledger draws %q, which no ledger measured: %q", label, line))
			}
		}
	}
	return probs
}

// english: a Chinese frame shows none of the screen's English words, except
// where the lesson or a step's own output holds them (SQL, a program's log).
func (au *auditor) english(frame string) []string {
	var allowed strings.Builder
	if l := au.a.current(); l != nil {
		for _, b := range l.Blocks {
			allowed.WriteString(b.Prose + "\n")
			if b.Step != nil {
				allowed.WriteString(b.Step.Body + "\n" + fmt.Sprint(b.Step.Attrs) + "\n")
			}
		}
	}
	if s := au.a.sess; s != nil {
		for _, r := range s.results {
			switch r.Kind {
			case "ledger", "choice", "predict": // the screen says these in its own words
			default:
				allowed.WriteString(r.Observed + "\n" + r.Why + "\n" + strings.Join(r.Sent, "\n") + "\n")
			}
		}
	}
	// The tables panel shows the database's rows: data, in whatever
	// language the lesson wrote them (last_error 'returned unroutable').
	for _, d := range au.a.panels.tables.data {
		for _, r := range d.rows {
			allowed.WriteString(strings.Join(r, "\n") + "\n")
		}
	}
	// The workers panel shows a program's log line as the program wrote
	// it, in English ("committed in the log before ..."): its output, not
	// the screen's words.
	for _, w := range au.a.panels.workers.statuses {
		allowed.WriteString(strings.Join(w.Log, "\n") + "\n")
	}
	ok := allowed.String()
	var probs []string
	for _, f := range au.chrome {
		if i := strings.Index(frame, f); i >= 0 && !strings.Contains(ok, f) {
			line := frame[strings.LastIndex(frame[:i], "\n")+1:]
			if j := strings.Index(line, "\n"); j >= 0 {
				line = line[:j]
			}
			probs = append(probs, fmt.Sprintf("English chrome %q in a Chinese frame: %q", f, strings.TrimSpace(line)))
		}
	}
	return probs
}

var formatVerb = regexp.MustCompile(`%[-+# 0-9.]*[a-zA-Z]`)

// englishChrome is every piece of the English text table long enough to
// tell apart (six characters or more, between format verbs and line ends)
// that no Chinese string holds.
func englishChrome() []string {
	var en, zh []string
	collect(reflect.ValueOf(textEN), &en)
	collect(reflect.ValueOf(textZH), &zh)
	zhAll := strings.Join(zh, "\n")
	seen := map[string]bool{}
	var out []string
	for _, s := range en {
		for _, part := range formatVerb.Split(s, -1) {
			for _, f := range strings.Split(part, "\n") {
				f = strings.Trim(f, " :()[]-.,;/'\"")
				if len(f) < 6 || !strings.ContainsAny(f, "abcdefghijklmnopqrstuvwxyz") || strings.Contains(zhAll, f) || seen[f] {
					continue
				}
				seen[f] = true
				out = append(out, f)
			}
		}
	}
	return out
}

func collect(v reflect.Value, out *[]string) {
	switch v.Kind() {
	case reflect.String:
		*out = append(*out, v.String())
	case reflect.Struct:
		for i := 0; i < v.NumField(); i++ {
			collect(v.Field(i), out)
		}
	case reflect.Slice, reflect.Array:
		for i := 0; i < v.Len(); i++ {
			collect(v.Index(i), out)
		}
	case reflect.Map:
		for _, k := range v.MapKeys() {
			collect(v.MapIndex(k), out)
		}
	}
}

// The audit itself must fail on what it looks for: a cut option, an
// orphan word, an English word in a Chinese frame, a ledger field nobody
// measured.
func TestTheScreenAuditCatchesWhatItLooksFor(t *testing.T) {
	a := newTestApp(t, fakeEnv(), "en", "fixture-choice", 80, 24)
	d := newDriver(t, a)
	d.until("the lesson to open", 2*time.Second, idle)
	au := newAuditor(t, d, a)
	if probs := au.check("en"); len(probs) != 0 {
		t.Errorf("a sound frame fails the audit: %v", probs)
	}

	// A pane too short for its text's last line, the rule and the action.
	h := a.lesson.h
	a.lesson.h = 4
	if probs := au.lessonPane(); len(probs) == 0 || !strings.Contains(strings.Join(probs, "\n"), "the last are dropped") {
		t.Errorf("the audit missed an action area with no room: %v", probs)
	}
	a.lesson.h = h

	labels := map[string]string{"intended": "intended", "committed": "committed"}
	view := "│verdict     lost   applied once │\n│intended    1      1            │\n│committed   0      0            │"
	if probs := unmeasuredRows(view, labels, func(f string) bool { return true }); len(probs) != 0 {
		t.Errorf("measured rows fail the audit: %v", probs)
	}
	if probs := unmeasuredRows(view, labels, func(f string) bool { return f != "committed" }); len(probs) != 1 {
		t.Errorf("the audit missed a ledger row nobody measured: %v", probs)
	}

	if probs := au.english("结论 丢失"); len(probs) != 0 {
		t.Errorf("a Chinese frame fails the audit: %v", probs)
	}
	if probs := au.english("结论 (not run yet) 丢失"); len(probs) == 0 {
		t.Errorf("the audit missed English chrome in a Chinese frame")
	}

	if probs := orphanLines([]string{"a list item whose source", "  wrapped", "", "alone", "- item", "- next"}, 40); len(probs) != 1 {
		t.Errorf("the audit missed an orphan word, or took a paragraph's start for one: %v", probs)
	}
	if probs := orphanLines([]string{"a line that is full to the edge", "word"}, 34); len(probs) != 0 {
		t.Errorf("a word that did not fit above is no orphan: %v", probs)
	}
	if probs := orphanLines([]string{"-", "它本身不负责排序", "", "信", "封；并让每个", "", "承载它的信封；", "并"}, 40); len(probs) != 3 {
		t.Errorf("the audit missed a bullet alone, or a Chinese character alone: %v", probs)
	}
	if probs := orphanLines([]string{"一二三四五六七八九十一二三四五六七八九", "十。", "", "一二三四五六七八九十一二三四五六七八", "九十。还有"}, 40); len(probs) != 0 {
		t.Errorf("a character and its closing mark that did not fit above: %v", probs)
	}

	ch := &lab.Step{Kind: "choice", Attrs: map[string]string{"name": "x", "prompt": "Where does it die?"},
		Body: "- before: before the commit, the consumer dies\n- after: after the commit, before the ack"}
	whole := "Where does it die?\n> before: before the commit, the\n    consumer dies\n  after: after the commit, before the ack"
	if probs := missingOptions(whole, ch); len(probs) != 0 {
		t.Errorf("wrapped options fail the audit: %v", probs)
	}
	if probs := missingOptions("Where does it die?\n> before: before the commit, the…\n  after: after the commit, before the ack", ch); len(probs) != 1 {
		t.Errorf("the audit missed a cut option: %v", probs)
	}

	if c := proseOnly("text\n```sql\nSELECT 1;\n```\n| a | b |\nmore"); c != "text\n\n\n\n\nmore" {
		t.Errorf("proseOnly kept code or a table: %q", c)
	}
}
