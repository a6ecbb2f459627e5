package labtest

import (
	"errors"
	"net"
	"strings"

	gomysql "github.com/go-sql-driver/mysql"

	lab "github.com/rmlab/lab"
	"github.com/rmlab/lab/internal/secret"
	"github.com/rmlab/lab/internal/services"
)

// Service is one of the three servers a test can need.
type Service int

const (
	MySQL Service = 1 << iota
	RabbitMQ
	Redis
	// All three: what Connect needs when it is given none.
	All = MySQL | RabbitMQ | Redis
)

// How each service is started on a Debian machine like CI's (.ci/run does
// exactly this when one does not answer).
const (
	StartMySQL    = "start-stop-daemon --start --oknodo --background --exec /usr/sbin/mariadbd"
	StartRabbitMQ = "rabbitmq-server -detached"
	StartRedis    = `redis-server --daemonize yes --bind 127.0.0.1 --port 6379 --save "" --appendonly no`
)

// missing is one line per needed service that did not answer: what was
// tried, why it failed, and how to start it or what to set.
func missing(svc *services.Services, need Service) []string {
	var out []string
	cfg := svc.Config
	if need&MySQL != 0 && svc.Info.MySQLErr != nil {
		addr := ""
		if dc, err := gomysql.ParseDSN(cfg.MySQL); err == nil {
			addr = dc.Addr
		}
		out = append(out, missingLine("MariaDB/MySQL", addr, secret.DSN(cfg.MySQL), cfg.From("mysql"), "LAB_MYSQL_DSN",
			StartMySQL, "127.0.0.1:3306", answers(addr), svc.Info.MySQLErr))
	}
	if need&RabbitMQ != 0 && svc.Info.AMQPErr != nil {
		addr, _ := services.AMQPAddr(cfg.AMQP)
		out = append(out, missingLine("RabbitMQ", addr, secret.URL(cfg.AMQP), cfg.From("amqp"), "LAB_AMQP_URL",
			StartRabbitMQ, "127.0.0.1:5672", answers(addr), svc.Info.AMQPErr))
	}
	if need&Redis != 0 && svc.Info.RedisErr != nil {
		out = append(out, missingLine("Redis", cfg.Redis, "", cfg.From("redis"), "LAB_REDIS_ADDR",
			StartRedis, "127.0.0.1:6379", answers(cfg.Redis), svc.Info.RedisErr))
	}
	return out
}

// missingLine: "labtest: Redis does not answer at 127.0.0.1:6379 (connection
// refused): start it with: redis-server …, or set LAB_REDIS_ADDR". A server
// that answers but will not let the lab in (a wrong password) is said so
// instead; an address the environment named is for the environment to fix.
// up says whether something accepts TCP connections at addr.
func missingLine(what, addr, shown, from, env, start, local string, up bool, err error) string {
	var in []string
	if shown != "" && shown != addr {
		in = append(in, shown)
	}
	if from == env {
		in = append(in, "from "+env)
	}
	tried := addr + " (" + strings.Join(append(in, cause(err)), ", ") + ")"
	if len(in) > 0 {
		tried = addr + " (" + strings.Join(in, ", ") + ": " + cause(err) + ")"
	}
	if up {
		return "labtest: " + what + " answers at " + tried + " but the lab cannot use it: check the user, password and address in " + env
	}
	line := "labtest: " + what + " does not answer at " + tried + ": "
	if isLoopback(addr) && (addr == local || from != env) {
		return line + "start it with: " + start + ", or set " + env
	}
	return line + "start the server " + env + " names (.ci/servers up starts CI's second matrix), or unset " + env + " for " + local
}

// cause is the innermost error's text, on one line, passwords masked.
func cause(err error) string {
	var le *lab.Error
	for errors.As(err, &le) && le.Err != nil {
		err = le.Err
	}
	var oe *net.OpError
	if errors.As(err, &oe) && oe.Err != nil {
		err = oe.Err
	}
	s := strings.Join(strings.Fields(secret.Scrub(err.Error())), " ")
	if i := strings.Index(s, " fix: "); i >= 0 {
		s = s[:i]
	}
	return s
}

// oneLine is an error's whole message (a fix included) on one line.
func oneLine(err error) string { return strings.Join(strings.Fields(err.Error()), " ") }

// answers reports whether something accepts TCP connections at addr.
func answers(addr string) bool {
	if addr == "" {
		return false
	}
	c, err := net.DialTimeout("tcp", addr, 500_000_000)
	if err != nil {
		return false
	}
	c.Close()
	return true
}

func isLoopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
