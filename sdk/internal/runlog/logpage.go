package runlog

import (
	"bufio"
	"errors"
	"io"
	"strings"
	"unicode/utf8"
)

// Bounds of one page of a run log returned by ReadLog, so that reading the
// log of a run that printed gigabytes costs the executor, the admin and the
// browser no more than one page at a time.
const (
	// PageMaxLines is the most lines one page of a run log holds.
	PageMaxLines = 1000
	// PageMaxBytes is about the most bytes one page of a run log holds. A
	// single line longer than that is cut, and marked as cut.
	PageMaxBytes = 256 << 10
)

// Page is one page of a run log.
type Page struct {
	FromLine, ToLine int
	Content          string
	End              bool
}

// truncatedMark ends a line cut to fit a page.
const truncatedMark = " …[line cut]"

// ReadPage reads lines [from, from+maxLines) of the log in src, at most
// about maxBytes of them, holding no more than one page in memory whatever
// the size of the log or of its lines. src is the log's own file or its
// record in a segment: the same bytes give the same pages. ended says the
// run has finished writing the log: then the last line may lack its
// newline, and a page reaching the end of src ends the log.
func ReadPage(src io.Reader, from, maxLines, maxBytes int, ended bool) (Page, error) {
	from = max(from, 1)
	page := Page{FromLine: from, ToLine: from - 1}
	r := bufio.NewReaderSize(src, 32<<10)

	for line := 1; line < from; line++ {
		_, _, nl, err := appendLine(r, nil, 0)
		if err != nil && !errors.Is(err, io.EOF) {
			return page, err
		}
		if !nl {
			// The log has fewer lines than from-1, or its last line is
			// incomplete: nothing to return yet.
			page.End = ended
			return page, nil
		}
	}

	buf := make([]byte, 0, min(maxBytes, 64<<10))
	eof := false
	for n := 0; n < maxLines; n++ {
		start := len(buf)
		room := maxBytes - start - 1
		var total int
		var nl bool
		var err error
		buf, total, nl, err = appendLine(r, buf, max(room, 0))
		if err != nil && !errors.Is(err, io.EOF) {
			return page, err
		}
		if total == 0 && !nl {
			eof = true
			break
		}
		if !nl && !ended {
			// The run is still writing this line: leave it for the next page.
			buf = buf[:start]
			break
		}
		if total > room {
			if start > 0 {
				buf = buf[:start] // does not fit: first line of the next page
				break
			}
			cut := max(room-len(truncatedMark), 0)
			for cut > 0 && !utf8.RuneStart(buf[cut]) {
				cut--
			}
			buf = append(buf[:cut], truncatedMark...)
		}
		if nl {
			buf = append(buf, '\n')
		} else {
			eof = true
		}
		page.ToLine++
		if eof {
			break
		}
	}
	if !eof {
		if _, err := r.Peek(1); errors.Is(err, io.EOF) {
			eof = true
		}
	}
	page.Content = strings.ToValidUTF8(string(buf), "\uFFFD")
	page.End = ended && eof
	return page, nil
}

// appendLine reads one line from r and appends at most keep bytes of it,
// without the newline, to dst. total is the line's full length without the
// newline; nl says whether it ended with one (false at the end of the file).
func appendLine(r *bufio.Reader, dst []byte, keep int) (out []byte, total int, nl bool, err error) {
	out = dst
	for {
		b, err := r.ReadSlice('\n')
		if err == nil {
			b = b[:len(b)-1]
			nl = true
		}
		if room := keep - (len(out) - len(dst)); room > 0 {
			out = append(out, b[:min(room, len(b))]...)
		}
		total += len(b)
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		return out, total, nl, err
	}
}
