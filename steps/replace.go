package steps

// Answer-replaced checks (package mutation's third kind of mutant): in a
// run of a lesson with ReplaceAnswers, every check that held is made once
// more with what the servers answered replaced by another answer of its
// type, one the check must refuse: the rows one more, the error another,
// the confirm the other, the queue's count another, the text without what
// it looked for (or, after not, with it). A check that still holds does
// not read the answer it claims to check: a verb reading a field its step
// never fills, a contains that finds its text in a column's name or the
// statement rather than in the answer.

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	lab "github.com/rmlab/lab"
)

// replacing is what a verb that reads the broker itself (ready, unacked,
// consumers, unavailable) does with its reading during an answer-replaced
// check: nil outside one. Only the step's goroutine sets and reads it.
type replacing struct{ negated bool }

// replacedCount is the count a broker verb reads, replaced when r is
// making an answer-replaced check: want itself after not, another
// otherwise.
func (r *Run) replacedCount(got, want int) int {
	switch {
	case r == nil || r.replacing == nil:
		return got
	case r.replacing.negated:
		return want
	}
	return want + 1
}

// replaceAnswer makes the check of line (verb arg, not when negated) again
// on o with its answer replaced.
func (r *Run) replaceAnswer(o *Outcome, verb, arg string, negated bool, row, line int) lab.Replacement {
	c, answer := r.replacedOutcome(o, verb, arg, negated, row)
	r.replacing = &replacing{negated: negated}
	err := r.expectLine(c, verb, arg, negated, row)
	r.replacing = nil
	rp := lab.Replacement{Line: line, Answer: answer, Held: err == nil}
	if err != nil {
		rp.Why = err.Error()
	}
	return rp
}

// replacedOutcome is a copy of o with the part verb reads replaced by an
// answer the line (verb arg, with not when negated) must refuse, and that
// answer in short.
func (r *Run) replacedOutcome(o *Outcome, verb, arg string, negated bool, row int) (*Outcome, string) {
	c := *o
	c.Rows = make([][]string, len(o.Rows))
	for i, row := range o.Rows {
		c.Rows[i] = slices.Clone(row)
	}
	c.Extra = map[string]string{}
	for k, v := range o.Extra {
		c.Extra[k] = v
	}
	f := strings.Fields(arg) // lab check made sure each verb has what it reads
	fact := func(k, v string) (*Outcome, string) {
		if _, ok := c.Extra[k]; !ok {
			return &c, "no " + k // the verb cannot read it either way
		}
		c.Extra[k] = v
		return &c, k + " " + v
	}
	// pick is the answer after not (the one the line looks for) or another.
	pick := func(v string) string {
		if negated {
			return v
		}
		return otherAnswer(v)
	}
	switch verb {
	case "ok":
		c.Pending = false
		if negated {
			c.ErrCode, c.ErrText = "", ""
			return &c, "no error"
		}
		c.ErrCode, c.ErrText = "replaced", "ERROR replaced: an error in place of the answer"
		return &c, "an error"
	case "error":
		c.Pending = false
		c.ErrCode = pick(arg)
		c.ErrText = "ERROR " + c.ErrCode + " (replaced)"
		return &c, "error " + c.ErrCode
	case "affected":
		n, _ := strconv.ParseInt(arg, 10, 64)
		if !negated {
			n++
		}
		c.ErrCode, c.ErrText, c.Pending, c.Affected = "", "", false, n
		return &c, fmt.Sprintf("%d rows affected", n)
	case "rows":
		n, _ := strconv.Atoi(arg)
		if !negated {
			n++
		}
		c.Rows = resized(c.Rows, len(o.Columns), n)
		return &c, fmt.Sprintf("%d rows", n)
	case "value":
		c.Rows = resized(c.Rows, len(o.Columns), max(1, len(c.Rows)))
		if len(c.Rows[0]) == 0 {
			c.Rows[0] = []string{""}
		}
		c.Rows[0][0] = pick(arg)
		return &c, "value " + c.Rows[0][0]
	case "row":
		// Row lines never take not (lab check refuses it).
		c.Rows = resized(c.Rows, len(o.Columns), max(row+1, len(c.Rows)))
		cells := c.Rows[row]
		if len(cells) == 0 {
			cells = []string{""}
		}
		cells[len(cells)-1] = otherAnswer(cells[len(cells)-1])
		c.Rows[row] = cells
		return &c, "row " + strings.Join(cells, " | ")
	case "waiting":
		c.Pending = negated
		if negated {
			return &c, "still waiting"
		}
		return &c, "done"
	case "elapsed":
		d, _ := time.ParseDuration(f[len(f)-1])
		holds := map[string]bool{">=": true, ">": true}[f[0]] // the line holds for a longer time
		if holds != negated {
			c.Elapsed = d / 2
		} else {
			c.Elapsed = 2*d + time.Second
		}
		return &c, "elapsed " + c.Elapsed.String()
	case "fact":
		return fact(f[0], pick(strings.Join(f[1:], " ")))
	case "confirm", "tags", "returned", "delivered":
		return fact(verb, pick(strings.Join(f, " ")))
	case "redelivered":
		del := c.Extra["delivered"]
		switch {
		case arg == "true" && negated, arg == "false" && !negated:
			if del == "0" || del == "" {
				del = "1"
				c.Extra["delivered"] = del
			}
			return fact("redelivered", del)
		case arg == "true", arg == "false":
			return fact("redelivered", "0")
		}
		return fact("redelivered", pick(arg))
	case "header":
		name := "header " + f[0]
		v := ""
		if len(f) > 1 {
			v = strings.Join(f[1:], " ")
		}
		switch {
		case negated:
			c.Extra[name] = v
			return &c, f[0] + " " + v
		case v != "":
			c.Extra[name] = otherAnswer(v)
			return &c, f[0] + " " + c.Extra[name]
		}
		delete(c.Extra, name)
		return &c, "no " + f[0]
	case "contains":
		return replacedText(&c, r.containsText(arg), negated)
	}
	// ready, unacked, consumers, unavailable: read at the broker
	// (replacedCount).
	return &c, verb + " replaced"
}

// replacedText is c with text taken out of the answer (a row's cells, the
// error, what the step showed) or, after not, put in. A column's name and
// the statement stay: they are the lesson's own words.
func replacedText(c *Outcome, text string, negated bool) (*Outcome, string) {
	const gone = "⟨replaced⟩"
	if negated {
		switch {
		case c.Pending:
			c.Pending = false
			c.Shown = text
		case c.Shown != "":
			c.Shown += "\n" + text
		case c.ErrText != "":
			c.ErrText += " " + text
		case c.Columns != nil:
			c.Rows = append(c.Rows, resized(nil, len(c.Columns), 1)[0])
			c.Rows[len(c.Rows)-1][0] = text
		default:
			c.Shown = c.Text() + "\n" + text
		}
		return c, "an answer holding " + strconv.Quote(text)
	}
	if c.Shown == "" && c.ErrText == "" && c.Columns == nil && !c.Pending {
		c.Affected++ // "Query OK, 1 row affected": the count is the answer
	}
	c.Shown = strings.ReplaceAll(c.Shown, text, gone)
	c.ErrText = strings.ReplaceAll(c.ErrText, text, gone)
	for _, r := range c.Rows {
		for j := range r {
			r[j] = strings.ReplaceAll(r[j], text, gone)
		}
	}
	return c, "an answer without " + strconv.Quote(text)
}

// resized is rows made n long: rows cut, or copies of the last (a row of
// empty cells when there is none) added.
func resized(rows [][]string, cols, n int) [][]string {
	if n <= len(rows) {
		return rows[:n]
	}
	for len(rows) < n {
		add := make([]string, cols)
		if len(rows) > 0 {
			add = slices.Clone(rows[len(rows)-1])
		}
		rows = append(rows, add)
	}
	return rows
}

// otherAnswer is an answer that is not v: a confirm the other, or Other's.
func otherAnswer(v string) string {
	if to, ok := OtherConfirm[v]; ok {
		return to
	}
	return Other(v, "replaced")
}

// OtherConfirm is a publish's other confirm: what a mutant of a confirm
// expects, and what an answer-replaced check gives a confirm instead.
var OtherConfirm = map[string]string{"ack": "nack", "nack": "ack", "timeout": "ack", "unknown": "ack", "none": "ack"}

// Other is a value that is not v: a number one more, a boolean flipped,
// NULL a zero, a word with -suffix.
func Other(v, suffix string) string {
	if n, err := strconv.Atoi(v); err == nil {
		return strconv.Itoa(n + 1)
	}
	switch v {
	case "true":
		return "false"
	case "false":
		return "true"
	case "NULL":
		return "0"
	}
	return v + "-" + suffix
}
