package workshop

// The room's server grades a participant's challenge: `lab challenge run
// NAME --workshop USER@HOST -- PROGRAM` opens one SSH connection to the
// door and runs challengeRun there. The run — the lab's producer, relays
// or consumers, the faults, the proxies, the evidence and the checker —
// happens on the server, on a MySQL server of the lab's own made for the
// run; only the participant's program runs on their machine, as the
// server's agent: the server tells it what to start, with which
// environment, and when to kill, freeze or thaw a copy; the agent reports
// the copy's output and exit. The program reaches the run's proxies and
// server through forwards on the same SSH connection, which the door
// allows only to the addresses that run asked to be forwarded, for the
// run's life.
//
// The wire is JSON, one message per line: the server's on the session's
// standard output, the agent's on its standard input. Neither side trusts
// the other: the server reads at most maxAgentLine per line and
// maxAgentLines in a run, and enforces every kill on its side of the
// wire (deadOnTheWire); the agent takes only LAB_* variables, prints the
// server's text through plain.Text and starts nothing but the program it
// was given.

// challengeRun is the door's command: challenge-run NAME --seed N
// [--duration D] [--copies N].
const challengeRun = "challenge-run"

// wire is one message either way.
type wire struct {
	Op string `json:"op"`
	// say: a line for the participant's terminal.
	Text string `json:"text,omitempty"`
	// forward/forwarded: an address of the run's, and where the agent
	// listens for it.
	Target string `json:"target,omitempty"`
	Local  string `json:"local,omitempty"`
	// start/started/signal/line/exit: one life of a copy.
	Copy   string   `json:"copy,omitempty"`
	Life   int      `json:"life,omitempty"`
	Env    []string `json:"env,omitempty"`
	Signal string   `json:"signal,omitempty"` // KILL, TERM, STOP, CONT
	PID    int      `json:"pid,omitempty"`
	Code   int      `json:"code,omitempty"`
	Error  string   `json:"error,omitempty"`
	// end: the verdict.
	Passed bool `json:"passed,omitempty"`
}

const (
	opSay       = "say"
	opForward   = "forward"
	opForwarded = "forwarded"
	opStart     = "start"
	opStarted   = "started"
	opSignal    = "signal"
	opLine      = "line"
	opExit      = "exit"
	opEnd       = "end"
)

const (
	maxAgentLine  = 8 << 10 // one message from an agent
	maxAgentLines = 50000   // messages from an agent in one run
)

// challengeResult was the door's command for a verdict a participant's
// own machine computed; the door refuses it now.
const challengeResult = "challenge-result"
