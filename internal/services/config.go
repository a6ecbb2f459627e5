// Package services finds the lab's three real services — MySQL or MariaDB,
// RabbitMQ and Redis — in the order flags, environment, local defaults, and
// (when a Docker engine answers) containers it starts; and names what the lab
// creates so many learners can share one server.
package services

import (
	"fmt"
	"net/url"
	"os"
	"regexp"
	"strings"

	gomysql "github.com/go-sql-driver/mysql"
	lab "github.com/rmlab/lab"
	"github.com/rmlab/lab/internal/secret"
)

// Defaults used when neither a flag nor the environment names a service.
const (
	DefaultMySQL = "root@tcp(127.0.0.1:3306)/"
	DefaultAMQP  = "amqp://guest:guest@127.0.0.1:5672/"
	DefaultRedis = "127.0.0.1:6379"
)

// Config is what the user asked for. Empty fields fall back to the
// environment (LAB_MYSQL_DSN, LAB_AMQP_URL, LAB_REDIS_ADDR,
// LAB_MANAGEMENT_URL, LAB_NAMESPACE) and then to the defaults.
type Config struct {
	MySQL         string
	AMQP          string
	Redis         string
	Management    string // the management API's base URL; "" derives it from AMQP's host
	Namespace     string
	BrokerControl string // "" or "rabbitmqctl": the lab may restart a local node
	// Rabbitmqctl is the command broker control runs (LAB_RABBITMQCTL,
	// default rabbitmqctl): a wrapper naming another node (.ci/servers
	// writes one for its RabbitMQ 4.x node).
	Rabbitmqctl string
	// Binlog is the login the binlog relay reads the binary log with
	// (LAB_BINLOG_DSN; "" is MySQL's): a workshop participant's login may
	// not (reading the log would show every participant's rows), so the
	// lab's own reads it for their relay, which keeps to their database.
	Binlog string
	// Owner is who the namespace's databases are made for (MarkFor): "room
	// NAME" for a workshop participant's, "" for a lab run of its own.
	Owner    string
	NoDocker bool // never try testcontainers
	// Containers are the services started in containers even where local
	// servers answer (--containers[=LIST], LAB_CONTAINERS).
	Containers InContainers
	// Progress, when set, hears what takes seconds while the services are
	// found: a container starting, a named server awaited.
	Progress func(string)

	from          map[string]string // field → where its value came from, for messages
	containersBad string            // LAB_CONTAINERS's value, when it could not be read
}

// FromEnv fills empty fields from the environment and defaults, records
// where each value came from for messages, and notes every password for
// secret.Scrub before anything can print one.
func (c Config) FromEnv() Config {
	from := map[string]string{}
	pick := func(field, v, flag, env, def string) string {
		switch {
		case v != "":
			from[field] = flag
			return v
		case os.Getenv(env) != "":
			from[field] = env
			return os.Getenv(env)
		}
		from[field] = "default"
		return def
	}
	c.MySQL = pick("mysql", c.MySQL, "--mysql", "LAB_MYSQL_DSN", DefaultMySQL)
	c.AMQP = pick("amqp", c.AMQP, "--amqp", "LAB_AMQP_URL", DefaultAMQP)
	c.Redis = pick("redis", c.Redis, "--redis", "LAB_REDIS_ADDR", DefaultRedis)
	c.Management = pick("management", c.Management, "--management", "LAB_MANAGEMENT_URL", "")
	c.Namespace = pick("namespace", c.Namespace, "--namespace", "LAB_NAMESPACE", "")
	c.BrokerControl = pick("broker-control", c.BrokerControl, "--broker-control", "LAB_BROKER_CONTROL", "")
	if c.Binlog == "" {
		c.Binlog = os.Getenv("LAB_BINLOG_DSN")
	}
	c.Rabbitmqctl = pick("rabbitmqctl", c.Rabbitmqctl, "LAB_RABBITMQCTL", "LAB_RABBITMQCTL", "rabbitmqctl")
	if c.Containers == 0 { // the flag wins
		if set, err := ParseInContainers(os.Getenv("LAB_CONTAINERS")); err != nil {
			c.containersBad = os.Getenv("LAB_CONTAINERS")
		} else {
			c.Containers = set
		}
	}
	if c.from == nil {
		c.from = from
	}
	// The defaults' guest password is public: masking it would mask the
	// user guest too.
	if from["amqp"] != "default" {
		secret.Note(secret.KindURL, c.AMQP)
	}
	secret.Note(secret.KindDSN, c.MySQL, c.Binlog)
	secret.Note(secret.KindURL, c.Management)
	secret.Note(secret.KindAddr, c.Redis)
	return c
}

// From says where a field's value came from: "--mysql", "LAB_MYSQL_DSN" or
// "default" (field: mysql, amqp, redis, management).
func (c Config) From(field string) string {
	if f := c.from[field]; f != "" {
		return f
	}
	return "--" + field
}

// Env returns the environment a worker process needs to reach the same
// services under the same namespace.
func (c Config) Env() []string {
	return []string{
		"LAB_MYSQL_DSN=" + c.MySQL,
		"LAB_AMQP_URL=" + c.AMQP,
		"LAB_REDIS_ADDR=" + c.Redis,
		"LAB_MANAGEMENT_URL=" + c.Management,
		"LAB_NAMESPACE=" + c.Namespace,
		"LAB_BINLOG_DSN=" + c.Binlog,
	}
}

// BinlogDSN is the login the binary log is read with.
func (c Config) BinlogDSN() string {
	if c.Binlog != "" {
		return c.Binlog
	}
	return c.MySQL
}

var nsRe = regexp.MustCompile(`^[a-z0-9_]{1,16}$`)

var listOfWords = regexp.MustCompile(`^[A-Za-z0-9, ]{1,40}$`)

// reservedNamespaces are names a learner (or an SSH user at a workshop)
// cannot take: they read as the lab's own or as an administrator's.
var reservedNamespaces = map[string]bool{"root": true, "admin": true, "instructor": true, "presenter": true, "lab": true,
	"mysql": true, "rabbitmq": true, "redis": true, "guest": true, "default": true}

// ValidNamespace reports whether ns can be a learner's namespace: 1–16
// lowercase letters, digits or '_', not a replay lane's shape (NS_rK, which
// `lab replay --parallel` derives) and not a reserved word.
func ValidNamespace(ns string) bool {
	return nsRe.MatchString(ns) && !IsLaneNamespace(ns) && !reservedNamespaces[ns] && !strings.HasPrefix(ns, "presenter")
}

// NamespaceProblem says why ns cannot be a namespace, "" when it can.
func NamespaceProblem(ns string) string {
	switch {
	case !nsRe.MatchString(ns):
		return "use 1–16 lowercase letters, digits or _"
	case IsLaneNamespace(ns):
		return "names ending _r and a number are the lanes of `lab replay --parallel`"
	case reservedNamespaces[ns]:
		return "it is reserved"
	case strings.HasPrefix(ns, "presenter"):
		return "names starting presenter are the workshop rooms' presented lessons"
	}
	return ""
}

// Validate checks everything that can be checked without a network. A
// malformed value is shown only through secret, and a parser's own message
// only when it cannot quote the input: a half-parsed input is where a
// password leaks.
func (c Config) Validate() error {
	if c.containersBad != "" {
		// Shown only when it is plainly a list of words: a value pasted
		// into the wrong variable may hold a password.
		what, where := "LAB_CONTAINERS is malformed", "LAB_CONTAINERS (its value is not shown: it is not a list of words)"
		if listOfWords.MatchString(c.containersBad) {
			_, err := ParseInContainers(c.containersBad)
			what, where = what+": "+err.Error(), fmt.Sprintf("LAB_CONTAINERS = %q", c.containersBad)
		}
		return &lab.Error{What: what, Where: where,
			Fix: "set it to 1 (MySQL, RabbitMQ and Redis) or to a list of mysql, rabbitmq and redis, e.g. LAB_CONTAINERS=redis; unset it for none"}
	}
	if c.Namespace != "" && !ValidNamespace(c.Namespace) {
		return &lab.Error{What: fmt.Sprintf("namespace %q is not allowed: %s", c.Namespace, NamespaceProblem(c.Namespace)), Where: "--namespace / LAB_NAMESPACE",
			Fix: "use 1–16 lowercase letters, digits or _, e.g. --namespace alice"}
	}
	if why := checkDSN(c.MySQL); why != "" {
		fix := "write it as user:password@tcp(host:3306)/ (go-sql-driver form)"
		if alt := dsnFromURL(c.MySQL); alt != "" {
			fix = "the lab takes go-sql-driver's form, not a URL: " + alt
		}
		return &lab.Error{What: "the MySQL DSN is malformed: " + why, Where: c.From("mysql") + " = " + secret.DSN(c.MySQL),
			Fix: fix + ", via --mysql or LAB_MYSQL_DSN"}
	}
	if why := checkAMQPURL(c.AMQP); why != "" {
		return &lab.Error{What: "the AMQP URL is malformed: " + why, Where: c.From("amqp") + " = " + secret.URL(c.AMQP),
			Fix: "write it as amqp://user:password@host:5672/vhost, via --amqp or LAB_AMQP_URL"}
	}
	if c.Management != "" {
		if why := checkHTTPURL(c.Management); why != "" {
			return &lab.Error{What: "the management API URL is malformed: " + why, Where: c.From("management") + " = " + secret.URL(c.Management),
				Fix: "write it as http://host:15672/ (the AMQP URL's user is used unless it names one), via --management or LAB_MANAGEMENT_URL"}
		}
	}
	if strings.ContainsAny(c.Redis, "@/ ") {
		return &lab.Error{What: "the Redis address is malformed: want host:port, with no user, password or scheme",
			Where: c.From("redis") + " = " + secret.Addr(c.Redis),
			Fix:   "write it as host:port, e.g. 127.0.0.1:6379, via --redis or LAB_REDIS_ADDR (the lab uses Redis without a password)"}
	}
	if _, _, err := splitHostPort(c.Redis); err != nil {
		return &lab.Error{What: "the Redis address is malformed: " + err.Error(), Where: c.From("redis") + " = " + secret.Addr(c.Redis),
			Fix: "write it as host:port, e.g. 127.0.0.1:6379, via --redis or LAB_REDIS_ADDR"}
	}
	if c.BrokerControl != "" && c.BrokerControl != "rabbitmqctl" {
		return &lab.Error{What: fmt.Sprintf("broker control %q is unknown", c.BrokerControl), Where: "--broker-control",
			Fix: "use --broker-control=rabbitmqctl on a machine whose local RabbitMQ node the lab may restart"}
	}
	return nil
}

// checkDSN says what is wrong with a DSN, in words that never quote it.
func checkDSN(s string) string {
	if _, err := gomysql.ParseDSN(s); err == nil {
		return ""
	}
	switch {
	case strings.Contains(s, "://"):
		return "it is a URL"
	case strings.ContainsAny(s, " \t\n"):
		return "it contains a space"
	case !strings.Contains(s, "/"):
		return "no slash before the database name (end it with /)"
	case strings.Contains(s, "@") && !strings.Contains(s[strings.LastIndex(s, "@"):], "("):
		return "the address after @ must be in tcp(…)"
	case strings.Count(s, "(") != strings.Count(s, ")"):
		return "a parenthesis is not closed"
	}
	return "go-sql-driver cannot read it"
}

// dsnFromURL turns a mysql:// URL into the DSN it meant, password masked.
func dsnFromURL(s string) string {
	if !strings.HasPrefix(s, "mysql://") || checkURLRest(s) != "" {
		return "" // a URL that does not read cleanly suggests nothing
	}
	u, err := url.Parse(s)
	if err != nil || u.Host == "" {
		return ""
	}
	cred := ""
	if u.User != nil {
		cred = u.User.Username()
		if _, has := u.User.Password(); has {
			cred += ":PASSWORD"
		}
		cred += "@"
	}
	return cred + "tcp(" + u.Host + ")" + u.EscapedPath()
}

func checkAMQPURL(s string) string {
	i := strings.Index(s, "://")
	if i < 0 {
		return "no scheme: it starts with amqp://"
	}
	if sch := s[:i]; sch != "amqp" && sch != "amqps" {
		return "the scheme is not amqp:// or amqps://"
	}
	return checkURLRest(s)
}

func checkHTTPURL(s string) string {
	i := strings.Index(s, "://")
	if i < 0 || (s[:i] != "http" && s[:i] != "https") {
		return "it starts with http:// or https://"
	}
	return checkURLRest(s)
}

func checkURLRest(s string) string {
	if strings.ContainsAny(s, " \t\n") {
		return "it contains a space"
	}
	u, err := url.Parse(s)
	if err != nil {
		return "it is not a valid URL (a password with @, : or / must be percent-encoded: %40, %3A, %2F)"
	}
	if u.Host == "" {
		return "no host"
	}
	// A '/', '?' or '#' before the last '@' means a password a parser
	// splits in the wrong place: say so rather than dial half of it.
	rest := s[strings.Index(s, "://")+3:]
	if at, cut := strings.LastIndex(rest, "@"), strings.IndexAny(rest, "/?#"); at >= 0 && (u.User == nil || (cut >= 0 && cut < at)) {
		return "the part before @ holds a /, ? or #: percent-encode them in a password (%2F, %3F, %23)"
	}
	if p := u.Port(); p != "" {
		for _, r := range p {
			if r < '0' || r > '9' {
				return "the port is not a number"
			}
		}
	}
	return ""
}

func splitHostPort(s string) (string, string, error) {
	i := strings.LastIndex(s, ":")
	if i <= 0 || i == len(s)-1 {
		return "", "", fmt.Errorf("want host:port")
	}
	for _, r := range s[i+1:] {
		if r < '0' || r > '9' {
			return "", "", fmt.Errorf("the port is not a number")
		}
	}
	return s[:i], s[i+1:], nil
}

// LaneNamespace is the namespace the i-th lesson (from 0) of a replay run
// side by side (lab replay --parallel) uses for the learner of namespace
// ns: "alice_r1". A learner's namespace can never have that shape
// (ValidNamespace), so no learner can pick a lane's, and two learners'
// lanes never meet.
func LaneNamespace(ns string, i int) string { return fmt.Sprintf("%s_r%d", ns, i+1) }

var laneRe = regexp.MustCompile(`^[a-z0-9_]{0,16}_r[0-9]{1,3}$`)

// IsLaneNamespace reports whether ns is a replay lane's namespace.
func IsLaneNamespace(ns string) bool { return laneRe.MatchString(ns) }

// Names turns the article's names into this learner's names.
type Names struct{ NS string }

// Name adds "_NS" to a database, exchange or queue name.
func (n Names) Name(s string) string {
	if n.NS == "" || s == "" {
		return s
	}
	return s + "_" + n.NS
}

// RedisKey namespaces a Redis key or pattern the way the lab's redis steps,
// resets and consumers all do: "lab:x" → "lab_NS:x". The namespace goes
// before the first colon, not after it, so the default namespace's reset
// pattern lab:* can never match (and delete) a namespaced learner's keys.
func (n Names) RedisKey(k string) string {
	if n.NS == "" {
		return k
	}
	if rest, ok := strings.CutPrefix(k, "lab:"); ok {
		return "lab_" + n.NS + ":" + rest
	}
	return n.NS + ":" + k
}

// The article's two databases.
const (
	IdempotencyDB = "blog_idempotency_lab"
	OutboxDB      = "blog_outbox_lab"
)

var dbWordRe = regexp.MustCompile(`\b(blog_idempotency_lab|blog_outbox_lab)\b`)

// SQL substitutes the namespaced database names into a statement, so the
// learner sees exactly what was sent.
func (n Names) SQL(stmt string) string {
	if n.NS == "" {
		return stmt
	}
	return dbWordRe.ReplaceAllString(stmt, "${1}_"+n.NS)
}

// MySQLAddr is the MySQL server's host:port, for messages (never the
// password).
func (c Config) MySQLAddr() string {
	if d, err := gomysql.ParseDSN(c.MySQL); err == nil && d.Addr != "" {
		return d.Addr
	}
	return "the MySQL server"
}
