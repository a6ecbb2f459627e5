// Package binlogrelay is the outbox relay that reads the database's binary log
// instead of polling the outbox table, as Debezium's outbox router does: no
// claim, no lease, no status written back. Every committed insert into
// outbox_event reaches it in commit order; it publishes each with the
// event id as the message id, waits for the confirm, and then saves the
// log position after that transaction. Killed between the publish and the
// save, it starts again from the last saved position and publishes the
// same events again: at least once, order by log position, duplicates
// after a restart, for the consumer's key to absorb.
//
// It runs as `lab worker binlog-relay`:
//
//	lab worker binlog-relay [--name N] [--pause-at p1,p2] [--db blog_outbox_lab]
//	    [--exchange X] [--routing-key orders] [--count N] [--position-key binlog-relay]
//	    [--save after-confirm|before-publish]
//
// The position lives in the outbox database's relay_position table (the
// lesson creates it from sql/outbox/binlog_position.sql); with no saved
// position the relay starts at the log's end and saves that first. The
// server must write a row-based binary log (log_bin ON, binlog_format ROW)
// and let the lab's user read it (REPLICATION SLAVE, REPLICATION CLIENT).
// The log is read with github.com/go-mysql-org/go-mysql's replication
// client, the MySQL replication protocol as a replica speaks it.
package binlogrelay

import (
	"context"
	"database/sql"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net"
	"strconv"
	"strings"
	"time"

	gomysql "github.com/go-mysql-org/go-mysql/mysql"
	"github.com/go-mysql-org/go-mysql/replication"
	dsnparse "github.com/go-sql-driver/mysql"
	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/rmlab/lab/internal/services"
	"github.com/rmlab/lab/internal/worker"
)

// Points are the pause points, in the order an event meets them (with
// --save before-publish, after-save comes first).
var Points = []string{"started", "after-save", "after-publish", "after-confirm"}

// Options are the relay's flags.
type Options struct {
	DB, Exchange, RoutingKey string // article names
	Count                    int    // exit after N events published and saved
	Key                      string // the relay_position row
	SaveBeforePublish        bool   // UNSAFE: at most once
	ConfirmTimeout           time.Duration
}

// ParseArgs reads the flags (the worker layer has taken --name and
// --pause-at off already).
func ParseArgs(args []string) (Options, error) {
	var o Options
	fs := flag.NewFlagSet("lab worker binlog-relay", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.StringVar(&o.DB, "db", services.OutboxDB, "outbox database (article name)")
	fs.StringVar(&o.Exchange, "exchange", "", "exchange (article name; \"\" is the default exchange)")
	fs.StringVar(&o.RoutingKey, "routing-key", "orders", "routing key; with the default exchange, a queue name (article name)")
	fs.IntVar(&o.Count, "count", 0, "exit after N events published and their position saved (0: until stopped)")
	fs.StringVar(&o.Key, "position-key", "binlog-relay", "the relay's row in relay_position")
	save := fs.String("save", "after-confirm", "when the position is saved: after-confirm, or before-publish (UNSAFE: a crash in between loses the events)")
	fs.DurationVar(&o.ConfirmTimeout, "confirm-timeout", 5*time.Second, "how long to wait for a publisher confirm")
	if err := fs.Parse(args); err != nil {
		return o, worker.FlagError("lab worker binlog-relay", fs, err)
	}
	switch {
	case fs.NArg() > 0:
		return o, fmt.Errorf("lab worker binlog-relay: unexpected argument %q", fs.Arg(0))
	case *save != "after-confirm" && *save != "before-publish":
		return o, fmt.Errorf("lab worker binlog-relay: --save %q: use after-confirm or before-publish", *save)
	case o.Count < 0:
		return o, fmt.Errorf("lab worker binlog-relay: --count must be 0 (until stopped) or more")
	}
	o.SaveBeforePublish = *save == "before-publish"
	return o, nil
}

// event is one outbox row as the log carries it.
type event struct {
	id      string
	payload []byte
}

// relay is one running relay.
type relay struct {
	o       Options
	p       *worker.Parent
	db      *sql.DB
	logDB   *sql.DB // where the log's end is read (cfg.BinlogDSN)
	dbName  string
	ch      *amqp.Channel
	returns <-chan amqp.Return
	names   services.Names
	done    int
}

// Main is `lab worker binlog-relay`.
func Main(ctx context.Context, p *worker.Parent, args []string) error {
	o, err := ParseArgs(args)
	if err != nil {
		return err
	}
	w, err := services.OpenWorker(ctx, o.DB, services.ConfirmChannel)
	if err != nil {
		return err
	}
	defer w.Close()
	cfg, db := w.Config, w.DB
	// The log is read with cfg.BinlogDSN (a workshop participant's own
	// login may not read it); everything else, as the run's login.
	logDB := db
	if cfg.Binlog != "" && cfg.Binlog != cfg.MySQL {
		if logDB, err = services.Open(ctx, cfg.Binlog, ""); err != nil {
			return fmt.Errorf("the login that reads the binary log: %w", err)
		}
		defer logDB.Close()
		logDB.SetMaxOpenConns(1)
	}
	r := &relay{o: o, p: p, db: db, logDB: logDB, dbName: w.Names.Name(o.DB), names: w.Names, ch: w.Ch}
	pos, how, err := r.startPosition(ctx)
	if err != nil {
		return err
	}
	cols, err := r.columns(ctx)
	if err != nil {
		return err
	}
	r.returns = r.ch.NotifyReturn(make(chan amqp.Return, 16))
	syncer, err := newSyncer(ctx, cfg.BinlogDSN(), logDB)
	if err != nil {
		return err
	}
	defer syncer.Close()
	st, err := syncer.StartSync(pos)
	if err != nil {
		return fmt.Errorf("read the binary log from %s: %w (the lab's MySQL user needs REPLICATION SLAVE and REPLICATION CLIENT)", pos, err)
	}
	p.Logf("reading the binary log from %s:%d (%s)", pos.Name, pos.Pos, how)
	if err := p.Reach(ctx, "started"); err != nil {
		return err
	}
	return r.follow(ctx, st, pos.Name, cols)
}

// follow reads events until ctx ends or --count events are done: the
// outbox rows a transaction inserted are handled at its commit (XID), and
// the position saved is the one after that commit, so a restart never
// begins inside a transaction.
func (r *relay) follow(ctx context.Context, st *replication.BinlogStreamer, file string, cols []string) error {
	var pending []event
	for {
		ev, err := st.GetEvent(ctx)
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return fmt.Errorf("reading the binary log: %w", err)
		}
		switch e := ev.Event.(type) {
		case *replication.RotateEvent:
			file = string(e.NextLogName)
		case *replication.RowsEvent:
			if !isInsert(ev.Header.EventType) || string(e.Table.Schema) != r.dbName || string(e.Table.Table) != "outbox_event" {
				continue
			}
			for _, row := range e.Rows {
				pending = append(pending, eventOf(cols, row))
			}
		case *replication.XIDEvent:
			if len(pending) == 0 {
				continue
			}
			next := gomysql.Position{Name: file, Pos: ev.Header.LogPos}
			if err := r.transaction(ctx, pending, next); err != nil {
				return err
			}
			pending = nil
			if r.o.Count > 0 && r.done >= r.o.Count {
				r.p.Logf("published %s, stopping (--count %d)", plural(r.done, "event"), r.o.Count)
				return nil
			}
		}
	}
}

// transaction publishes one committed transaction's events and saves the
// position after it: after the confirms (safe), or before the publishes
// (unsafe: at most once).
func (r *relay) transaction(ctx context.Context, evs []event, next gomysql.Position) error {
	var ids []string
	for _, e := range evs {
		ids = append(ids, e.id)
	}
	r.p.Logf("committed in the log before %s:%d: %s", next.Name, next.Pos, strings.Join(ids, ", "))
	if r.o.SaveBeforePublish {
		if err := r.save(ctx, next); err != nil {
			return err
		}
	}
	for _, e := range evs {
		if err := r.publish(ctx, e); err != nil {
			return err
		}
		r.done++
	}
	if !r.o.SaveBeforePublish {
		return r.save(ctx, next)
	}
	return nil
}

func (r *relay) publish(ctx context.Context, e event) error {
	exchange, key := r.o.Exchange, r.o.RoutingKey
	if exchange != "" {
		exchange = r.names.Name(exchange)
	} else {
		key = r.names.Name(key)
	}
	pctx, cancel := context.WithTimeout(ctx, r.o.ConfirmTimeout)
	defer cancel()
	dc, err := r.ch.PublishWithDeferredConfirmWithContext(pctx, exchange, key, true, false, amqp.Publishing{
		MessageId: e.id, Body: e.payload, ContentType: "application/json", DeliveryMode: amqp.Persistent, Timestamp: time.Now(),
	})
	if err != nil {
		return fmt.Errorf("publish %s: %w", e.id, err)
	}
	r.p.Logf("published %s (message id %s) to exchange %q key %q", e.id, e.id, exchange, key)
	if err := r.p.Reach(ctx, "after-publish"); err != nil {
		return err
	}
	ok, err := dc.WaitContext(pctx)
	if err != nil || !ok {
		return fmt.Errorf("no confirm for %s (%v): exiting; the next start reads again from the saved position", e.id, err)
	}
	select {
	case ret := <-r.returns:
		return fmt.Errorf("%s returned unroutable: %d %s: exiting; the next start reads again from the saved position", e.id, ret.ReplyCode, ret.ReplyText)
	default:
	}
	r.p.Logf("confirm: basic.ack for %s", e.id)
	return r.p.Reach(ctx, "after-confirm")
}

// save writes the position after the transaction handled.
func (r *relay) save(ctx context.Context, pos gomysql.Position) error {
	if _, err := r.db.ExecContext(ctx, stmtPositionSave, r.o.Key, pos.Name, pos.Pos); err != nil {
		return fmt.Errorf("save the position %s:%d: %w", pos.Name, pos.Pos, err)
	}
	r.p.Logf("saved position %s:%d", pos.Name, pos.Pos)
	return r.p.Reach(ctx, "after-save")
}

// startPosition is the saved position, or the log's end (saved at once,
// so a relay killed later starts from there, not from a newer end).
func (r *relay) startPosition(ctx context.Context) (gomysql.Position, string, error) {
	var file string
	var pos uint32
	err := r.db.QueryRowContext(ctx, stmtPositionSelect, r.o.Key).Scan(&file, &pos)
	switch {
	case err == nil:
		return gomysql.Position{Name: file, Pos: pos}, "the saved position", nil
	case errors.Is(err, sql.ErrNoRows):
	case isNoTable(err):
		return gomysql.Position{}, "", fmt.Errorf("table relay_position does not exist in %s: the lesson creates it (sql file=outbox/binlog_position.sql)", r.dbName)
	default:
		return gomysql.Position{}, "", fmt.Errorf("read the saved position: %w", err)
	}
	end, err := logEnd(ctx, r.logDB)
	if err != nil {
		return end, "", err
	}
	if _, err := r.db.ExecContext(ctx, stmtPositionSave, r.o.Key, end.Name, end.Pos); err != nil {
		return end, "", fmt.Errorf("save the starting position: %w", err)
	}
	return end, "nothing saved: the log's end, saved now", nil
}

// logEnd is where the server is writing its binary log now: SHOW BINARY
// LOG STATUS (MySQL 8.2 and later), else SHOW MASTER STATUS (MariaDB,
// older MySQL).
func logEnd(ctx context.Context, db *sql.DB) (gomysql.Position, error) {
	var last error
	for _, q := range []string{stmtLogStatus, stmtMasterStatus} {
		rows, err := db.QueryContext(ctx, q)
		if err != nil {
			last = err
			continue
		}
		cols, _ := rows.Columns()
		vals := make([]sql.RawBytes, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		var pos gomysql.Position
		found := false
		if rows.Next() && rows.Scan(ptrs...) == nil && len(cols) >= 2 {
			n, _ := strconv.ParseUint(string(vals[1]), 10, 32)
			pos, found = gomysql.Position{Name: string(vals[0]), Pos: uint32(n)}, true
		}
		rows.Close()
		if found {
			return pos, nil
		}
		return pos, fmt.Errorf("%s returned no row: the server writes no binary log (start it with --log-bin --binlog-format=ROW)", q)
	}
	return gomysql.Position{}, fmt.Errorf("where is the binary log: %w", last)
}

// columns are outbox_event's column names in table order: the log carries
// values by position.
func (r *relay) columns(ctx context.Context) ([]string, error) {
	rows, err := r.db.QueryContext(ctx, stmtColumns, r.dbName)
	if err != nil {
		return nil, fmt.Errorf("read outbox_event's columns: %w", err)
	}
	defer rows.Close()
	var cols []string
	for rows.Next() {
		var c string
		if err := rows.Scan(&c); err != nil {
			return nil, err
		}
		cols = append(cols, strings.ToLower(c))
	}
	if len(cols) == 0 {
		return nil, fmt.Errorf("no table outbox_event in %s: the lesson's reset creates it", r.dbName)
	}
	return cols, rows.Err()
}

func eventOf(cols []string, row []any) event {
	var e event
	for i, c := range cols {
		if i >= len(row) {
			break
		}
		switch c {
		case "event_id":
			e.id = text(row[i])
		case "payload":
			e.payload = []byte(text(row[i]))
		}
	}
	return e
}

func text(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case []byte:
		return string(x)
	case nil:
		return ""
	}
	return fmt.Sprint(v)
}

func isInsert(t replication.EventType) bool {
	switch t {
	case replication.WRITE_ROWS_EVENTv0, replication.WRITE_ROWS_EVENTv1, replication.WRITE_ROWS_EVENTv2, replication.MARIADB_WRITE_ROWS_COMPRESSED_EVENT_V1:
		return true
	}
	return false
}

// newSyncer connects to the server as a replica would, with the lab's
// credentials, under a random server id (ids must differ among a server's
// replicas).
func newSyncer(ctx context.Context, dsn string, db *sql.DB) (*replication.BinlogSyncer, error) {
	c, host, port, err := serverOf(dsn)
	if err != nil {
		return nil, err
	}
	var version string
	if err := db.QueryRowContext(ctx, stmtVersion).Scan(&version); err != nil {
		return nil, err
	}
	flavor := gomysql.MySQLFlavor
	if strings.Contains(strings.ToLower(version), "mariadb") {
		flavor = gomysql.MariaDBFlavor
	}
	return replication.NewBinlogSyncer(replication.BinlogSyncerConfig{
		ServerID: 1000 + rand.Uint32N(1<<30), Flavor: flavor, Host: host, Port: port,
		User: c.User, Password: c.Passwd, Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
		HeartbeatPeriod: 5 * time.Second, ReadTimeout: 30 * time.Second, MaxReconnectAttempts: 3,
	}), nil
}

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}

// isNoTable is MySQL's 1146, table does not exist.
func isNoTable(err error) bool {
	var me *dsnparse.MySQLError
	return errors.As(err, &me) && me.Number == services.ErNoSuchTable
}

// serverOf is where the DSN's server listens, for the replication client:
// TCP only ([::1]:3306 too), a port that is one.
func serverOf(dsn string) (*dsnparse.Config, string, uint16, error) {
	c, err := dsnparse.ParseDSN(dsn)
	if err != nil {
		return nil, "", 0, fmt.Errorf("the MySQL DSN: %w", err)
	}
	if c.Net != "tcp" {
		return nil, "", 0, fmt.Errorf("the binary-log relay reads the log over TCP; the MySQL DSN uses %s (write user:password@tcp(host:port)/)", c.Net)
	}
	host, portText, err := net.SplitHostPort(c.Addr)
	if err != nil {
		host, portText = c.Addr, "3306"
	}
	port, err := strconv.Atoi(portText)
	if err != nil || port < 1 || port > 65535 {
		return nil, "", 0, fmt.Errorf("the MySQL DSN's port %q is not a port number", portText)
	}
	return c, host, uint16(port), nil
}
