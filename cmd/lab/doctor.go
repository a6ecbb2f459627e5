package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	lab "github.com/rmlab/lab"
	"github.com/rmlab/lab/challenge"
	"github.com/rmlab/lab/internal/plain"
	"github.com/rmlab/lab/internal/secret"
	"github.com/rmlab/lab/internal/services"
	"github.com/rmlab/lab/internal/worker"
)

// cmdDoctor reports versions and capabilities, and which lessons a missing
// one disables. Exit 0 only when every lesson can run.
func runDoctor(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs, g := command("doctor", "usage: lab doctor [flags]\n\nserver versions, capabilities, which lessons can run here; exit 0 only when every lesson can\n", stderr)
	if code, ok := parse(fs, g, args, stderr); !ok {
		return code
	}
	if !noArgs(fs, stderr, "") {
		return 2
	}
	return cmdDoctor(ctx, *g, stdout, stderr)
}

func cmdDoctor(ctx context.Context, g globals, stdout, stderr io.Writer) int {
	svc, code := connect(ctx, g, stderr, false)
	if svc == nil {
		return code
	}
	defer svc.Close()
	in := svc.Info
	cfg := svc.Config
	full := false // no room for this lab's connections
	line := func(ok bool, what, detail string) {
		mark := "ok  "
		if !ok {
			mark = "FAIL"
		}
		fmt.Fprintf(stdout, "  %s %-16s %s\n", mark, what, detail)
	}
	fmt.Fprintln(stdout, "services")
	if in.MySQLErr != nil {
		line(false, "MySQL", in.MySQLErr.Error())
	} else {
		kind := "MySQL"
		if in.MariaDB {
			kind = "MariaDB"
		}
		line(true, "MySQL", fmt.Sprintf("%s %s at %s", kind, in.MySQLVersion, secret.DSN(cfg.MySQL)))
		if room, detail, err := connectionRoom(ctx, svc); err == nil {
			line(room > 0, "connections", detail)
			full = room < 1
		} else {
			// Unknown room is no room to promise: lessons may fail with 1040.
			line(false, "connections", "could not read max_connections and the sessions in use: "+err.Error()+" (the lab's MySQL user needs to see @@max_connections and information_schema.PROCESSLIST)")
			full = true
		}
	}
	if in.AMQPErr != nil {
		line(false, "RabbitMQ", in.AMQPErr.Error())
	} else {
		line(true, "RabbitMQ", fmt.Sprintf("%s at %s", in.AMQPVersion, secret.URL(cfg.AMQP)))
	}
	if in.RedisErr != nil {
		line(false, "Redis", in.RedisErr.Error())
	} else {
		line(true, "Redis", fmt.Sprintf("%s at %s", in.RedisVersion, cfg.Redis))
	}
	ns := cfg.Namespace
	if ns == "" {
		ns = "(none: the article's names exactly)"
	}
	fmt.Fprintf(stdout, "  namespace        %s\n", ns)
	fmt.Fprintf(stdout, "  workers          %s\n", workersNote())

	caps := in.Caps()
	fmt.Fprintln(stdout, "\ncapabilities")
	notes := map[lab.Capability]string{
		lab.CapSkipLocked:    "SELECT … FOR UPDATE SKIP LOCKED (MySQL ≥ 8.0.1, MariaDB ≥ 10.6)",
		lab.CapJSON:          jsonNote(in),
		lab.CapAMQP:          "RabbitMQ reachable",
		lab.CapQuorum:        "quorum queues (RabbitMQ ≥ 3.8)",
		lab.CapStream:        "streams (RabbitMQ ≥ 3.9)",
		lab.CapManagement:    in.ManagementNote,
		lab.CapRedis:         "Redis reachable",
		lab.CapBrokerControl: brokerControlNote(cfg),
		lab.CapOwnBroker:     in.OwnBrokerNote,
		lab.CapBinlog:        binlogNote(in),
		// A fact, not a need: lessons 5 and 22 show this server's path.
		lab.CapSnapshotIsolation: "innodb_snapshot_isolation=ON (MariaDB ≥ 11.6.2): a write to a row changed after the snapshot fails with 1020; lessons 5 and 22 show this server's outcome either way",
	}
	var keys []string
	for c := range notes {
		keys = append(keys, string(c))
	}
	sort.Strings(keys)
	// A missing capability is not a failure by itself: the lessons section
	// says whether any lesson needs it.
	for _, k := range keys {
		c := lab.Capability(k)
		mark := "yes "
		if !caps[c] {
			mark = "no  "
		}
		fmt.Fprintf(stdout, "  %s %-18s %s\n", mark, k, notes[c])
	}

	fmt.Fprintln(stdout, "\nlessons")
	all := true
	for _, lang := range []string{g.lang} {
		g.lang = lang
		ls, err := loadLessons(g)
		fe := partialLoad(err)
		if err != nil && fe == nil {
			printErr(stderr, err)
			return 1
		}
		var blocked []string
		for _, e := range fe {
			blocked = append(blocked, "not loaded: "+e.Error())
		}
		for _, l := range ls {
			miss := l.Unmet(caps)
			if in.MySQLErr != nil && !l.ExplainOnly {
				miss = append(miss, "mysql")
			}
			if len(miss) > 0 {
				blocked = append(blocked, fmt.Sprintf("%s (needs %s)", l.ID, strings.Join(miss, ", ")))
			}
		}
		if len(blocked) == 0 {
			fmt.Fprintf(stdout, "  ok   all %d lessons can run\n", len(ls))
		} else {
			all = false
			for _, b := range blocked {
				fmt.Fprintf(stdout, "  FAIL %s\n", b)
			}
		}
	}
	// The challenges run the learner's own program: what its language
	// needs is on this machine or not, and no lesson depends on it.
	fmt.Fprintln(stdout, "\nchallenges (lab challenge run)")
	for _, p := range challenge.Prereqs(ctx) {
		mark := "yes "
		if !p.OK {
			mark = "no  "
		}
		fmt.Fprintf(stdout, "  %s %-18s %s\n", mark, p.Language, plain.Text(p.Detail))
	}
	if !all || in.MySQLErr != nil || full {
		return 1
	}
	return 0
}

// perLab is how many MySQL connections one lab holds at its busiest: the
// screen's panels, a lesson's sessions and its worker processes (measured:
// 5 in replay, 6 on the screen in the lessons with the most workers).
const perLab = 8

// maxConnections is the server's max_connections (0 if unreadable).
func maxConnections(ctx context.Context, svc *services.Services) int {
	var max int
	svc.MySQL.QueryRowContext(ctx, "SELECT @@max_connections").Scan(&max)
	return max
}

// connectionRoom says how many more labs the server's max_connections
// leaves room for: at a workshop every learner's lab shares it, and
// MySQL's default of 151 runs out at about 18.
func connectionRoom(ctx context.Context, svc *services.Services) (int, string, error) {
	var max, used int
	if err := svc.MySQL.QueryRowContext(ctx, "SELECT @@max_connections").Scan(&max); err != nil {
		return 0, "", err
	}
	if err := svc.MySQL.QueryRowContext(ctx, "SELECT COUNT(*) FROM information_schema.PROCESSLIST").Scan(&used); err != nil {
		return 0, "", err
	}
	room := (max - used) / perLab
	detail := fmt.Sprintf("%d of max_connections %d in use: room for about %d more labs at %d each", used, max, room, perLab)
	if room < 1 {
		detail += "; raise it (SET GLOBAL max_connections = 500) or lessons will fail with error 1040"
	}
	return room, detail, nil
}

// jsonNote says what the JSON type is on the server found: MariaDB's is
// LONGTEXT with a JSON_VALID check, MySQL's a binary format.
func jsonNote(in services.Info) string {
	switch {
	case in.MySQLErr != nil:
		return "JSON column type (no server to ask)"
	case in.MariaDB:
		return "JSON column type (MariaDB " + in.MySQLVersion + ": LONGTEXT with a JSON_VALID check)"
	}
	return "JSON column type (MySQL " + in.MySQLVersion + ": stored as binary JSON)"
}

// brokerControlNote says how the broker would be restarted, and with what.
func brokerControlNote(cfg services.Config) string {
	n := "restart the broker (--broker-control=rabbitmqctl on a local node)"
	if cfg.BrokerControl != "" && cfg.Rabbitmqctl != "rabbitmqctl" {
		n += " with " + cfg.Rabbitmqctl + " (LAB_RABBITMQCTL)"
	}
	return n
}

// workersNote says which binary starts the lessons' worker processes.
func workersNote() string {
	exe, err := os.Executable()
	if err != nil {
		exe = os.Args[0]
	}
	b, why := worker.BesideWhy(exe)
	switch {
	case filepath.Base(b) == worker.LightBinary:
		return b + " (from the same build as this lab)"
	case why != "":
		return "this lab binary: the lab-worker beside it is not used, " + why + " (build both again: go build -o DIR ./cmd/...)"
	}
	return "this lab binary (a lab-worker beside it, from the same build, starts them in a third of the CPU: go build -o DIR ./cmd/...)"
}

func binlogNote(in services.Info) string {
	if in.Binlog {
		return "the server writes a row-based binary log (log_bin ON, binlog_format ROW)"
	}
	return in.BinlogNote
}
