package services

import (
	"context"
	"fmt"
	"time"

	"github.com/rmlab/lab/internal/secret"
)

// NamedWait is how long a service the user named is awaited before the lab
// gives up on it (a first MySQL boot in a container takes about 30 s).
const NamedWait = 90 * time.Second

// fieldOf is the Config field whose probe failed with err ("" for none).
func (s *Services) fieldOf(err error) string {
	switch err {
	case s.Info.MySQLErr:
		return "mysql"
	case s.Info.AMQPErr:
		return "amqp"
	case s.Info.RedisErr:
		return "redis"
	}
	return ""
}

// probe is the probe of field's service; it records its error in Info.
func (s *Services) probe(ctx context.Context, field string) error {
	switch field {
	case "mysql":
		s.Info.MySQLErr = nil
		return s.connectMySQL(ctx)
	case "amqp":
		s.Info.AMQPErr = nil
		return s.probeAMQP(ctx)
	}
	s.Info.RedisErr = nil
	return s.connectRedis(ctx)
}

// awaitNamed probes field's service again every two seconds until it
// answers or NamedWait passes, saying so through Progress every ten; the
// last error stays in Info.
func (s *Services) awaitNamed(ctx context.Context, field string) error {
	name := map[string]string{"mysql": "MySQL", "amqp": "RabbitMQ", "redis": "Redis"}[field]
	start := time.Now()
	said := time.Time{}
	for {
		if time.Since(said) >= 10*time.Second {
			s.progress(fmt.Sprintf("waiting for %s at %s (named by %s) to answer: %.0f s of %.0f s; it may still be starting (docker compose up --wait waits for it)",
				name, s.Config.addrOf(field), s.Config.From(field), time.Since(start).Seconds(), NamedWait.Seconds()))
			said = time.Now()
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(2 * time.Second):
		}
		c, cancel := context.WithTimeout(ctx, 5*time.Second)
		err := s.probe(c, field)
		cancel()
		if err == nil {
			s.progress(fmt.Sprintf("%s at %s answered after %.0f s", name, s.Config.addrOf(field), time.Since(start).Seconds()))
			return nil
		}
		if time.Since(start) >= NamedWait {
			return err
		}
	}
}

// namedErrs are the errors of the named services still not answering.
func (s *Services) namedErrs() []error {
	var out []error
	for _, f := range []string{"mysql", "amqp", "redis"} {
		if s.Config.From(f) == "default" || s.Config.Containers.Has(f) {
			continue // a default falls back; one in containers is started
		}
		if err := map[string]error{"mysql": s.Info.MySQLErr, "amqp": s.Info.AMQPErr, "redis": s.Info.RedisErr}[f]; err != nil {
			out = append(out, err)
		}
	}
	return out
}

// addrOf is where field's service is, without a password.
func (c Config) addrOf(field string) string {
	switch field {
	case "mysql":
		return c.MySQLAddr()
	case "amqp":
		return secret.URL(c.AMQP)
	}
	return c.Redis
}

func (s *Services) progress(line string) {
	if s.Config.Progress != nil {
		s.Config.Progress(line)
	}
}
