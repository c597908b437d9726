// Package sdk runs job handlers on behalf of a Carillon admin.
package sdk
