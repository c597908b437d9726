package cron

import "fmt"

// ParseError describes why [Parse] rejected an expression: which field,
// which token in it, and which rule the token breaks.
type ParseError struct {
	// Field is the name of the field that holds the bad token: "second",
	// "minute", "hour", "day-of-month", "month", "day-of-week" or "year".
	// It is empty when the error concerns the expression as a whole, such
	// as a wrong number of fields.
	Field string
	// Token is the offending text as the user wrote it: one element of a
	// comma-separated list, a whole field, or the whole expression when
	// Field is empty.
	Token string
	// Reason states the rule the token breaks, for example
	// "values must be between 1 and 7".
	Reason string
}

// Error returns the message, for example
// `cron: day-of-week "0": values must be between 1 and 7`.
func (e *ParseError) Error() string {
	if e.Field == "" {
		return fmt.Sprintf("cron: %q: %s", e.Token, e.Reason)
	}
	return fmt.Sprintf("cron: %s %q: %s", e.Field, e.Token, e.Reason)
}
