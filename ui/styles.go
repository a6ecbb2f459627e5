package ui

import (
	"image/color"

	"charm.land/glamour/v2/ansi"
	"charm.land/glamour/v2/styles"
	"charm.land/lipgloss/v2"
)

// Styles is every style the screen uses, built in one place from two facts:
// whether the terminal background is dark and whether color is allowed
// (NO_COLOR). Without color, emphasis falls back to bold, reverse and
// underline so nothing the learner must notice depends on color alone.
type Styles struct {
	Color bool
	Dark  bool

	panes map[paneKey]string // rendered panes, for pane(); dropped with the Styles on a theme change

	Border     lipgloss.Style // a pane's border
	BorderOn   lipgloss.Style // the border of the pane keys go to
	Title      lipgloss.Style // a pane's title, set in its top border
	TitleOn    lipgloss.Style // the active pane's title
	Header     lipgloss.Style // the screen's top line
	Footer     lipgloss.Style // the screen's bottom line
	Status     lipgloss.Style // a transient message in the footer
	Dim        lipgloss.Style
	Bold       lipgloss.Style
	Accent     lipgloss.Style
	Good       lipgloss.Style
	Bad        lipgloss.Style
	Warn       lipgloss.Style
	Code       lipgloss.Style // SQL and commands sent
	Observed   lipgloss.Style // what came back
	Selected   lipgloss.Style // the cursor row in a list or menu
	Changed    lipgloss.Style // a table row changed by the last step
	TabOn      lipgloss.Style
	TabOff     lipgloss.Style
	Key        lipgloss.Style // a key in the help overlay
	Part       lipgloss.Style // a part heading in the lesson list
	VerdictBad lipgloss.Style
	VerdictOK  lipgloss.Style

	// Glamour is the Markdown style for the prose.
	Glamour ansi.StyleConfig
	// GlamourName keys the prose cache: a style change re-renders.
	GlamourName string
}

// NewStyles builds the styles for a background and a color setting.
func NewStyles(dark, useColor bool) *Styles {
	ld := lipgloss.LightDark(dark)
	c := func(light, darkc string) color.Color {
		if !useColor {
			return lipgloss.NoColor{}
		}
		return ld(lipgloss.Color(light), lipgloss.Color(darkc))
	}
	accent := c("#5A56E0", "#8F8CF7")
	good := c("#1B7F3B", "#5FD68A")
	bad := c("#C0262D", "#FF6B6B")
	warn := c("#9A6700", "#E3B341")
	dim := c("#6E7781", "#8B949E")
	border := c("#AFB8C1", "#484F58")
	code := c("#0550AE", "#79C0FF")

	s := &Styles{Color: useColor, Dark: dark}
	s.Border = lipgloss.NewStyle().Foreground(border)
	s.BorderOn = lipgloss.NewStyle().Foreground(accent)
	s.Title = lipgloss.NewStyle().Bold(true).Foreground(dim)
	s.TitleOn = lipgloss.NewStyle().Bold(true).Foreground(accent)
	s.Header = lipgloss.NewStyle().Bold(true).Foreground(accent)
	s.Footer = lipgloss.NewStyle().Foreground(dim)
	s.Status = lipgloss.NewStyle().Bold(true).Foreground(warn)
	s.Dim = lipgloss.NewStyle().Foreground(dim)
	s.Bold = lipgloss.NewStyle().Bold(true)
	s.Accent = lipgloss.NewStyle().Foreground(accent)
	s.Good = lipgloss.NewStyle().Foreground(good)
	s.Bad = lipgloss.NewStyle().Bold(true).Foreground(bad)
	s.Warn = lipgloss.NewStyle().Foreground(warn)
	s.Code = lipgloss.NewStyle().Foreground(code)
	s.Observed = lipgloss.NewStyle()
	s.Selected = lipgloss.NewStyle().Bold(true).Foreground(accent)
	s.Changed = lipgloss.NewStyle().Bold(true).Foreground(warn)
	s.TabOn = lipgloss.NewStyle().Bold(true).Foreground(accent)
	s.TabOff = lipgloss.NewStyle().Foreground(dim)
	s.Key = lipgloss.NewStyle().Bold(true).Foreground(accent)
	s.Part = lipgloss.NewStyle().Bold(true).Foreground(dim)
	s.VerdictBad = lipgloss.NewStyle().Bold(true).Foreground(bad)
	s.VerdictOK = lipgloss.NewStyle().Bold(true).Foreground(good)
	if !useColor {
		// Color is gone: the cursor and changed rows must still stand out.
		s.Selected = s.Selected.Reverse(true)
		s.TitleOn = s.TitleOn.Reverse(true)
		s.Changed = s.Changed.Underline(true)
		s.VerdictBad = s.VerdictBad.Reverse(true)
		s.TabOn = s.TabOn.Reverse(true)
	}

	switch {
	case !useColor:
		s.Glamour, s.GlamourName = styles.NoTTYStyleConfig, "notty"
	case dark:
		s.Glamour, s.GlamourName = styles.DarkStyleConfig, "dark"
	default:
		s.Glamour, s.GlamourName = styles.LightStyleConfig, "light"
	}
	// The pane already has a border; a document margin only wastes columns.
	// Bullets become ASCII: "•" is East-Asian-ambiguous and would shift the
	// right border in a CJK terminal.
	zero := uint(0)
	s.Glamour.Document.Margin = &zero
	s.Glamour.Item.BlockPrefix = "- "
	return s
}
