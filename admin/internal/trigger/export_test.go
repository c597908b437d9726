package trigger

// Backlog returns how many scheduled fires d holds unreached for their
// calls (backlog.go).
func (d *Dispatcher) Backlog() int { return d.backlog.len() }
