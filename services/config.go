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
)

// Defaults used when neither a flag nor the environment names a service.
const (
	DefaultMySQL = "root@tcp(127.0.0.1:3306)/"
	DefaultAMQP  = "amqp://guest:guest@127.0.0.1:5672/"
	DefaultRedis = "127.0.0.1:6379"
)

// Config is what the user asked for. Empty fields fall back to the
// environment (LAB_MYSQL_DSN, LAB_AMQP_URL, LAB_REDIS_ADDR, LAB_NAMESPACE)
// and then to the defaults.
type Config struct {
	MySQL         string
	AMQP          string
	Redis         string
	Namespace     string
	BrokerControl string // "" or "rabbitmqctl": the lab may restart a local node
	NoDocker      bool   // never try testcontainers
}

// FromEnv fills empty fields from the environment and defaults, and records
// where each value came from for messages.
func (c Config) FromEnv() Config {
	pick := func(v, env, def string) string {
		if v != "" {
			return v
		}
		if e := os.Getenv(env); e != "" {
			return e
		}
		return def
	}
	c.MySQL = pick(c.MySQL, "LAB_MYSQL_DSN", DefaultMySQL)
	c.AMQP = pick(c.AMQP, "LAB_AMQP_URL", DefaultAMQP)
	c.Redis = pick(c.Redis, "LAB_REDIS_ADDR", DefaultRedis)
	c.Namespace = pick(c.Namespace, "LAB_NAMESPACE", "")
	c.BrokerControl = pick(c.BrokerControl, "LAB_BROKER_CONTROL", "")
	return c
}

// Env returns the environment a worker process needs to reach the same
// services under the same namespace.
func (c Config) Env() []string {
	return []string{
		"LAB_MYSQL_DSN=" + c.MySQL,
		"LAB_AMQP_URL=" + c.AMQP,
		"LAB_REDIS_ADDR=" + c.Redis,
		"LAB_NAMESPACE=" + c.Namespace,
	}
}

var nsRe = regexp.MustCompile(`^[a-z0-9]{1,16}$`)

// ValidNamespace reports whether ns can be a namespace: 1–16 lowercase
// letters or digits.
func ValidNamespace(ns string) bool { return nsRe.MatchString(ns) }

// Validate checks everything that can be checked without a network.
func (c Config) Validate() error {
	if c.Namespace != "" && !ValidNamespace(c.Namespace) {
		return &lab.Error{What: fmt.Sprintf("namespace %q is not allowed", c.Namespace), Where: "--namespace / LAB_NAMESPACE",
			Fix: "use 1–16 lowercase letters or digits, e.g. --namespace alice"}
	}
	if _, err := gomysql.ParseDSN(c.MySQL); err != nil {
		return &lab.Error{What: "the MySQL DSN is malformed", Where: RedactDSN(c.MySQL), Err: err,
			Fix: "write it as user:password@tcp(host:3306)/ (go-sql-driver form), via --mysql or LAB_MYSQL_DSN"}
	}
	if err := checkAMQPURL(c.AMQP); err != nil {
		return &lab.Error{What: "the AMQP URL is malformed", Where: RedactURL(c.AMQP), Err: err,
			Fix: "write it as amqp://user:password@host:5672/vhost, via --amqp or LAB_AMQP_URL"}
	}
	if _, _, err := splitHostPort(c.Redis); err != nil {
		return &lab.Error{What: "the Redis address is malformed", Where: c.Redis, Err: err,
			Fix: "write it as host:port, e.g. 127.0.0.1:6379, via --redis or LAB_REDIS_ADDR"}
	}
	if c.BrokerControl != "" && c.BrokerControl != "rabbitmqctl" {
		return &lab.Error{What: fmt.Sprintf("broker control %q is unknown", c.BrokerControl), Where: "--broker-control",
			Fix: "use --broker-control=rabbitmqctl on a machine whose local RabbitMQ node the lab may restart"}
	}
	return nil
}

func checkAMQPURL(s string) error {
	u, err := url.Parse(s)
	if err != nil {
		return fmt.Errorf("not a URL")
	}
	if u.Scheme != "amqp" && u.Scheme != "amqps" {
		return fmt.Errorf("scheme %q, want amqp or amqps", u.Scheme)
	}
	if u.Host == "" {
		return fmt.Errorf("no host")
	}
	return nil
}

func splitHostPort(s string) (string, string, error) {
	i := strings.LastIndex(s, ":")
	if i <= 0 || i == len(s)-1 {
		return "", "", fmt.Errorf("want host:port")
	}
	for _, r := range s[i+1:] {
		if r < '0' || r > '9' {
			return "", "", fmt.Errorf("port %q is not a number", s[i+1:])
		}
	}
	return s[:i], s[i+1:], nil
}

// RedactDSN hides the password of a go-sql-driver DSN, even a malformed one.
func RedactDSN(dsn string) string {
	if cfg, err := gomysql.ParseDSN(dsn); err == nil {
		if cfg.Passwd != "" {
			cfg.Passwd = "xxxxx"
		}
		return cfg.FormatDSN()
	}
	// user:pass@... → user:xxxxx@...
	at := strings.LastIndex(dsn, "@")
	if at < 0 {
		return dsn
	}
	cred := dsn[:at]
	if c := strings.Index(cred, ":"); c >= 0 {
		return cred[:c] + ":xxxxx" + dsn[at:]
	}
	return dsn
}

// RedactURL hides the password of a URL, even a malformed one.
func RedactURL(s string) string {
	if u, err := url.Parse(s); err == nil && u.User != nil {
		if _, has := u.User.Password(); has {
			u.User = url.UserPassword(u.User.Username(), "xxxxx")
		}
		return u.String()
	}
	if i := strings.Index(s, "://"); i >= 0 {
		rest := s[i+3:]
		if at := strings.LastIndex(rest, "@"); at >= 0 {
			cred := rest[:at]
			if c := strings.Index(cred, ":"); c >= 0 {
				return s[:i+3] + cred[:c] + ":xxxxx" + rest[at:]
			}
		}
	}
	return s
}

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
