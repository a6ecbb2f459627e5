package services

// The one seam to Docker: when a service is unreachable and a Docker engine
// answers, start it with testcontainers-go. Machines without an engine (CI
// here) never enter this file's slow paths: dockerAnswers fails in
// milliseconds when there is no socket.

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strings"
	"time"

	lab "github.com/rmlab/lab"
	"github.com/rmlab/lab/internal/containers"
	"github.com/rmlab/lab/internal/plain"
	"github.com/rmlab/lab/internal/secret"
	"github.com/testcontainers/testcontainers-go"
	tcmysql "github.com/testcontainers/testcontainers-go/modules/mysql"
	tcredis "github.com/testcontainers/testcontainers-go/modules/redis"
	"github.com/testcontainers/testcontainers-go/wait"
)

// Images the lab starts: the versions docker-compose.yml pins too.
const (
	MySQLImage  = containers.MySQLImage
	RabbitImage = containers.RabbitImage
	RedisImage  = containers.RedisImage
)

// StartLimit bounds starting the three containers (a first MySQL start
// initializes its data directory).
const StartLimit = 3 * time.Minute

// dockerAnswers pings the engine DOCKER_HOST names (or the default socket).
func dockerAnswers(ctx context.Context) bool {
	e, ok := containers.FromEnv()
	return !ok || e.Answers(ctx) // a TCP engine: let testcontainers try it
}

// sweep removes containers a lab that died left (SIGKILL), before this
// one starts its own.
func (s *Services) sweep(ctx context.Context) {
	e, ok := containers.FromEnv()
	if !ok {
		return
	}
	var out strings.Builder
	if n, err := e.Sweep(ctx, &out); err == nil && n > 0 {
		s.Info.Swept = append(s.Info.Swept, strings.Split(strings.TrimSpace(out.String()), "\n")...)
	}
}

// dropProbed forgets what the probe found of the services in set (they
// are to run in containers: their connections closed, what was read of
// them cleared) and returns errs without theirs, and the errors that stand
// for them, which startContainers starts.
func (s *Services) dropProbed(set InContainers, errs []error) (kept, boxed []error) {
	for _, err := range errs {
		if !set.Has(s.fieldOf(err)) {
			kept = append(kept, err)
		}
	}
	if set.Has("mysql") {
		if s.MySQL != nil {
			s.MySQL.Close()
		}
		s.MySQL = nil
		s.Info.forgetMySQL()
		s.Info.MySQLErr = errWanted("MySQL")
		boxed = append(boxed, s.Info.MySQLErr)
	}
	if set.Has("amqp") {
		s.Info.forgetAMQP()
		s.Info.AMQPErr = errWanted("RabbitMQ")
		boxed = append(boxed, s.Info.AMQPErr)
	}
	if set.Has("redis") {
		if s.Redis != nil {
			s.Redis.Close()
		}
		s.Redis = nil
		s.Info.forgetRedis()
		s.Info.RedisErr = errWanted("Redis")
		boxed = append(boxed, s.Info.RedisErr)
	}
	return kept, boxed
}

// startContainers starts a container for each service that failed and
// returns the errors that remain.
func (s *Services) startContainers(ctx context.Context, errs []error) []error {
	containers.NoReaper()
	s.sweep(ctx)
	ctx, cancel := context.WithTimeout(ctx, StartLimit)
	defer cancel()
	var left []error
	for _, err := range errs {
		var slot *error
		var start func(context.Context) error
		var image string
		switch {
		case err == s.Info.MySQLErr:
			slot, start, image = &s.Info.MySQLErr, s.startMySQL, MySQLImage
		case err == s.Info.AMQPErr:
			slot, start, image = &s.Info.AMQPErr, s.startRabbit, RabbitImage
		case err == s.Info.RedisErr:
			slot, start, image = &s.Info.RedisErr, s.startRedis, RedisImage
		default:
			left = append(left, err)
			continue
		}
		why := "nothing answers at " + s.Config.addrOf(s.fieldOf(err))
		if s.Config.Containers.Has(s.fieldOf(err)) {
			why = "containers asked for"
		}
		s.progress(fmt.Sprintf("%s: starting %s as a container of the lab's (a first start pulls the image; up to %s)", why, image, StartLimit))
		if failed := start(ctx); failed != nil {
			// Said where the service's own error was (lab doctor reads it
			// there): the probe's error, then why no container took over.
			e := &lab.Error{What: "a Docker engine answered but starting the container " + image + " failed", Err: failed,
				Fix: "start the service yourself, or run `docker compose up -d mysql rabbitmq redis`"}
			if ctx.Err() != nil && !errors.Is(ctx.Err(), context.DeadlineExceeded) {
				// Ctrl-C while it started: nothing to fix, and what was
				// started is removed on the way out.
				e = &lab.Error{What: "stopped while the container " + image + " was starting; the lab removes what it started", Err: ctx.Err()}
			}
			*slot = errors.Join(err, e)
			left = append(left, *slot)
		}
	}
	return left
}

// left is what remains of the start limit: each container waits for its
// server that long, not testcontainers' 60 s (MySQL's) or 10 s (Redis's
// port), which a first MySQL start on a loaded machine outlasts (CI's
// container road: the relay's tests met 127.0.0.1:1 when it did).
func left(ctx context.Context) time.Duration {
	if d, ok := ctx.Deadline(); ok {
		return max(time.Until(d), time.Second)
	}
	return StartLimit
}

func (s *Services) startMySQL(ctx context.Context) error {
	start := time.Now()
	// A password of its own: the lab hides every password it knows from
	// what it prints, and a word like "lab" would hide every key that
	// holds it.
	c, err := tcmysql.Run(ctx, MySQLImage, tcmysql.WithPassword(rand.Text()), tcmysql.WithUsername("root"), tcmysql.WithDatabase("mysql"),
		testcontainers.WithLabels(containers.Owner("mysql")),
		testcontainers.WithWaitStrategyAndDeadline(left(ctx), wait.ForLog("port: 3306  MySQL Community Server").WithStartupTimeout(left(ctx))))
	if c != nil {
		s.containers = append(s.containers, func() { _ = testcontainers.TerminateContainer(c) })
	}
	if err != nil {
		return withLog(err, c)
	}
	dsn, err := c.ConnectionString(ctx)
	if err != nil {
		return err
	}
	s.Config.MySQL = strings.TrimSuffix(dsn, "mysql") // no default database
	secret.Note(secret.KindDSN, s.Config.MySQL)
	s.Config.from["mysql"] = "a container the lab started"
	s.Info.MySQLErr = nil
	ep, _ := c.Endpoint(ctx, "")
	s.Info.Started = append(s.Info.Started, started("MySQL", MySQLImage, ep, start))
	return s.connectMySQL(ctx)
}

func (s *Services) startRabbit(ctx context.Context) error {
	// The generic container: the rabbitmq module lags the core library.
	start := time.Now()
	// guest, as the image's default, with a password of its own: the port
	// is published on the machine, and guest/guest is everyone's.
	pw := rand.Text()
	c, err := testcontainers.GenericContainer(ctx, testcontainers.GenericContainerRequest{
		ContainerRequest: testcontainers.ContainerRequest{
			Image:        RabbitImage,
			Env:          map[string]string{"RABBITMQ_DEFAULT_PASS": pw},
			ExposedPorts: []string{"5672/tcp", "15672/tcp"},
			Labels:       containers.Owner("rabbitmq"),
			WaitingFor:   wait.ForLog("Server startup complete").WithStartupTimeout(left(ctx)),
		},
		Started: true,
	})
	if c != nil {
		s.containers = append(s.containers, func() { _ = testcontainers.TerminateContainer(c) })
	}
	if err != nil {
		return withLog(err, c)
	}
	ep, err := c.PortEndpoint(ctx, "5672/tcp", "")
	if err != nil {
		return err
	}
	s.Config.AMQP = "amqp://guest:" + pw + "@" + ep + "/"
	secret.Note(secret.KindURL, s.Config.AMQP)
	if m, err := c.PortEndpoint(ctx, "15672/tcp", "http"); err == nil {
		s.Config.Management = m + "/"
	}
	s.Config.from["amqp"] = "a container the lab started"
	s.Info.AMQPErr = nil
	s.Info.Started = append(s.Info.Started, started("RabbitMQ", RabbitImage, ep, start))
	return s.probeAMQP(ctx)
}

func (s *Services) startRedis(ctx context.Context) error {
	start := time.Now()
	c, err := tcredis.Run(ctx, RedisImage, testcontainers.WithLabels(containers.Owner("redis")),
		testcontainers.WithWaitStrategyAndDeadline(left(ctx),
			wait.ForListeningPort("6379/tcp").WithStartupTimeout(left(ctx)),
			wait.ForLog("* Ready to accept connections").WithStartupTimeout(left(ctx))))
	if c != nil {
		s.containers = append(s.containers, func() { _ = testcontainers.TerminateContainer(c) })
	}
	if err != nil {
		return withLog(err, c)
	}
	u, err := c.ConnectionString(ctx)
	if err != nil {
		return err
	}
	s.Config.Redis = strings.TrimPrefix(u, "redis://")
	s.Config.from["redis"] = "a container the lab started"
	s.Info.RedisErr = nil
	s.Info.Started = append(s.Info.Started, started("Redis", RedisImage, s.Config.Redis, start))
	return s.connectRedis(ctx)
}

// withLog adds to why a container failed the last lines of its log (the
// testcontainers log that had them is off) and what its processes were
// doing: a start that hangs says whether its server waits on the disk (D),
// was stopped (T) or runs (R). Both come from the container: plain text.
func withLog(err error, c testcontainers.Container) error {
	if c == nil || reflect.ValueOf(c).IsNil() {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	if r, lerr := c.Logs(ctx); lerr == nil {
		b, _ := io.ReadAll(io.LimitReader(r, 1<<20))
		r.Close()
		lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
		err = fmt.Errorf("%w\n  the container's last log lines:%s", err, indented(lines[max(0, len(lines)-12):]))
	}
	if e, ok := containers.FromEnv(); ok {
		if ps, terr := e.Top(ctx, c.GetContainerID()); terr == nil {
			more := ""
			if len(ps) > 13 { // the title and 12 processes, and how many not shown
				more = fmt.Sprintf("\n    … and %d more", len(ps)-13)
				ps = ps[:13]
			}
			err = fmt.Errorf("%w\n  its processes (STAT: R runs, S sleeps, D waits on the disk, T stopped):%s%s", err, indented(ps), more)
		}
	}
	return err
}

// indented is lines from outside the lab, each plain and on a line of its
// own under the message.
func indented(lines []string) string {
	var b strings.Builder
	for _, l := range lines {
		b.WriteString("\n    " + plain.Cut(plain.Text(l), 240))
	}
	return b.String()
}

// started says what the lab started, where, and how long it took.
func started(what, image, addr string, since time.Time) string {
	return fmt.Sprintf("%s (%s) at %s, ready in %.1f s", what, image, addr, time.Since(since).Seconds())
}
