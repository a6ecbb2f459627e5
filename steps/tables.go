package steps

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"

	lab "github.com/rmlab/lab"
	"github.com/rmlab/lab/internal/services"
)

// MaxTableRows is how many rows of a table a read keeps.
const MaxTableRows = 200

// The reasons a table cannot be read that a learner can act on; the screen
// words them in the learner's language.
var (
	ErrNoMySQL    = sayNoMySQL.E()
	ErrNoDatabase = sayNoDatabase.E()
	ErrNoTable    = sayNoTable.E()
)

// TableRead is one of a lesson's TableViews as read now. Cells are the
// server's text, NULL for SQL NULL: a reader filters them for its terminal.
type TableRead struct {
	Title string
	DB    string // the namespaced database
	Cols  []string
	Rows  [][]string
	Err   error // ErrNoMySQL, ErrNoDatabase, ErrNoTable, or the server's
}

// Tables reads views from the services the run talks to now (on the lab's
// own MySQL server for a lesson that reads its binary log): the screen's
// tables panel reads through here, never a driver of its own.
func (r *Run) Tables(ctx context.Context, views []lab.TableView) []TableRead {
	return (&Env{Svc: r.Svc()}).Tables(ctx, views)
}

// Tables reads views from e's services, before a run has started: each
// view's query on one pooled connection, in the namespaced database.
func (e *Env) Tables(ctx context.Context, views []lab.TableView) []TableRead {
	out := make([]TableRead, len(views))
	for i, v := range views {
		out[i] = TableRead{Title: v.Title, DB: v.DB}
	}
	var svc *services.Services
	if e != nil {
		svc = e.Svc
	}
	if svc == nil || svc.MySQL == nil {
		for i := range out {
			out[i].Err = ErrNoMySQL
		}
		return out
	}
	conn, err := svc.MySQL.Conn(ctx)
	if err != nil {
		for i := range out {
			out[i].Err = err
		}
		return out
	}
	defer conn.Close()
	// A read cut by ctx (a poll's deadline on a loaded machine) closes the
	// connection under the views after it, which would each say "sql:
	// connection is already closed": they get what cut the first.
	var cut error
	for i, v := range views {
		db := svc.Names.Name(v.DB)
		out[i].DB = db
		if cut != nil {
			out[i].Err = cut
			continue
		}
		if _, err := conn.ExecContext(ctx, "USE `"+db+"`"); err != nil {
			out[i].Err = tableErr(err)
			cut = connGone(ctx, err)
			continue
		}
		out[i].Cols, out[i].Rows, out[i].Err = queryRows(ctx, conn, svc.Names.SQL(v.Query))
		out[i].Err = tableErr(out[i].Err)
		cut = connGone(ctx, out[i].Err)
	}
	return out
}

// connGone is why conn can serve no further read after err: ctx's end, or
// the connection lost; nil when it still can (a missing table).
func connGone(ctx context.Context, err error) error {
	switch {
	case err == nil:
		return nil
	case ctx.Err() != nil:
		return ctx.Err()
	case errors.Is(err, sql.ErrConnDone), errors.Is(err, driver.ErrBadConn):
		return err
	}
	return nil
}

// tableErr names the errors a learner can act on.
func tableErr(err error) error {
	switch services.Code(err) {
	case services.ErBadDB:
		return ErrNoDatabase
	case services.ErNoSuchTable:
		return ErrNoTable
	}
	return err
}

func queryRows(ctx context.Context, conn *sql.Conn, q string) ([]string, [][]string, error) {
	rs, err := conn.QueryContext(ctx, q)
	if err != nil {
		return nil, nil, err
	}
	defer rs.Close()
	cols, err := rs.Columns()
	if err != nil {
		return nil, nil, err
	}
	var rows [][]string
	for rs.Next() && len(rows) < MaxTableRows {
		vals := make([]sql.NullString, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rs.Scan(ptrs...); err != nil {
			return nil, nil, err
		}
		row := make([]string, len(cols))
		for i, v := range vals {
			row[i] = "NULL"
			if v.Valid {
				row[i] = v.String
			}
		}
		rows = append(rows, row)
	}
	return cols, rows, rs.Err()
}
