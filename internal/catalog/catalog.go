// Package catalog holds the lab's own sentences in every language it speaks.
//
// The lab's run speaks English by contract: replay's reports, transcripts,
// JUnit and the lessons' own expectations read what a step wrote. The
// screen and the Chinese replay say the same lines in the learner's
// language. So a sentence is kept as its English format, the one the code
// formats with, beside its translations, and a finished English line is
// parsed back into its arguments and said again in the other language.
//
// Why not golang.org/x/text/message: it formats from a key and arguments at
// the call, which needs the arguments to travel beside every string the run
// produces; here the run's output is a string by contract (Result.Observed),
// and one table of formats both formats the English and reads it back.
package catalog

import (
	"fmt"
	"io"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
)

// A Phrase is one sentence: its English format and its translations.
type Phrase struct {
	en  string
	tr  map[string]string
	re  *regexp.Regexp
	lit string // the longest literal run of en: a cheap test before the pattern
	n   int    // arguments
	// typed is, for each argument, whether its verb takes a number or a
	// bool only (%d, %f, %t): explained by the verb, never said again.
	typed []bool
}

// F formats the English sentence (as fmt.Sprintf would).
func (p *Phrase) F(args ...any) string { return fmt.Sprintf(p.en, args...) }

// English is the phrase's English format.
func (p *Phrase) English() string { return p.en }

// E is F as an error.
func (p *Phrase) E(args ...any) error { return fmt.Errorf(p.en, args...) }

// Catalog is a set of phrases. Its zero value is empty and ready.
type Catalog struct {
	mu      sync.Mutex
	phrases []*Phrase
	sorted  bool
	memo    map[string]string // lang + "\x00" + line → said
}

// verb is a fmt verb as the lab's formats write them.
var verb = regexp.MustCompile(`%(\[\d+\])?[-+# 0-9.]*[a-zA-Z%]`)

// Add registers a sentence: its English format and, in pairs, a language
// and its format there ("zh", "…"). A translation takes the arguments in
// order with plain verbs, or by position (%[2]s) to reorder or drop some.
// Every argument comes back as text, so %s suits any of them.
func (c *Catalog) Add(en string, langFormat ...string) *Phrase {
	if len(langFormat)%2 != 0 {
		panic("catalog: " + en + ": translations go in language, format pairs")
	}
	p := &Phrase{en: en, tr: map[string]string{}}
	var pat strings.Builder
	pat.WriteString("^")
	last := 0
	for _, m := range verb.FindAllStringIndex(en, -1) {
		lit := en[last:m[0]]
		pat.WriteString(regexp.QuoteMeta(lit))
		if len(lit) > len(p.lit) {
			p.lit = lit
		}
		v := en[m[0]:m[1]]
		switch v[len(v)-1] {
		case '%':
			pat.WriteString("%")
			last = m[1]
			continue
		case 'd':
			pat.WriteString(`([-+]?\d+)`) // %+d too
		case 't':
			pat.WriteString(`(true|false)`)
		case 'f', 'g':
			pat.WriteString(`( *-?[0-9.]+)`)
		case 'q':
			pat.WriteString(`("(?:[^"\\]|\\.)*")`)
		default:
			pat.WriteString(`(.*?)`)
		}
		p.typed = append(p.typed, strings.ContainsRune("dtfg", rune(v[len(v)-1])))
		p.n++
		last = m[1]
	}
	if lit := en[last:]; len(lit) > len(p.lit) {
		p.lit = lit
	}
	pat.WriteString(regexp.QuoteMeta(en[last:]) + "$")
	p.re = regexp.MustCompile(pat.String())
	for i := 0; i < len(langFormat); i += 2 {
		p.tr[langFormat[i]] = langFormat[i+1]
	}
	c.mu.Lock()
	c.phrases = append(c.phrases, p)
	c.sorted = false
	c.memo = nil
	c.mu.Unlock()
	return p
}

// Holds reports whether en is one of the table's English formats: a test
// that reads a program's source asks it of every message written there.
func (c *Catalog) Holds(en string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, p := range c.phrases {
		if p.en == en {
			return true
		}
	}
	return false
}

// Phrases is every phrase, for tests that check the table.
func (c *Catalog) Phrases() []*Phrase {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]*Phrase(nil), c.phrases...)
}

// In is line said in lang where it is one of the catalog's sentences (an
// argument that is itself one is said in lang too); any other line, and
// every line in English, comes back as it is.
func (c *Catalog) In(lang, line string) string {
	if lang == "" || lang == "en" || line == "" {
		return line
	}
	key := lang + "\x00" + line
	c.mu.Lock()
	if !c.sorted {
		// The most literal text first: "%s exited with code %d" must not
		// take a line a longer sentence describes.
		sort.SliceStable(c.phrases, func(i, j int) bool {
			return len(c.phrases[i].en)-2*c.phrases[i].n > len(c.phrases[j].en)-2*c.phrases[j].n
		})
		c.sorted = true
	}
	if s, ok := c.memo[key]; ok {
		c.mu.Unlock()
		return s
	}
	phrases := c.phrases
	c.mu.Unlock()
	out := c.say(phrases, lang, line, 5)
	c.mu.Lock()
	if c.memo == nil || len(c.memo) > 20000 {
		c.memo = map[string]string{}
	}
	c.memo[key] = out
	c.mu.Unlock()
	return out
}

func (c *Catalog) say(phrases []*Phrase, lang, line string, depth int) string {
	out, _ := c.parse(phrases, lang, line, depth)
	return out
}

// parse says line by the phrase that explains most of it: the literal text
// of the phrase and of the phrases its arguments are said by, and the
// numbers its typed verbs took. "%s published %s" matches "1.18s  published
// by the lab's relay-1 as m", but "%7.2fs  %s" around "published by the
// lab's %s as %s" explains more of it. explained is that many bytes.
func (c *Catalog) parse(phrases []*Phrase, lang, line string, depth int) (said string, explained int) {
	if depth == 0 {
		return line, 0
	}
	said = line
	for _, p := range phrases {
		tr, ok := p.tr[lang]
		if !ok || !strings.Contains(line, p.lit) {
			continue
		}
		m := p.re.FindStringSubmatchIndex(line)
		if m == nil {
			continue
		}
		covered := len(line)
		args := make([]string, 0, p.n)
		for i := 1; i <= p.n; i++ {
			arg := line[m[2*i]:m[2*i+1]]
			covered -= len(arg)
			if p.typed[i-1] {
				covered += len(arg)
				args = append(args, arg)
				continue
			}
			a, e := c.parseArg(phrases, lang, arg, depth-1)
			covered += e
			args = append(args, a)
		}
		if covered > explained {
			said, explained = fill(tr, args), covered
		}
	}
	return said, explained
}

// parseArg says an argument: a sentence of its own, or sentences joined
// with "; " or ", " (a list of violations, of exits), each said where the
// table holds it, whichever explains more.
func (c *Catalog) parseArg(phrases []*Phrase, lang, arg string, depth int) (string, int) {
	best, most := c.parse(phrases, lang, arg, depth)
	for _, sep := range []string{"; ", ", "} {
		if !strings.Contains(arg, sep) {
			continue
		}
		parts := strings.Split(arg, sep)
		sum := len(sep) * (len(parts) - 1)
		for i, p := range parts {
			s, pe := c.parse(phrases, lang, p, depth)
			parts[i], sum = s, sum+pe
		}
		if sum > most {
			best, most = strings.Join(parts, sep), sum
		}
	}
	return best, most
}

// fill puts args into a translation's verbs: in order, or by position.
func fill(format string, args []string) string {
	var b strings.Builder
	next, last := 0, 0
	for _, m := range verb.FindAllStringSubmatchIndex(format, -1) {
		b.WriteString(format[last:m[0]])
		last = m[1]
		v := format[m[0]:m[1]]
		if strings.HasSuffix(v, "%") && !strings.HasPrefix(v, "%[") {
			b.WriteString("%")
			continue
		}
		i := next
		if m[2] >= 0 {
			n, _ := strconv.Atoi(format[m[2]+1 : m[3]-1])
			i = n - 1
		}
		next = i + 1
		if i >= 0 && i < len(args) {
			b.WriteString(args[i])
		}
	}
	b.WriteString(format[last:])
	return b.String()
}

// Check is every fault of the table: a translation that takes an argument
// the English does not give, or leaves one out without saying which it
// takes. Tests call it.
func (c *Catalog) Check(langs ...string) []string {
	var probs []string
	for _, p := range c.Phrases() {
		for _, lang := range langs {
			tr, ok := p.tr[lang]
			if !ok {
				probs = append(probs, fmt.Sprintf("%q has no %s", p.en, lang))
				continue
			}
			if strings.TrimSpace(tr) == "" {
				probs = append(probs, fmt.Sprintf("%q: its %s is empty", p.en, lang))
			}
			used := map[int]bool{}
			indexed, next := false, 0
			for _, m := range verb.FindAllStringSubmatchIndex(tr, -1) {
				if strings.HasSuffix(tr[m[0]:m[1]], "%") && m[2] < 0 {
					continue
				}
				i := next
				if m[2] >= 0 {
					indexed = true
					n, _ := strconv.Atoi(tr[m[2]+1 : m[3]-1])
					i = n - 1
				}
				next = i + 1
				if i < 0 || i >= p.n {
					probs = append(probs, fmt.Sprintf("%q: its %s %q takes argument %d of %d", p.en, lang, tr, i+1, p.n))
				}
				used[i] = true
			}
			if !indexed && len(used) != p.n {
				probs = append(probs, fmt.Sprintf("%q: its %s %q uses %d of %d arguments (write %%[N]s to choose)", p.en, lang, tr, len(used), p.n))
			}
		}
	}
	return probs
}

// english is three or more English words in a row: a sentence, as opposed
// to a name, a keyword or a value.
var english = regexp.MustCompile(`\b[A-Za-z][a-z']+(?:,? +[a-z][a-z']*){2,}\b`)

// quoted is what a line quotes: code, names and values, never the lab's
// sentence.
var quoted = regexp.MustCompile("`[^`]*`|'[^']*'|\"(?:[^\"\\\\]|\\\\.)*\"")

// Sentence is the first English sentence in line outside what it quotes
// (`code`, 'values', "names"), or "" when it has none.
func Sentence(line string) string {
	return english.FindString(quoted.ReplaceAllString(line, "''"))
}

// lab is the lab's one table: each package adds the sentences it writes
// (package-level vars, at init) and the screen says any of them.
var lab Catalog

// Add adds a sentence to the lab's table (see Catalog.Add).
func Add(en string, langFormat ...string) *Phrase { return lab.Add(en, langFormat...) }

// In is line said in lang from the lab's table (see Catalog.In).
func In(lang, line string) string { return lab.In(lang, line) }

// Lab is the lab's table, for tests that check it.
func Lab() *Catalog { return &lab }

// command is the "lab open: " (or "lab challenge run --as x: ") a
// command's message begins with, or the "FILE.md:LINE: " of a problem in
// a lesson: the command line or the place, not a sentence.
var command = regexp.MustCompile(`^(lab[^:]*: |[^\s:]+:\d+: )`)

// Writer says in lang every line written to w that is one of the lab's
// sentences, keeping the indent and the "lab COMMAND: " it begins with: a
// command's errors and reports, in the learner's language. Each Write is taken as whole lines
// (the lab writes a message in one call).
func Writer(lang string, w io.Writer) io.Writer {
	if lang == "" || lang == "en" {
		return w
	}
	return &writer{lang: lang, w: w}
}

type writer struct {
	lang string
	w    io.Writer
}

func (s *writer) Write(p []byte) (int, error) {
	lines := strings.Split(string(p), "\n")
	for i, l := range lines {
		// A report's indent, like a command's name, is kept as it is.
		indent := len(l) - len(strings.TrimLeft(l, " "))
		head := indent + len(command.FindString(l[indent:]))
		said := In(s.lang, l[head:])
		if said == l[head:] && head > indent {
			// A sentence may hold its place itself ("%s: sql step …").
			head, said = indent, In(s.lang, l[indent:])
		}
		lines[i] = l[:head] + said
	}
	if _, err := io.WriteString(s.w, strings.Join(lines, "\n")); err != nil {
		return 0, err
	}
	return len(p), nil
}

// LangOf is the language a Writer says its lines in ("en" for any other
// writer).
func LangOf(w io.Writer) string {
	if s, ok := w.(*writer); ok {
		return s.lang
	}
	return "en"
}
