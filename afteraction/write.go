package afteraction

import (
	"bufio"
	_ "embed"
	"html/template"
	"io"
)

//go:embed page.html
var pageHTML string

// tmpl is the page. html/template escapes every value for its context,
// so device-provided strings (client ids, messages quoting them, input
// names) are text wherever they land; the charts are the only values
// marked safe, and vgsvg escapes the text in them.
var tmpl = template.Must(template.New("page").Parse(pageHTML))

// Write writes rep as one self-contained HTML page: the styles and the
// charts (inline SVG) are in it, and it fetches nothing: its Content
// Security Policy forbids any fetch, and it runs no script.
func Write(w io.Writer, rep *Report, o Options) error {
	pg, err := build(rep, o)
	if err != nil {
		return err
	}
	bw := bufio.NewWriterSize(w, 1<<16)
	if err := tmpl.Execute(bw, pg); err != nil {
		return err
	}
	return bw.Flush()
}
