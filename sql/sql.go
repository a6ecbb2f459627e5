// Package sql holds the article's schemas and statements as .sql files,
// embedded in the binary, and splits them into the statements the lab sends
// one by one and shows to the learner as written.
package sql

import (
	"embed"
	"fmt"
	"io/fs"
	"regexp"
	"strings"
)

//go:embed idempotency/*.sql outbox/*.sql room/*.sql chaos/*.sql
var files embed.FS

// File returns an embedded file, e.g. "idempotency/schema.sql".
func File(name string) (string, error) {
	b, err := files.ReadFile(name)
	if err != nil {
		return "", fmt.Errorf("no embedded SQL file %q (see sql/ in the lab's source): %w", name, err)
	}
	return string(b), nil
}

// Names lists every embedded file.
func Names() []string {
	var out []string
	_ = fs.WalkDir(files, ".", func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			out = append(out, p)
		}
		return nil
	})
	return out
}

// Databases are the article's two databases, the only ones a lesson names.
func Databases() []string { return []string{"blog_idempotency_lab", "blog_outbox_lab"} }

var createRe = regexp.MustCompile(`(?i)CREATE TABLE\s+(?:IF NOT EXISTS\s+)?` + "`?" + `([a-z_][a-z0-9_]*)`)

// Tables lists the tables the embedded SQL creates in an article database:
// its schema's, and those of the other statement files beside it.
func Tables(db string) []string {
	schema := Schema(db)
	if schema == "" {
		return nil
	}
	dir := schema[:strings.IndexByte(schema, '/')+1]
	var out []string
	for _, name := range Names() {
		if strings.HasPrefix(name, dir) {
			src, _ := File(name)
			out = append(out, CreatedTables(src)...)
		}
	}
	return out
}

// CreatedTables are the tables the CREATE TABLE statements in src create.
func CreatedTables(src string) []string {
	var out []string
	for _, m := range createRe.FindAllStringSubmatch(src, -1) {
		out = append(out, m[1])
	}
	return out
}

// Schema is the schema file of an article database.
func Schema(db string) string {
	switch db {
	case "blog_idempotency_lab":
		return "idempotency/schema.sql"
	case "blog_outbox_lab":
		return "outbox/schema.sql"
	}
	return ""
}

// Split cuts a script into statements at semicolons outside quotes and
// comments. Whole-line "--" comments are dropped; the statement text is
// otherwise kept as written (line breaks included), without the semicolon.
func Split(script string) []string {
	var out []string
	var b strings.Builder
	var quote rune
	lines := strings.Split(script, "\n")
	for li, line := range lines {
		if quote == 0 && strings.HasPrefix(strings.TrimSpace(line), "--") {
			continue
		}
		for _, r := range line {
			switch {
			case quote != 0:
				b.WriteRune(r)
				if r == quote {
					quote = 0
				}
			case r == '\'' || r == '"' || r == '`':
				quote = r
				b.WriteRune(r)
			case r == ';':
				if s := strings.TrimSpace(b.String()); s != "" {
					out = append(out, s)
				}
				b.Reset()
			default:
				b.WriteRune(r)
			}
		}
		if li < len(lines)-1 {
			b.WriteByte('\n')
		}
	}
	if s := strings.TrimSpace(b.String()); s != "" {
		out = append(out, s)
	}
	return out
}

// Statement is the one statement an embedded file holds, for a program
// that sends it with ? placeholders: the lessons can show the very text.
// A missing file or one holding more than one statement is the lab's own
// bug (the files are embedded), so it panics; sql's tests load every
// statement a program names.
func Statement(name string) string {
	text, err := File(name)
	if err != nil {
		panic(err)
	}
	stmts := Split(text)
	if len(stmts) != 1 {
		panic(fmt.Sprintf("%s holds %d statements, a program sends exactly one", name, len(stmts)))
	}
	return stmts[0]
}
