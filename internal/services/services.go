package services

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	gomysql "github.com/go-sql-driver/mysql"
	amqp "github.com/rabbitmq/amqp091-go"
	"github.com/redis/go-redis/v9"
	lab "github.com/rmlab/lab"
	"github.com/rmlab/lab/internal/containers"
	"github.com/rmlab/lab/internal/dbnode"
	"github.com/rmlab/lab/internal/node"
	"github.com/rmlab/lab/internal/secret"
)

// Services are the connections a lab run uses. MySQL is a pool without a
// default database; lessons open sessions on the database they name.
type Services struct {
	Config Config
	Names  Names
	MySQL  *sql.DB
	Redis  *redis.Client
	// RedisAdmin, when set, is the lab's own Redis login, for a reset's
	// SCAN of a namespace's keys (a participant's user, Redis, may not).
	RedisAdmin *redis.Client
	// AMQP is dialled per use (each worker and step has its own connection);
	// Services keeps only a probe result.
	Info Info
	// Watch, when set, is where a lesson reads InnoDB's transactions and
	// the process list for a login that may not (a workshop participant's,
	// which has no PROCESS: PROCESS would show every session's statement).
	Watch *Watch

	containers []func()
}

// Watch is the lab's own login reading, for User, what only PROCESS may
// read: the rows of User's own sessions and nothing else.
type Watch struct {
	DB   *sql.DB
	User string // a name of the lab's making (ParticipantUser)
}

// Info is what `lab doctor` reports.
type Info struct {
	MySQLVersion string
	MariaDB      bool
	SkipLocked   bool
	JSONType     bool
	// SnapshotIsolation: innodb_snapshot_isolation is ON (MariaDB ≥ 11.6.2's
	// default): a write to a row changed after the snapshot fails (1020).
	SnapshotIsolation bool
	AMQPVersion       string
	Management        bool
	RedisVersion      string
	Started           []string // services the lab started in containers: what, image, address, time taken
	Swept             []string // containers a lab that died had left, removed before these started
	BrokerControl     bool
	OwnBroker         bool   // the lab can start RabbitMQ nodes of its own: from the server script here, or as containers
	OwnBrokerNote     string // where, or why not
	NodeContainers    bool   // its nodes are containers (Docker and no server script, or --containers)
	// Binlog: the server writes a row-based binary log (log_bin ON,
	// binlog_format ROW); OwnMySQL: the lab can start a server of its own
	// that does (package dbnode), for lessons that need one.
	Binlog         bool
	BinlogState    string // "log_bin=OFF, binlog_format=MIXED" when it is not
	BinlogNote     string // the state, and what the lab does about it
	OwnMySQL       bool
	Cluster        bool // LAB_CLUSTER names a three-node cluster the lessons may use (docker compose --profile cluster)
	MySQLErr       error
	AMQPErr        error
	RedisErr       error
	ManagementNote string
}

// Caps lists capabilities that are present.
func (i Info) Caps() map[lab.Capability]bool {
	c := map[lab.Capability]bool{}
	if i.MySQLErr == nil {
		c[lab.CapSkipLocked] = i.SkipLocked
		c[lab.CapJSON] = i.JSONType
		c[lab.CapSnapshotIsolation] = i.SnapshotIsolation
	}
	if i.AMQPErr == nil {
		c[lab.CapAMQP] = true
		maj, min := versionMajorMinor(i.AMQPVersion)
		c[lab.CapQuorum] = maj > 3 || (maj == 3 && min >= 8)
		c[lab.CapStream] = maj > 3 || (maj == 3 && min >= 9)
		c[lab.CapManagement] = i.Management
		c[lab.CapBrokerControl] = i.BrokerControl
	}
	if i.MySQLErr == nil {
		c[lab.CapBinlog] = i.Binlog || i.OwnMySQL
	}
	c[lab.CapRedis] = i.RedisErr == nil
	c[lab.CapOwnBroker] = i.OwnBroker || i.Cluster
	return c
}

// WithMySQL is a copy of s whose MySQL is the server at dsn (the lab's own,
// for a lesson that needs what the configured one lacks): the same
// namespace, Redis and broker.
func (s *Services) WithMySQL(ctx context.Context, dsn string) (*Services, error) {
	twin := &Services{Config: s.Config, Names: s.Names, Redis: s.Redis, Info: s.Info}
	twin.Config.MySQL = dsn
	twin.Info.MySQLErr = nil
	if err := twin.connectMySQL(ctx); err != nil {
		return nil, err
	}
	return twin, nil
}

// errWanted stands for a service that is to run in a container.
func errWanted(what string) error { return fmt.Errorf("%s: a container was asked for", what) }

// Connect resolves every service. With need=false for a service, a failure is
// recorded in Info instead of returned (doctor wants to report all three).
// The whole call is bounded so an unreachable service fails within seconds.
func Connect(ctx context.Context, cfg Config, strict bool) (*Services, error) {
	cfg = cfg.FromEnv()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	s := &Services{Config: cfg, Names: Names{NS: cfg.Namespace}}
	type res struct {
		kind string
		err  error
	}
	// Probe the three in parallel: three unreachable services still fail fast.
	ch := make(chan res, 3)
	pctx, pcancel := context.WithTimeout(ctx, DialTimeout+2*time.Second)
	defer pcancel()
	go func() { ch <- res{"mysql", s.connectMySQL(pctx)} }()
	go func() { ch <- res{"amqp", s.probeAMQP(pctx)} }()
	go func() { ch <- res{"redis", s.connectRedis(pctx)} }()
	s.Info.OwnBroker, s.Info.NodeContainers, s.Info.OwnBrokerNote = OwnNodes(ctx, cfg)
	if urls, control, err := node.Cluster(); err != nil {
		s.Info.OwnBrokerNote += "; " + err.Error()
	} else if urls != nil {
		s.Info.Cluster = true
		s.Info.OwnBrokerNote += "; for three nodes, the cluster " + node.ClusterEnv + " names, driven with " + strings.Join(control, " ")
	}
	var errs []error
	for i := 0; i < 3; i++ {
		r := <-ch
		if r.err != nil {
			errs = append(errs, r.err)
		}
	}
	var boxed []error // the services to start in containers
	if cfg.Containers != 0 && !cfg.NoDocker {
		// Asked for (--containers[=LIST], LAB_CONTAINERS): containers even
		// where local servers answer, so the container road can be taken
		// on a machine that has them. What the probe found of those
		// services is dropped; the others stay as found.
		if !dockerAnswers(ctx) {
			e, _ := containers.FromEnv()
			s.Close()
			return nil, &lab.Error{What: "containers were asked for (--containers or LAB_CONTAINERS) but no Docker engine answers", Where: e.Socket,
				Fix: "start Docker, or point DOCKER_HOST at an engine (CI: bash .ci/docker up; eval \"$(.ci/docker env)\")"}
		}
		errs, boxed = s.dropProbed(cfg.Containers, errs)
	}
	if len(errs) > 0 && !cfg.NoDocker && (len(boxed) > 0 || dockerAnswers(ctx)) {
		// A service the user named (a flag, a LAB_ variable) is never
		// replaced by a container: it may still be booting (docker compose
		// up without --wait), so it is awaited, and then it fails with its
		// advice. Only the defaults fall back to containers.
		for _, err := range errs {
			if field := s.fieldOf(err); field != "" && s.Config.From(field) != "default" {
				s.awaitNamed(ctx, field) // its last error stays in Info
			} else {
				boxed = append(boxed, err)
			}
		}
		errs = s.namedErrs()
	}
	if len(boxed) > 0 {
		errs = append(errs, s.startContainers(ctx, boxed)...)
	}
	if strict && len(errs) > 0 {
		s.Close()
		return nil, errors.Join(errs...)
	}
	return s, nil
}

func (s *Services) connectMySQL(ctx context.Context) error {
	cfg, _ := gomysql.ParseDSN(s.Config.MySQL)
	where := cfg.Addr
	if cfg.Timeout == 0 {
		cfg.Timeout = DialTimeout
	}
	cfg.ParseTime = true
	cfg.MultiStatements = false
	cfg.InterpolateParams = false
	db, err := sql.Open("mysql", cfg.FormatDSN())
	if err == nil {
		c, cancel := context.WithTimeout(ctx, cfg.Timeout+time.Second)
		defer cancel()
		err = db.PingContext(c)
		if err == nil {
			err = s.readMySQLInfo(c, db)
		}
	}
	if err != nil {
		if db != nil {
			db.Close()
		}
		what, fix := advice("MySQL/MariaDB", "--mysql or LAB_MYSQL_DSN", err,
			"start it (on Debian: start-stop-daemon --start --background --exec /usr/sbin/mariadbd), "+
				"pass another server with --mysql DSN or LAB_MYSQL_DSN, or run `docker compose up -d mysql rabbitmq redis` in the lab's folder")
		s.Info.MySQLErr = &lab.Error{What: what, Where: where + " as " + secret.DSN(s.Config.MySQL), Err: err, Fix: fix}
		return s.Info.MySQLErr
	}
	db.SetMaxOpenConns(32)
	s.MySQL = db
	return nil
}

// forgetMySQL, forgetAMQP and forgetRedis clear what was read of a
// service, so that reading it again (a container in place of the probed
// server, the lab's own MySQL in a copy) leaves nothing of the last one:
// readMySQLInfo sets some fields only when a query answers and appends
// to BinlogNote.
func (i *Info) forgetMySQL() {
	i.MySQLVersion, i.MariaDB, i.SkipLocked, i.JSONType, i.SnapshotIsolation = "", false, false, false, false
	i.Binlog, i.BinlogState, i.BinlogNote, i.OwnMySQL = false, "", "", false
}

func (i *Info) forgetAMQP() {
	i.AMQPVersion, i.Management, i.ManagementNote, i.BrokerControl = "", false, "", false
}

func (i *Info) forgetRedis() { i.RedisVersion = "" }

func (s *Services) readMySQLInfo(ctx context.Context, db *sql.DB) error {
	s.Info.forgetMySQL()
	var v string
	if err := db.QueryRowContext(ctx, "SELECT VERSION()").Scan(&v); err != nil {
		return err
	}
	s.Info.MySQLVersion = v
	s.Info.MariaDB = strings.Contains(strings.ToLower(v), "mariadb")
	maj, min := versionMajorMinor(v)
	patch := versionPatch(v)
	if s.Info.MariaDB {
		// MariaDB: SKIP LOCKED since 10.6; JSON is an alias of LONGTEXT with a
		// JSON_VALID check, which is enough for the article's payload column.
		s.Info.SkipLocked = maj > 10 || (maj == 10 && min >= 6)
		s.Info.JSONType = maj > 10 || (maj == 10 && min >= 2)
	} else {
		s.Info.SkipLocked = maj > 8 || (maj == 8 && (min > 0 || patch >= 1))
		s.Info.JSONType = maj > 5 || (maj == 5 && min >= 7)
	}
	var name, snap string
	if db.QueryRowContext(ctx, "SHOW VARIABLES LIKE 'innodb_snapshot_isolation'").Scan(&name, &snap) == nil {
		s.Info.SnapshotIsolation = strings.EqualFold(snap, "ON")
	}
	var logBin, format sql.NullString
	if err := db.QueryRowContext(ctx, "SELECT @@log_bin, @@binlog_format").Scan(&logBin, &format); err == nil {
		s.Info.Binlog = logBin.String == "1" && format.String == "ROW"
		if !s.Info.Binlog {
			s.Info.BinlogState = fmt.Sprintf("log_bin=%s, binlog_format=%s", onOff(logBin.String), format.String)
			s.Info.BinlogNote = s.Info.BinlogState + ": no row-based binary log on this server"
		}
	}
	if bin, err := dbnode.Server(); err == nil {
		s.Info.OwnMySQL = true
		if !s.Info.Binlog {
			s.Info.BinlogNote += "; the lessons that read one start a server of the lab's own, " + bin
		}
	} else if !s.Info.Binlog {
		s.Info.BinlogNote += "; and the lab cannot start a server of its own: " + err.Error()
	}
	return nil
}

func onOff(v string) string {
	if v == "1" {
		return "ON"
	}
	return "OFF"
}

func (s *Services) probeAMQP(ctx context.Context) error {
	u, _ := url.Parse(s.Config.AMQP)
	conn, err := DialAMQP(ctx, s.Config.AMQP)
	if err != nil {
		s.Info.AMQPErr = amqpUnreachable(s.Config.AMQP, err)
		return s.Info.AMQPErr
	}
	if v, ok := conn.Properties["version"].(string); ok {
		s.Info.AMQPVersion = v
	}
	conn.Close()
	s.Info.Management, s.Info.ManagementNote = managementAnswers(ctx, s.Config)
	s.Info.BrokerControl = s.Config.BrokerControl == "rabbitmqctl" && IsLocal(u.Hostname())
	return nil
}

// DialAMQP dials with a bounded handshake, so an unreachable or silent
// broker fails in seconds instead of the library's default.
func DialAMQP(ctx context.Context, rawURL string) (*amqp.Connection, error) {
	deadline := DialTimeout
	if d, ok := ctx.Deadline(); ok && time.Until(d) < deadline {
		deadline = time.Until(d)
	}
	return amqp.DialConfig(rawURL, amqp.Config{
		Heartbeat: 10 * time.Second,
		Locale:    "en_US",
		Dial: func(network, addr string) (net.Conn, error) {
			c, err := net.DialTimeout(network, addr, deadline)
			if err != nil {
				return nil, err
			}
			_ = c.SetDeadline(time.Now().Add(deadline))
			return &clearDeadline{Conn: c}, nil
		},
	})
}

// clearDeadline removes the handshake deadline on the first write after the
// handshake; amqp091 resets deadlines itself for heartbeats, so a deadline
// left set would kill a healthy connection.
type clearDeadline struct {
	net.Conn
	n int
}

func (c *clearDeadline) Write(b []byte) (int, error) {
	c.n++
	if c.n > 4 {
		_ = c.Conn.SetDeadline(time.Time{})
	}
	return c.Conn.Write(b)
}

// ManagementBase is where the management API is looked for: the URL given
// (--management, LAB_MANAGEMENT_URL), else the AMQP URL's host on 15672;
// and the user and password to send: the management URL's own, else the
// AMQP URL's, else guest.
func ManagementBase(amqpURL, mgmtURL string) (base, user, pass string) {
	user, pass = "guest", "guest"
	if u, err := url.Parse(amqpURL); err == nil {
		// RabbitMQ's pair is 5672 and 15672; a broker moved to another
		// AMQP port is guessed 10000 above it (.ci/servers' 5673, 15673),
		// never the default's 15672, which may be another broker's.
		port := "15672"
		if p, err := strconv.Atoi(u.Port()); err == nil && p != 5672 && p+10000 <= 65535 {
			port = strconv.Itoa(p + 10000)
		}
		base = "http://" + net.JoinHostPort(u.Hostname(), port)
		if u.User != nil {
			user = u.User.Username()
			pass, _ = u.User.Password()
		}
	}
	if mgmtURL != "" {
		if m, err := url.Parse(mgmtURL); err == nil {
			if m.User != nil {
				user = m.User.Username()
				pass, _ = m.User.Password()
			}
			base = m.Scheme + "://" + m.Host + strings.TrimSuffix(m.EscapedPath(), "/")
		}
	}
	return base, user, pass
}

func managementAnswers(ctx context.Context, cfg Config) (bool, string) {
	base, user, pass := ManagementBase(cfg.AMQP, cfg.Management)
	how := "derived from the AMQP URL's host; --management URL or LAB_MANAGEMENT_URL names another"
	if cfg.Management != "" {
		how = "from " + cfg.From("management")
	}
	c, cancel := context.WithTimeout(ctx, 1500*time.Millisecond)
	defer cancel()
	req, err := http.NewRequestWithContext(c, http.MethodGet, base+"/api/overview", nil)
	if err != nil {
		return false, "management API URL " + secret.URL(base) + " is not usable"
	}
	req.SetBasicAuth(user, pass)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return false, "management API not answering at " + secret.URL(base) + " (" + how + "); queue counts fall back to passive declares"
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		return false, fmt.Sprintf("management API at %s answered HTTP %d for user %s (it needs the monitoring or management tag)", secret.URL(base), resp.StatusCode, user)
	}
	if cfg.Management == "" {
		// A guessed address may be another broker's API: its counts would
		// be read as this broker's. It must list this broker's AMQP port.
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
		addr, _ := AMQPAddr(cfg.AMQP)
		_, port, _ := net.SplitHostPort(addr)
		if ports, ok := amqpListeners(body); ok && !slices.Contains(ports, port) {
			return false, fmt.Sprintf("the management API at %s (%s) lists AMQP on port %s, not this broker's %s: another broker's, or ports remapped; give --management URL or LAB_MANAGEMENT_URL; queue counts fall back to passive declares",
				secret.URL(base), how, strings.Join(ports, ", "), port)
		}
	}
	return true, "management API at " + secret.URL(base)
}

// amqpListeners are the AMQP ports /api/overview lists, and whether it
// listed any listener at all (an API that says nothing is believed).
func amqpListeners(overview []byte) ([]string, bool) {
	var o struct {
		Listeners []struct {
			Protocol string `json:"protocol"`
			Port     int    `json:"port"`
		} `json:"listeners"`
	}
	if json.Unmarshal(overview, &o) != nil || len(o.Listeners) == 0 {
		return nil, false
	}
	var ports []string
	for _, l := range o.Listeners {
		if l.Protocol == "amqp" || l.Protocol == "amqp/ssl" {
			ports = append(ports, strconv.Itoa(l.Port))
		}
	}
	return ports, true
}

// AMQPAddr is the host:port an AMQP URL dials (port 5672 when it names none).
func AMQPAddr(rawURL string) (string, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return "", fmt.Errorf("the AMQP URL %s cannot be read", secret.URL(rawURL))
	}
	port := u.Port()
	if port == "" {
		port = "5672"
		if u.Scheme == "amqps" {
			port = "5671"
		}
	}
	return net.JoinHostPort(u.Hostname(), port), nil
}

// IsLocal reports whether host h is this machine (loopback).
func IsLocal(h string) bool {
	return h == "localhost" || strings.HasPrefix(h, "127.") || h == "::1"
}

func (s *Services) connectRedis(ctx context.Context) error {
	o := RedisOptions(s.Config.Redis) // a participant's carries their user
	o.ReadTimeout, o.WriteTimeout = 3*time.Second, 3*time.Second
	cl := redis.NewClient(o)
	c, cancel := context.WithTimeout(ctx, DialTimeout+time.Second)
	defer cancel()
	info, err := cl.Info(c, "server").Result()
	if err != nil {
		cl.Close()
		s.Info.RedisErr = &lab.Error{What: "cannot reach Redis", Where: secret.Addr(s.Config.Redis), Err: err,
			Fix: "start it (redis-server --daemonize yes --port 6379), pass another with --redis ADDR or LAB_REDIS_ADDR, or run `docker compose up -d mysql rabbitmq redis`"}
		return s.Info.RedisErr
	}
	for _, l := range strings.Split(info, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(l), "redis_version:"); ok {
			s.Info.RedisVersion = v
		}
	}
	s.Redis = cl
	return nil
}

// Lane is these services under the namespace of a replay's i-th lesson
// (LaneNamespace), for a replay that runs lessons side by side. It shares the connection pools;
// close only the Services it came from.
func (s *Services) Lane(i int) *Services { return s.For(LaneNamespace(s.Config.Namespace, i)) }

// For is these services under another learner's namespace (a workshop
// participant's), sharing the connection pools; close only the Services
// it came from.
func (s *Services) For(namespace string) *Services {
	l := *s
	l.Config.Namespace = namespace
	l.Names = Names{NS: namespace}
	l.containers = nil
	return &l
}

// Close releases connections and stops containers the lab started.
func (s *Services) Close() {
	if s.MySQL != nil {
		s.MySQL.Close()
	}
	if s.Redis != nil {
		s.Redis.Close()
	}
	for _, stop := range s.containers {
		stop()
	}
}

func versionMajorMinor(v string) (int, int) {
	var maj, min int
	fmt.Sscanf(v, "%d.%d", &maj, &min)
	return maj, min
}

func versionPatch(v string) int {
	var a, b, c int
	fmt.Sscanf(v, "%d.%d.%d", &a, &b, &c)
	return c
}

// DeleteRedisKeys deletes the keys matching pattern (SCAN, never KEYS, so a
// shared Redis is not stalled) and returns how many it deleted.
func (s *Services) DeleteRedisKeys(ctx context.Context, pattern string) (int, error) {
	n := 0
	cl := s.Redis
	if s.RedisAdmin != nil {
		cl = s.RedisAdmin // a participant's user may not SCAN: it would list everyone's keys
	}
	iter := cl.Scan(ctx, 0, pattern, 200).Iterator()
	for iter.Next(ctx) {
		if err := cl.Del(ctx, iter.Val()).Err(); err != nil {
			return n, err
		}
		n++
	}
	return n, iter.Err()
}

// NodeOptions are the options of k nodes of the lab's own in this
// namespace: processes of the server script, or containers.
// OwnNodes says whether the lab can start RabbitMQ nodes of its own for
// cfg, whether they are containers, and how (or why not), in a line: as
// containers when asked (--containers), else from the server script, else
// as containers where a Docker engine answers.
func OwnNodes(ctx context.Context, cfg Config) (own, inContainers bool, note string) {
	switch server, err := node.Server(); {
	case cfg.Containers&RabbitMQInContainer != 0 && !cfg.NoDocker:
		// RabbitMQ taken in a container: the lab's nodes too (the engine
		// is checked where the services are started).
		return true, true, "RabbitMQ nodes of its own as containers of " + containers.RabbitImage + " (containers asked for)"
	case err == nil:
		return true, false, "RabbitMQ nodes of its own, from " + server
	case !cfg.NoDocker && dockerAnswers(ctx):
		return true, true, "RabbitMQ nodes of its own as containers of " + containers.RabbitImage + " (" + err.Error() + ")"
	default:
		return false, false, err.Error()
	}
}

func (s *Services) NodeOptions(k int) node.Options {
	return node.Options{Namespace: s.Config.Namespace, Nodes: k, Containers: s.Info.NodeContainers}
}
