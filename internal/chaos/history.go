package chaos

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/rmlab/lab/internal/plain"
)

// Entry is one line of the history (JSON lines): what a process did or
// what happened to it, and the faults. A fault's line carries its planned
// time, so the fault lines of two runs with one seed are identical; what
// the fault found (the point reached, the connection cut) is the next
// "fault-result" line, at the time it happened.
type Entry struct {
	T      int64  `json:"t_ms"` // since the schedule started
	Proc   string `json:"proc"`
	Op     string `json:"op"` // committed, published, sent, dead, applied, duplicate, start, exit, fault, fault-result, phase
	ID     string `json:"id,omitempty"`
	Fault  *Fault `json:"fault,omitempty"`
	Detail string `json:"detail,omitempty"`
}

// Bucket is one second of the timeline.
type Bucket struct {
	Committed int `json:"committed"`
	Published int `json:"published"`
	Applied   int `json:"applied"`
	Absorbed  int `json:"absorbed"`
}

// Mark is a fault on the timeline.
type Mark struct {
	T      int64     `json:"t_ms"`
	Kind   FaultKind `json:"kind"`
	Target string    `json:"target"`
	Point  string    `json:"point,omitempty"`
	Result string    `json:"result,omitempty"`
	Done   int64     `json:"done_ms,omitempty"` // when it had its effect (a kill armed at a point fires later)
	Must   bool      `json:"must,omitempty"`    // one a program of its own cannot survive unless right: it must land
}

// Timeline is what the screen and the report draw: per-second counts and
// the faults.
type Timeline struct {
	Seconds []Bucket `json:"seconds"`
	Faults  []Mark   `json:"faults"`
	Phase   string   `json:"phase"` // setup, schedule, drain, check, done
}

// History records a run: to a JSON-lines writer when given, and always
// into the counts the checker and the timeline need.
type History struct {
	start time.Time

	mu        sync.Mutex
	w         *bufio.Writer
	timeline  Timeline
	firstDone map[int64]time.Time // order → when its effect was first applied
	notes     map[string]int      // op → count
	lastWork  time.Time           // the last consumer note
	begun     bool
	phase     string

	keep    bool                // Keep: remember what the explanations need
	byOrder map[int64][]Entry   // each order's notes and wires
	procs   []Entry             // starts and exits
	last    map[string][]string // each process's last lines, across its restarts
	flagged []string            // lines that read like a refusal by a server
}

// lastKept is how many lines of each process Keep remembers.
const lastKept = 12

// maxKept bounds what Keep remembers of one order, and of the processes.
const maxKept = 64

// Keep makes the history remember each order's notes and wires and every
// process's starts and exits, for the checker to explain what went wrong
// with an order from what happened to it.
func (h *History) Keep() {
	h.mu.Lock()
	h.keep, h.byOrder, h.last = true, map[int64][]Entry{}, map[string][]string{}
	h.mu.Unlock()
}

func (h *History) remember(e Entry) {
	if !h.keep {
		return
	}
	if n, ok := OrderOf(e.ID); ok {
		if len(h.byOrder[n]) < maxKept {
			h.byOrder[n] = append(h.byOrder[n], e)
		}
	}
}

// Wire records what a program's proxy saw it do (publish, deliver, ack,
// confirm, consume) with the message id it concerned.
func (h *History) Wire(proc, op, id, detail string) {
	now := time.Now()
	h.mu.Lock()
	defer h.mu.Unlock()
	t := h.Since()
	e := Entry{T: t.Milliseconds(), Proc: proc, Op: op, ID: id, Detail: detail}
	h.write(e)
	h.remember(e)
	if op == "ack" || op == "deliver" || op == "reject" || op == "nack" {
		h.lastWork = now
	}
	if op == "publish" && detail != "cut" {
		h.notes["published"]++
		h.bucket(t).Published++
	}
}

// Applied records an application a program of its own committed (the
// lab's audit), at its time: the timeline's applied line and the latency.
func (h *History) Applied(order int64, at time.Time) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.bucket(max(0, at.Sub(h.start))).Applied++
	if _, seen := h.firstDone[order]; !seen {
		h.firstDone[order] = at
	}
	if at.After(h.lastWork) {
		h.lastWork = at
	}
}

// Order is what the history kept of one order (Keep).
func (h *History) Order(n int64) []Entry {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]Entry(nil), h.byOrder[n]...)
}

// Procs are the processes' starts and exits the history kept (Keep).
func (h *History) Procs() []Entry {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]Entry(nil), h.procs...)
}

// Start is when the schedule started.
func (h *History) Start() time.Time {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.start
}

// NewHistory starts a history at now; w may be nil.
func NewHistory(w io.Writer) *History {
	h := &History{start: time.Now(), firstDone: map[int64]time.Time{}, notes: map[string]int{}}
	if w != nil {
		h.w = bufio.NewWriterSize(w, 64*1024)
	}
	return h
}

// Begin starts the clock at the schedule's start: t_ms counts from it, and
// the setup's lines before it carry 0.
func (h *History) Begin() {
	h.mu.Lock()
	h.start, h.begun = time.Now(), true
	h.mu.Unlock()
}

// Elapsed is Since for another goroutine than the history's writers.
func (h *History) Elapsed() time.Duration {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.Since()
}

// Since is the time since the schedule started (0 before); the caller
// holds h.mu.
func (h *History) Since() time.Duration {
	if !h.begun {
		return 0
	}
	return time.Since(h.start)
}

func (h *History) write(e Entry) {
	if h.w == nil {
		return
	}
	b, _ := json.Marshal(e)
	h.w.Write(plain.JSON(b)) // read with tail -f: a message id's C1 or bidi as \u escapes
	h.w.WriteByte('\n')
}

// Flush writes out what is buffered.
func (h *History) Flush() error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.w == nil {
		return nil
	}
	return h.w.Flush()
}

func (h *History) bucket(t time.Duration) *Bucket {
	i := int(t / time.Second)
	for len(h.timeline.Seconds) <= i {
		h.timeline.Seconds = append(h.timeline.Seconds, Bucket{})
	}
	return &h.timeline.Seconds[i]
}

// Note records a worker's note (kind committed, published, applied, …).
func (h *History) Note(proc, kind, id string) {
	now := time.Now()
	h.mu.Lock()
	defer h.mu.Unlock()
	t := h.Since()
	e := Entry{T: t.Milliseconds(), Proc: proc, Op: kind, ID: id}
	h.write(e)
	h.remember(e)
	h.notes[kind]++
	b := h.bucket(t)
	switch kind {
	case "committed":
		b.Committed++
	case "published":
		b.Published++
	case "applied":
		b.Applied++
		if n, ok := OrderOf(id); ok {
			if _, seen := h.firstDone[n]; !seen {
				h.firstDone[n] = now
			}
		}
		h.lastWork = now
	case "duplicate":
		b.Absorbed++
		h.lastWork = now
	}
}

// Event records something that happened to a process (start, exit) or to
// the run.
func (h *History) Event(proc, op, detail string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	e := Entry{T: h.Since().Milliseconds(), Proc: proc, Op: op, Detail: detail}
	h.write(e)
	if h.keep && (op == "start" || op == "exit" || op == "consume" || op == "forbidden") && len(h.procs) < 100*maxKept {
		h.procs = append(h.procs, e)
	}
	if h.keep && op == "output" {
		l := append(h.last[proc], fmt.Sprintf("%7.2fs  %s", float64(e.T)/1000, detail))
		h.last[proc] = l[max(0, len(l)-lastKept):]
		if refusal.MatchString(detail) && len(h.flagged) < 50 {
			h.flagged = append(h.flagged, detail)
		}
	}
}

// LastLines are the last lines process proc wrote, whichever of its lives
// wrote them, each with its time in the schedule (Keep).
func (h *History) LastLines(proc string) []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]string(nil), h.last[proc]...)
}

// Outputs are the lines the processes wrote that read like a server's
// refusal (Keep).
func (h *History) Outputs() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]string(nil), h.flagged...)
}

// Fault records a planned fault as it starts, under its planned time.
func (h *History) Fault(f Fault) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	fc := f
	h.write(Entry{T: f.AtMS, Proc: "chaos", Op: "fault", Fault: &fc})
	h.timeline.Faults = append(h.timeline.Faults, Mark{T: h.Since().Milliseconds(), Kind: f.Kind, Target: f.Target, Point: f.Point, Must: f.Must})
	return len(h.timeline.Faults) - 1
}

// FaultResult records what fault i found.
func (h *History) FaultResult(i int, result string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.write(Entry{T: h.Since().Milliseconds(), Proc: "chaos", Op: "fault-result", Detail: result})
	if i >= 0 && i < len(h.timeline.Faults) {
		h.timeline.Faults[i].Result = result
		h.timeline.Faults[i].Done = h.Since().Milliseconds()
	}
	if h.w != nil {
		h.w.Flush() // a history being read while the run goes on (tail -f) shows each fault's outcome as it comes
	}
}

// SetPhase records the run's phase.
func (h *History) SetPhase(p string) {
	h.mu.Lock()
	h.timeline.Phase = p
	h.mu.Unlock()
	h.Event("chaos", "phase", p)
	h.Flush()
}

// Timeline is a copy of the timeline so far.
func (h *History) Timeline() Timeline {
	h.mu.Lock()
	defer h.mu.Unlock()
	t := Timeline{Phase: h.timeline.Phase}
	t.Seconds = append([]Bucket(nil), h.timeline.Seconds...)
	t.Faults = append([]Mark(nil), h.timeline.Faults...)
	return t
}

// Count is how many notes of a kind arrived.
func (h *History) Count(kind string) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.notes[kind]
}

// idleFor is how long no consumer has handled a message.
func (h *History) idleFor() time.Duration {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.lastWork.IsZero() {
		return time.Since(h.start)
	}
	return time.Since(h.lastWork)
}

// applied is when each order's effect was first applied.
func (h *History) applied() map[int64]time.Time {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := make(map[int64]time.Time, len(h.firstDone))
	for k, v := range h.firstDone {
		out[k] = v
	}
	return out
}

// OrderOf reads the order number in an event id (order-42-paid) or a
// business key (order:42:paid).
func OrderOf(id string) (int64, bool) {
	f := strings.FieldsFunc(id, func(r rune) bool { return r == '-' || r == ':' })
	if len(f) < 2 || f[0] != "order" {
		return 0, false
	}
	n, err := strconv.ParseInt(f[1], 10, 64)
	return n, err == nil
}
