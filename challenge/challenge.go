// Package challenge is the challenges' ladder: pages (en/, zh/) that each
// give the learner a role in the pipeline — the consumer or the relay — to
// write in any language, starters to begin from, reference solutions, and
// the runner that puts the learner's program under the chaos harness
// (package chaos: its schedule, supervisor, proxies, history and checker)
// and explains each order that went wrong.
//
// A page is Markdown with a ```challenge block of key: value lines (name,
// number, role, orders, duration, faults, every, copies, resend, conflict,
// sms, order, starter, solutions) and a "## Hints" section whose list items are the
// hints, given one at a time.
package challenge

import (
	"embed"
	"fmt"
	"io/fs"
	"path"
	"slices"
	"strconv"
	"strings"
	"time"

	lab "github.com/rmlab/lab"
	"github.com/rmlab/lab/internal/chaos"
)

//go:embed en/*.md zh/*.md CONTRACT.md CONTRACT.zh.md
var pages embed.FS

// Langs are the languages every challenge is written in.
var Langs = []string{"en", "zh"}

// Contract is the one page a program must meet (CONTRACT.md), in lang.
func Contract(lang string) string {
	name := "CONTRACT.md"
	if lang == "zh" {
		name = "CONTRACT.zh.md"
	}
	b, _ := pages.ReadFile(name)
	return string(b)
}

// All loads the ladder in lang, in order.
func All(lang string) ([]*lab.Challenge, error) {
	if !slices.Contains(Langs, lang) {
		return nil, fmt.Errorf("language %q: the challenges are written in %s", lang, strings.Join(Langs, " and "))
	}
	files, err := fs.Glob(pages, lang+"/*.md")
	if err != nil {
		return nil, err
	}
	slices.Sort(files)
	var out []*lab.Challenge
	for _, f := range files {
		b, _ := pages.ReadFile(f)
		c, err := Parse(f, string(b))
		if err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	return out, nil
}

// Named finds a challenge by name (or number) in lang.
func Named(lang, name string) (*lab.Challenge, error) {
	all, err := All(lang)
	if err != nil {
		return nil, err
	}
	var names []string
	for _, c := range all {
		if c.Name == name || strconv.Itoa(c.Number) == name {
			return c, nil
		}
		names = append(names, c.Name)
	}
	return nil, fmt.Errorf("no challenge %q; `lab challenge list` shows them: %s", name, strings.Join(names, ", "))
}

// Parse reads one page.
func Parse(file, src string) (*lab.Challenge, error) {
	c := &lab.Challenge{File: file, Copies: 2, Orders: 200, Duration: 8 * time.Second, Every: 700 * time.Millisecond}
	bad := func(format string, a ...any) error {
		return fmt.Errorf("%s: %s", file, fmt.Sprintf(format, a...))
	}
	head, rest, ok := strings.Cut(src, "```challenge\n")
	if !ok {
		return nil, bad("no ```challenge block")
	}
	block, body, ok := strings.Cut(rest, "\n```\n")
	if !ok {
		return nil, bad("the ```challenge block is not closed")
	}
	title := strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(head), "# "))
	c.Title = title
	for i, l := range strings.Split(block, "\n") {
		k, v, ok := strings.Cut(l, ":")
		if !ok {
			return nil, bad("line %d of the challenge block: %q is not key: value", i+1, l)
		}
		v = strings.TrimSpace(v)
		var err error
		switch strings.TrimSpace(k) {
		case "name":
			c.Name = v
		case "number":
			c.Number, err = strconv.Atoi(v)
		case "role":
			c.Role = v
		case "orders":
			c.Orders, err = strconv.Atoi(v)
		case "duration":
			c.Duration, err = time.ParseDuration(v)
		case "every":
			c.Every, err = time.ParseDuration(v)
		case "copies":
			c.Copies, err = strconv.Atoi(v)
		case "resend":
			c.Resend, err = strconv.Atoi(v)
		case "conflict":
			c.Conflict, err = strconv.Atoi(v)
		case "sms":
			c.SMS, err = strconv.ParseBool(v)
		case "order":
			c.Order, err = strconv.ParseBool(v)
		case "faults":
			c.Faults = strings.Split(v, ",")
			_, err = chaos.ParseFaults(v)
		case "starter":
			c.Starter = v
		case "solutions":
			c.Solutions = strings.Fields(v)
		default:
			return nil, bad("line %d of the challenge block: unknown key %q", i+1, k)
		}
		if err != nil {
			return nil, bad("%s: %v", strings.TrimSpace(k), err)
		}
	}
	switch {
	case c.Name == "" || c.Number == 0:
		return nil, bad("the challenge block needs name: and number:")
	case c.Role != "consumer" && c.Role != "relay":
		return nil, bad("role: %q; a program takes the place of the consumer or the relay", c.Role)
	case c.Starter != "consumer" && c.Starter != "relay" && c.Starter != "sms" && c.Starter != "order":
		return nil, bad("starter: %q; there are starters for consumer, relay, sms and order", c.Starter)
	case c.Order && c.Role != "consumer":
		return nil, bad("order: true is the consumer's effect; role: %s", c.Role)
	case c.SMS && c.Role != "consumer":
		return nil, bad("sms: true is the consumer's effect; role: %s", c.Role)
	}
	text, hints, _ := strings.Cut(body, "\n## Hints\n")
	if hints == "" {
		text, hints, _ = strings.Cut(body, "\n## 提示\n")
	}
	c.Text = strings.TrimSpace(text)
	for _, item := range strings.Split("\n"+hints, "\n- ")[1:] {
		if h := strings.TrimSpace(item); h != "" {
			c.Hints = append(c.Hints, h)
		}
	}
	if len(c.Hints) == 0 {
		return nil, bad("no hints: a \"## Hints\" section of list items")
	}
	if base := path.Base(file); !strings.Contains(base, c.Name) {
		return nil, bad("the file is named %s but the challenge %s", base, c.Name)
	}
	return c, nil
}
