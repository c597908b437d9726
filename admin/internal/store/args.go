package store

import (
	"strconv"
	"strings"
)

// args are the arguments of a statement whose text is built as it goes (a
// filter, an IN list). Each value added returns its placeholder, numbered
// by its place among the arguments ($1, $2, …), so that the text and the
// arguments stay in step whatever parts the statement has. Both databases
// bind $N by number.
type args []any

// add appends v and returns its placeholder.
func (a *args) add(v any) string {
	*a = append(*a, v)
	return "$" + strconv.Itoa(len(*a))
}

// addList appends each of vs and returns their placeholders, separated by
// commas: an IN list. vs must not be empty.
func addList[T any](a *args, vs []T) string {
	first := len(*a) + 1
	for _, v := range vs {
		*a = append(*a, v)
	}
	return placeholders(first, len(vs))
}

// placeholders returns n placeholders numbered from first, separated by
// commas ("$3, $4, $5"): the values of a row, or of several rows in a row,
// of a statement written for a fixed number of arguments.
func placeholders(first, n int) string {
	var b strings.Builder
	b.Grow(n * 5)
	for i := range n {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteByte('$')
		b.WriteString(strconv.Itoa(first + i))
	}
	return b.String()
}

// rowsOf returns n rows of width values each, numbered in order: the
// VALUES of a statement that inserts or applies n rows at once.
func rowsOf(n, width int) string {
	var b strings.Builder
	for i := range n {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString("(" + placeholders(i*width+1, width) + ")")
	}
	return b.String()
}
