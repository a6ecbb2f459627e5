package services

// The one seam to Docker: when a service is unreachable and a Docker engine
// answers, start it with testcontainers-go. Machines without an engine (CI
// here) never enter this file's slow paths: dockerAnswers fails in
// milliseconds when there is no socket.

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"strings"
	"time"

	lab "github.com/rmlab/lab"
	"github.com/testcontainers/testcontainers-go"
	tcmysql "github.com/testcontainers/testcontainers-go/modules/mysql"
	tcredis "github.com/testcontainers/testcontainers-go/modules/redis"
	"github.com/testcontainers/testcontainers-go/wait"
)

// Images the lab starts: the versions docker-compose.yml pins too.
const (
	MySQLImage  = "mysql:8.4"
	RabbitImage = "rabbitmq:4-management"
	RedisImage  = "redis:7"
)

// dockerAnswers pings the engine's /_ping over its unix socket.
func dockerAnswers(ctx context.Context) bool {
	sock := "/var/run/docker.sock"
	if h := os.Getenv("DOCKER_HOST"); h != "" {
		p, ok := strings.CutPrefix(h, "unix://")
		if !ok {
			return true // a TCP engine: let testcontainers try it
		}
		sock = p
	}
	if _, err := os.Stat(sock); err != nil {
		return false
	}
	c, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	cl := &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, "unix", sock)
	}}}
	req, _ := http.NewRequestWithContext(c, http.MethodGet, "http://docker/_ping", nil)
	resp, err := cl.Do(req)
	if err != nil {
		return false
	}
	resp.Body.Close()
	return resp.StatusCode == 200
}

// startContainers starts a container for each service that failed and
// returns the errors that remain.
func (s *Services) startContainers(ctx context.Context, errs []error) []error {
	var left []error
	for _, err := range errs {
		var e *lab.Error
		var started error
		switch {
		case err == s.Info.MySQLErr:
			started = s.startMySQL(ctx)
		case err == s.Info.AMQPErr:
			started = s.startRabbit(ctx)
		case err == s.Info.RedisErr:
			started = s.startRedis(ctx)
		default:
			started = err
		}
		if started != nil {
			e = &lab.Error{What: "a Docker engine answered but starting the container failed", Err: started,
				Fix: "start the service yourself, or run `docker compose up -d mysql rabbitmq redis`"}
			left = append(left, err, e)
		}
	}
	return left
}

func (s *Services) startMySQL(ctx context.Context) error {
	c, err := tcmysql.Run(ctx, MySQLImage, tcmysql.WithPassword("lab"), tcmysql.WithUsername("root"), tcmysql.WithDatabase("mysql"))
	if err != nil {
		return err
	}
	s.containers = append(s.containers, func() { _ = testcontainers.TerminateContainer(c) })
	dsn, err := c.ConnectionString(ctx)
	if err != nil {
		return err
	}
	s.Config.MySQL = strings.TrimSuffix(dsn, "mysql") // no default database
	s.Info.MySQLErr = nil
	s.Info.Started = append(s.Info.Started, "MySQL ("+MySQLImage+")")
	return s.connectMySQL(ctx)
}

func (s *Services) startRabbit(ctx context.Context) error {
	// The generic container: the rabbitmq module lags the core library.
	c, err := testcontainers.GenericContainer(ctx, testcontainers.GenericContainerRequest{
		ContainerRequest: testcontainers.ContainerRequest{
			Image:        RabbitImage,
			ExposedPorts: []string{"5672/tcp", "15672/tcp"},
			WaitingFor:   wait.ForLog("Server startup complete").WithStartupTimeout(2 * time.Minute),
		},
		Started: true,
	})
	if err != nil {
		return err
	}
	s.containers = append(s.containers, func() { _ = testcontainers.TerminateContainer(c) })
	ep, err := c.PortEndpoint(ctx, "5672/tcp", "")
	if err != nil {
		return err
	}
	s.Config.AMQP = "amqp://guest:guest@" + ep + "/"
	s.Info.AMQPErr = nil
	s.Info.Started = append(s.Info.Started, "RabbitMQ ("+RabbitImage+")")
	return s.probeAMQP(ctx)
}

func (s *Services) startRedis(ctx context.Context) error {
	c, err := tcredis.Run(ctx, RedisImage)
	if err != nil {
		return err
	}
	s.containers = append(s.containers, func() { _ = testcontainers.TerminateContainer(c) })
	u, err := c.ConnectionString(ctx)
	if err != nil {
		return err
	}
	s.Config.Redis = strings.TrimPrefix(u, "redis://")
	s.Info.RedisErr = nil
	s.Info.Started = append(s.Info.Started, fmt.Sprintf("Redis (%s)", RedisImage))
	return s.connectRedis(ctx)
}
