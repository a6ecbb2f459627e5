// Package lab holds the domain types of the reliable-messaging lab: lessons,
// their steps, what a step observed, and the outcome ledger. Every other
// package (the loader, the step vocabulary, the services, the screen, replay)
// speaks in these types.
package lab

import (
	"fmt"
	"strings"
	"time"

	"github.com/rmlab/lab/internal/secret"
)

// Part groups lessons the way the article does.
type Part string

const (
	PartIdempotency Part = "idempotency" // article section 2
	PartBroker      Part = "broker"      // article section 1
	PartOutbox      Part = "outbox"      // article sections 3 and 4
	PartChallenges  Part = "challenges"  // the learner writes the consumer or the relay
)

// Capability is something a server may or may not offer. A lesson lists what
// it needs; `lab doctor` reports which lessons a missing capability disables.
type Capability string

const (
	CapSkipLocked    Capability = "skip-locked"    // MySQL ≥ 8.0.1, MariaDB ≥ 10.6
	CapJSON          Capability = "json"           // JSON column type (MariaDB: LONGTEXT alias)
	CapRedis         Capability = "redis"          // a Redis server answers
	CapAMQP          Capability = "amqp"           // a RabbitMQ broker answers
	CapQuorum        Capability = "quorum-queues"  // RabbitMQ ≥ 3.8
	CapStream        Capability = "streams"        // RabbitMQ ≥ 3.9
	CapManagement    Capability = "management-api" // unacked counts
	CapBrokerControl Capability = "broker-control" // the lab may restart the broker
	CapOwnBroker     Capability = "own-broker"     // the lab can start RabbitMQ nodes of its own (package node)
	CapBinlog        Capability = "binlog"         // a row-based binary log to read: the server's, or a server of the lab's own (package dbnode)
	// CapSnapshotIsolation: InnoDB refuses a write to a row changed after
	// the transaction's snapshot (error 1020): MariaDB ≥ 11.6.2's default,
	// innodb_snapshot_isolation=ON. A lesson shows it with a server step.
	CapSnapshotIsolation Capability = "snapshot-isolation"
)

// Alternatives splits a need written "own-broker|broker-control" (any one
// of them will do) into its capabilities.
func (c Capability) Alternatives() []Capability {
	var out []Capability
	for _, a := range strings.Split(string(c), "|") {
		out = append(out, Capability(strings.TrimSpace(a)))
	}
	return out
}

// MetBy reports whether caps offer the need (one of its alternatives).
func (c Capability) MetBy(caps map[Capability]bool) bool {
	for _, a := range c.Alternatives() {
		if caps[a] {
			return true
		}
	}
	return false
}

// Unmet lists the needs of l that caps do not offer.
func (l *Lesson) Unmet(caps map[Capability]bool) []string {
	var out []string
	for _, c := range l.Needs {
		if !c.MetBy(caps) {
			out = append(out, string(c))
		}
	}
	return out
}

// Capabilities are every capability a lesson's needs: may name.
var Capabilities = []Capability{CapSkipLocked, CapJSON, CapRedis, CapAMQP, CapQuorum, CapStream, CapManagement, CapBrokerControl, CapOwnBroker, CapBinlog}

// Facts are the capabilities a server step branches on (the server decides
// the path, not the learner): a server without them takes the other path,
// so no lesson needs them.
var Facts = []Capability{CapSnapshotIsolation}

// Lesson is one numbered lesson, in one language, loaded from Markdown.
type Lesson struct {
	ID          string       // stable slug, e.g. "idem-first-processing"
	Number      int          // global number shown in `lab list`
	Part        Part         // which part of the article it teaches
	Title       string       // the first H1 of the file
	Lang        string       // "en" or "zh"
	File        string       // where it was loaded from, for file:line errors
	Line        int          // the line of its lesson block
	ExplainOnly bool         // nothing runs against a service (e.g. RocketMQ)
	Needs       []Capability // what the servers must offer
	Tables      []TableView  // what the live table panel shows
	Queues      []string     // broker queues the queue panel shows (article names)
	Blocks      []Block      // prose and steps, in file order
	// ReplaceAnswers is a mutation run's (package mutation): every check
	// that holds is made once more with the servers' answer replaced by
	// another of its type, which it must fail (Result.Replaced).
	ReplaceAnswers bool
}

// TableView is a query the screen polls to show a lesson's table.
type TableView struct {
	Line  int    // the lesson block line that declares it
	Title string // e.g. "blog_idempotency_lab.points_account"
	DB    string // article database name, namespace added at run time
	Query string
}

// QueueStat is one queue's state as the broker reports it.
type QueueStat struct {
	Name      string // as created (namespace included)
	Ready     int
	Unacked   int // -1 when unknown (no management API)
	Consumers int
	Exists    bool
	Down      string // why the broker cannot serve it now, e.g. its home node is down ("" when it can)
	Source    string // "management API" or "passive declare"
}

// Steps returns the lesson's steps in order.
func (l *Lesson) Steps() []*Step {
	var out []*Step
	for i := range l.Blocks {
		if l.Blocks[i].Step != nil {
			out = append(out, l.Blocks[i].Step)
		}
	}
	return out
}

// PathOf splits a paragraph of prose that begins with <!-- when=CHOICE:OPTION -->
// (it tells what happened on one path only) into that condition and the
// paragraph without it; "" for a paragraph of every path.
func PathOf(paragraph string) (when, text string) {
	rest, ok := strings.CutPrefix(strings.TrimLeft(paragraph, " "), "<!-- when=")
	if !ok {
		return "", paragraph
	}
	cond, text, ok := strings.Cut(rest, "-->")
	if !ok {
		return "", paragraph
	}
	return strings.TrimSpace(cond), strings.TrimLeft(text, " \n")
}

// Block is either prose (Markdown source) or an executable step.
type Block struct {
	Prose string
	Step  *Step
}

// Step is one fenced block whose info string names a step kind.
type Step struct {
	Kind  string            // first word of the info string: sql, expect, worker, ...
	Attrs map[string]string // key=value words after it (value may be "quoted")
	Body  string            // the block's text
	File  string
	Line  int // line of the opening fence, 1-based
	Index int // position among the lesson's steps, 0-based
}

// Attr returns an attribute or def when it is absent.
func (s *Step) Attr(key, def string) string {
	if v, ok := s.Attrs[key]; ok {
		return v
	}
	return def
}

// Where is "file:line", for messages about this step.
func (s *Step) Where() string { return fmt.Sprintf("%s:%d", s.File, s.Line) }

// Result is what running one step observed.
type Result struct {
	Kind     string        `json:"kind"`
	Passed   bool          `json:"passed"`
	Skipped  bool          `json:"skipped,omitempty"`
	Observed string        `json:"observed"`       // what came back, as the learner sees it
	Sent     []string      `json:"sent,omitempty"` // statements or commands sent, as shown
	Why      string        `json:"why,omitempty"`  // why an expectation failed or a step was skipped
	Line     int           `json:"line"`
	Elapsed  time.Duration `json:"-"`
	// DurationMS is the whole step's wall time, however the step measures
	// Elapsed (a statement's own time): replay's profile of a lesson.
	DurationMS int64   `json:"duration_ms"`
	Ledger     *Ledger `json:"ledger,omitempty"`
	Option     string  `json:"option,omitempty"` // the choice option this run took
	// Replaced are the step's checks made again with the answer replaced
	// (Lesson.ReplaceAnswers).
	Replaced []Replacement `json:"replaced,omitempty"`
}

// Replacement is one check made again with what a server answered
// replaced by another answer of its type: Held is whether it still held,
// which a check that reads the answer cannot.
type Replacement struct {
	Line   int    `json:"line"`   // the check's file line
	Answer string `json:"answer"` // the answer it was given instead, in short
	Held   bool   `json:"held"`
	Why    string `json:"why,omitempty"` // what the check said of the replaced answer
}

// Ledger counts what a variant of a lesson intended and what happened,
// every figure read from the services at the moment the step ran.
type Ledger struct {
	Variant   string `json:"variant"` // "unsafe" or "safe"
	Label     string `json:"label,omitempty"`
	Intended  int    `json:"intended"`
	Committed int    `json:"committed,omitempty"`
	Published int    `json:"published,omitempty"`
	Delivered int    `json:"delivered,omitempty"`
	Applied   int    `json:"applied"`
	Absorbed  int    `json:"absorbed,omitempty"` // duplicates the safe side turned away
	// Waiting is not applied yet but still in a queue (behind a poison
	// message); Unavailable exists but cannot be read now (its node is
	// down). Neither is lost: each has a verdict of its own.
	Waiting     int `json:"waiting,omitempty"`
	Unavailable int `json:"unavailable,omitempty"`
	Lost        int `json:"lost"`
	Twice       int `json:"duplicated"` // effects applied more than once
	// Fields are the figures the ledger step measured (lost and duplicated
	// follow from them): a figure it did not give is not drawn as a 0.
	Fields []string `json:"fields,omitempty"`
}

// Measured reports whether the ledger gave field (every field of a ledger
// that does not say).
func (l Ledger) Measured(field string) bool {
	if field == "lost" || field == "duplicated" {
		return true
	}
	if l.Fields == nil { // a ledger from before Fields: waiting and unavailable were never counted
		return field != "waiting" && field != "unavailable"
	}
	for _, f := range l.Fields {
		if f == field {
			return true
		}
	}
	return false
}

// Verdict is the one-word outcome of a ledger.
func (l Ledger) Verdict() string {
	switch {
	case l.Lost > 0 && l.Twice > 0:
		return "lost and duplicated"
	case l.Lost > 0:
		return "lost"
	case l.Twice > 0:
		return "duplicated"
	case l.Unavailable > 0:
		return "unavailable"
	case l.Waiting > 0:
		return "waiting"
	default:
		return "applied once"
	}
}

// Error is an error a user reads: what failed, where, and how to fix it.
// Err keeps the detail for the programmer. Messages never contain passwords:
// callers redact DSNs and URLs before putting them in Where.
type Error struct {
	What  string // "cannot connect to MySQL"
	Where string // "127.0.0.1:3306" or "labs/en/01.md:12"
	Fix   string // "start it, or pass --mysql DSN"
	Err   error
}

func (e *Error) Error() string { return e.In(nil) }

// In is the error with each of its parts said by say (the lab's catalog
// in the learner's language; nil: as written), in the one layout every
// language shares.
func (e *Error) In(say func(string) string) string {
	if say == nil {
		say = func(s string) string { return s }
	}
	var b strings.Builder
	b.WriteString(say(e.What))
	if e.Where != "" {
		b.WriteString(" (" + say(e.Where) + ")")
	}
	if e.Err != nil {
		b.WriteString(": " + say(e.Err.Error()))
	}
	if e.Fix != "" {
		b.WriteString("\n  " + say("fix: "+e.Fix))
	}
	// A driver's error can quote the address it was given; the passwords
	// the lab was given never reach a person through one.
	return secret.Scrub(b.String())
}

func (e *Error) Unwrap() error { return e.Err }

// Challenge is one rung of the challenges' ladder, in one language: the
// learner's program takes the place of the consumer or the relay, and the
// lab runs it under a fault schedule and checks every order.
type Challenge struct {
	Name   string // once, business-key, …: what `lab challenge run NAME` takes
	Number int
	Title  string
	Role   string // consumer or relay: whose place the program takes
	Text   string // the page, Markdown, without its header block and hints
	Hints  []string
	File   string // where it was loaded from, for messages

	// The run: how many orders over how long, which faults how often, how
	// many copies of the program; every Nth order re-sent under a new id,
	// or repeated with another amount.
	Orders           int
	Duration         time.Duration
	Faults           []string
	Every            time.Duration
	Copies           int
	Resend, Conflict int
	SMS              bool     // the effect is an SMS through the lab's provider (LAB_SMS_URL), not points
	Order            bool     // each order is two events, CREATED then PAID, with versions; the effect is its newest state in order_view
	Starter          string   // the starter the learner begins from: consumer, relay or sms
	Solutions        []string // reference solutions that pass it: go/once, python/consumer, …
}
