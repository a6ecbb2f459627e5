package chaos

import (
	"fmt"
	"html/template"
	"io"
	"strings"

	"github.com/rmlab/lab/internal/plain"
)

// Report writes the run's timeline and counts as one self-contained HTML
// page (inline SVG and CSS, nothing fetched), for a CI artifact or a
// workshop debrief.
func Report(w io.Writer, s *Summary) error {
	var b strings.Builder
	if err := reportPage.Execute(&b, reportData{S: s, Chart: template.HTML(chartSVG(s.Timeline)), Kinds: AllKinds()}); err != nil {
		return err
	}
	// HTML escaping leaves escapes, C1 controls and bidi overrides a
	// program's status or message id may carry; the page is also read with
	// cat and in CI logs.
	_, err := io.WriteString(w, plain.Lines(b.String()))
	return err
}

type reportData struct {
	S     *Summary
	Chart template.HTML
	Kinds []FaultKind
}

var reportPage = template.Must(template.New("report").Funcs(template.FuncMap{
	"verdict": func(s *Summary) string {
		if s.OK() {
			return "PASS"
		}
		return "FAIL"
	},
	"sec": func(ms int64) string { return fmt.Sprintf("%.2fs", float64(ms)/1000) },
}).Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<title>lab chaos: {{.S.Pipeline}}, seed {{.S.Seed}}: {{verdict .S}}</title>
<style>
body{font:14px/1.45 system-ui,sans-serif;margin:2em auto;max-width:70em;color:#222}
h1{font-size:1.4em} .PASS{color:#1a7f37} .FAIL{color:#cf222e}
table{border-collapse:collapse;margin:1em 0} td,th{border:1px solid #ccc;padding:.25em .6em;text-align:left}
td.n{text-align:right;font-variant-numeric:tabular-nums}
.bad{background:#ffebe9} svg{background:#fafafa;border:1px solid #ddd}
.legend span{display:inline-block;margin-right:1.2em} .sw{display:inline-block;width:1em;height:.6em;margin-right:.3em}
</style></head><body>
<h1><span class="{{verdict .S}}">{{verdict .S}}</span> · pipeline <code>{{.S.Pipeline}}</code> · seed {{.S.Seed}}</h1>
<p>{{.S.Orders}} orders on {{.S.Broker}}; {{.S.Elapsed}} in all, drain {{.S.Drain}}, {{printf "%.1f" .S.OrdersPerSecond}} orders/s.</p>
{{range .S.Violations}}<p class="FAIL">violation: {{.}}</p>{{end}}
{{range .S.Notes}}<p>note: {{.}}</p>{{end}}
<h2>Ledger</h2>
<table>
<tr><th>committed</th><td class="n">{{.S.Committed}}</td></tr>
<tr><th>applied once</th><td class="n">{{.S.Once}}</td></tr>
<tr{{if .S.Lost}} class="bad"{{end}}><th>lost (applied 0 times)</th><td class="n">{{.S.Lost}}</td></tr>
<tr{{if .S.Twice}} class="bad"{{end}}><th>twice (applied 2+ times)</th><td class="n">{{.S.Twice}}</td></tr>
<tr><th>duplicates absorbed by the consumer's key</th><td class="n">{{.S.Absorbed}}</td></tr>
<tr><th>publishes (retries included)</th><td class="n">{{.S.Published}}</td></tr>
<tr{{if .S.Unsent}} class="bad"{{end}}><th>outbox events unsent</th><td class="n">{{.S.Unsent}}</td></tr>
<tr{{if .S.Dead}} class="bad"{{end}}><th>outbox events DEAD</th><td class="n">{{.S.Dead}}</td></tr>
<tr><th>commit → applied p50 / p99 / max</th><td class="n">{{printf "%.1f" .S.LatencyP50}} / {{printf "%.1f" .S.LatencyP99}} / {{printf "%.1f" .S.LatencyMax}} ms</td></tr>
</table>
{{if .S.Why}}<h2>Why</h2>
{{range .S.Why}}<h3>order {{.Order}}: {{.Verdict}}</h3><p>{{.Because}}</p><pre>{{range .Story}}{{.}}
{{end}}</pre>{{end}}{{end}}
<h2>Timeline</h2>
<div class="legend"><span><i class="sw" style="background:#0969da"></i>committed/s</span><span><i class="sw" style="background:#8250df"></i>published/s</span><span><i class="sw" style="background:#1a7f37"></i>applied/s</span><span><i class="sw" style="background:#bf8700"></i>absorbed/s</span><span><i class="sw" style="background:#cf222e"></i>fault</span></div>
{{.Chart}}
<h2>Faults</h2>
<table><tr><th>kind</th><th>injected</th><th>found nothing to hit</th></tr>
{{range .Kinds}}<tr><td>{{.}}</td><td class="n">{{index $.S.Faults .}}</td><td class="n">{{index $.S.Missed .}}</td></tr>{{end}}
</table>
<table><tr><th>at</th><th>fault</th><th>target</th><th>point</th><th>what it found</th></tr>
{{range .S.Timeline.Faults}}<tr><td class="n">{{sec .T}}</td><td>{{.Kind}}</td><td>{{.Target}}</td><td>{{.Point}}</td><td>{{.Result}}</td></tr>{{end}}
</table>
<h2>Restarts</h2>
<table>{{range $k, $v := .S.Restarts}}<tr><td>{{$k}}</td><td class="n">{{$v}}</td></tr>{{end}}</table>
</body></html>
`))

// chartSVG draws the per-second counts as lines and the faults as ticks.
func chartSVG(t Timeline) string {
	const w, h, pad = 900.0, 260.0, 30.0
	n := len(t.Seconds)
	if n == 0 {
		return "<p>(no timeline)</p>"
	}
	top := 1
	for _, b := range t.Seconds {
		top = max(top, b.Committed, b.Published, b.Applied, b.Absorbed)
	}
	x := func(i float64) float64 { return pad + i*(w-2*pad)/float64(max(n-1, 1)) }
	y := func(v int) float64 { return h - pad - float64(v)*(h-2*pad)/float64(top) }
	var b strings.Builder
	fmt.Fprintf(&b, `<svg viewBox="0 0 %.0f %.0f" width="100%%" role="img" aria-label="orders per second">`, w, h)
	fmt.Fprintf(&b, `<line x1="%.0f" y1="%.0f" x2="%.0f" y2="%.0f" stroke="#999"/>`, pad, h-pad, w-pad, h-pad)
	fmt.Fprintf(&b, `<text x="4" y="%.0f" font-size="11">%d/s</text><text x="4" y="%.0f" font-size="11">0</text>`, pad, top, h-pad)
	for _, f := range t.Faults {
		fx := pad + float64(f.T)/1000*(w-2*pad)/float64(max(n-1, 1))
		fmt.Fprintf(&b, `<line x1="%.1f" y1="%.0f" x2="%.1f" y2="%.0f" stroke="#cf222e" stroke-opacity=".45"><title>%s %s %s</title></line>`,
			fx, pad, fx, h-pad, template.HTMLEscapeString(string(f.Kind)), template.HTMLEscapeString(f.Target), template.HTMLEscapeString(f.Result))
	}
	series := []struct {
		colour string
		v      func(Bucket) int
	}{
		{"#0969da", func(b Bucket) int { return b.Committed }},
		{"#8250df", func(b Bucket) int { return b.Published }},
		{"#1a7f37", func(b Bucket) int { return b.Applied }},
		{"#bf8700", func(b Bucket) int { return b.Absorbed }},
	}
	for _, s := range series {
		var pts []string
		for i, bk := range t.Seconds {
			pts = append(pts, fmt.Sprintf("%.1f,%.1f", x(float64(i)), y(s.v(bk))))
		}
		fmt.Fprintf(&b, `<polyline fill="none" stroke="%s" stroke-width="1.6" points="%s"/>`, s.colour, strings.Join(pts, " "))
	}
	for i := 0; i < n; i += max(1, n/10) {
		fmt.Fprintf(&b, `<text x="%.0f" y="%.0f" font-size="11" text-anchor="middle">%ds</text>`, x(float64(i)), h-pad+16, i)
	}
	b.WriteString(`</svg>`)
	return b.String()
}
