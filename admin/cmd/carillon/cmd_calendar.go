package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	carillonv1 "github.com/carillonhq/carillon/proto/carillon/v1"
)

func calendarCmd(e *cmdEnv) *cobra.Command {
	return noun("calendar", "Calendars: instants the schedules of the jobs using them skip (Quartz's calendars)",
		calendarListCmd(e), calendarGetCmd(e), calendarCreateCmd(e), calendarUpdateCmd(e), calendarDeleteCmd(e))
}

// calendarFileHelp says what a calendar file holds.
const calendarFileHelp = `The file is YAML (or JSON): a Calendar message in protobuf's JSON mapping,
field names as in the .proto or in lowerCamelCase, the kind by name, and
only the kind's fields:

  name: holidays-2026
  kind: CALENDAR_KIND_HOLIDAY      # whole days
  time_zone: Europe/Berlin         # default: the admin's zone
  excluded_dates: [2026-12-24, 2026-12-25, 2026-12-31]

  kind: CALENDAR_KIND_ANNUAL       # a day every year
  excluded_days: ["12-25", "01-01"]

  kind: CALENDAR_KIND_WEEKLY       # days of the week
  excluded_weekdays: [SAT, SUN]

  kind: CALENDAR_KIND_DAILY        # a time of day range, both ends excluded
  range_start: "09:00"             # HH:MM[:SS[.mmm]]
  range_end: "17:30"
  invert: false                    # true: exclude every time outside it

  kind: CALENDAR_KIND_CRON         # every second a Quartz cron matches
  cron: "* * 0-6 ? * MON-FRI"`

var calendarHeader = []string{"ID", "NAME", "KIND", "ZONE", "EXCLUDES"}

func calendarRow(c *carillonv1.Calendar) []string {
	return []string{fmtID(c.Id), c.Name, enumName(c.Kind, "CALENDAR_KIND_"), orDash(c.TimeZone), calendarExcludes(c)}
}

// calendarExcludes says what c excludes, in a line.
func calendarExcludes(c *carillonv1.Calendar) string {
	switch c.Kind {
	case carillonv1.CalendarKind_CALENDAR_KIND_HOLIDAY:
		return strings.Join(c.ExcludedDates, ", ")
	case carillonv1.CalendarKind_CALENDAR_KIND_ANNUAL:
		return "every " + strings.Join(c.ExcludedDays, ", ")
	case carillonv1.CalendarKind_CALENDAR_KIND_WEEKLY:
		return strings.Join(c.ExcludedWeekdays, ", ")
	case carillonv1.CalendarKind_CALENDAR_KIND_DAILY:
		if c.Invert {
			return fmt.Sprintf("all but %s-%s", c.RangeStart, c.RangeEnd)
		}
		return fmt.Sprintf("%s-%s", c.RangeStart, c.RangeEnd)
	case carillonv1.CalendarKind_CALENDAR_KIND_CRON:
		return c.Cron
	}
	return "-"
}

func calendarFields(c *carillonv1.Calendar) [][2]string {
	return [][2]string{
		{"ID", fmtID(c.Id)}, {"Name", c.Name}, {"Description", orDash(c.Description)}, {"Kind", enumName(c.Kind, "CALENDAR_KIND_")},
		{"Time zone", orDash(c.TimeZone)}, {"Excludes", calendarExcludes(c)},
		{"Created", fmtTime(c.CreatedAt)}, {"Updated", fmtTime(c.UpdatedAt)},
	}
}

func calendarListCmd(e *cmdEnv) *cobra.Command {
	cmd := &cobra.Command{Use: "list", Short: "List calendars", Args: exactArgs(0, "no arguments")}
	return e.leaf(cmd, func(ctx context.Context, _ []string) error {
		req := &carillonv1.ListCalendarsRequest{PageSize: 500}
		all := &carillonv1.ListCalendarsResponse{}
		for {
			res, err := e.clients().Calendars.ListCalendars(ctx, req)
			if err != nil {
				return err
			}
			all.Calendars = append(all.Calendars, res.Calendars...)
			if req.PageToken = res.NextPageToken; req.PageToken == "" {
				break
			}
		}
		var rows [][]string
		for _, c := range all.Calendars {
			rows = append(rows, calendarRow(c))
		}
		return e.print(all, calendarHeader, rows)
	})
}

func calendarGetCmd(e *cmdEnv) *cobra.Command {
	return e.idCmd(&cobra.Command{Use: "get ID", Short: "Show a calendar"}, "calendar", func(ctx context.Context, id int64) error {
		res, err := e.clients().Calendars.GetCalendar(ctx, &carillonv1.GetCalendarRequest{Id: id})
		if err != nil {
			return err
		}
		return e.printFields(res, calendarFields(res.Calendar))
	})
}

func calendarCreateCmd(e *cmdEnv) *cobra.Command {
	cmd := &cobra.Command{
		Use:     "create -f FILE",
		Short:   "Create a calendar from a YAML file (ADMIN)",
		Long:    "Create a calendar from a YAML file. Jobs use it through --calendar ID.\n\n" + calendarFileHelp,
		Example: "  carillon calendar create -f holidays.yaml\n  carillon job update 7 --calendar 1,2",
		Args:    exactArgs(0, "flags only: carillon calendar create -f FILE"),
	}
	file := cmd.Flags().StringP("file", "f", "", "the calendar's YAML (or JSON) file")
	_ = cobra.MarkFlagFilename(cmd.Flags(), "file", "yaml", "yml", "json")
	return e.leaf(cmd, func(ctx context.Context, _ []string) error {
		c := &carillonv1.Calendar{}
		if err := e.readMessageFile(*file, "calendar", c); err != nil {
			return err
		}
		c.Id = 0
		res, err := e.clients().Calendars.CreateCalendar(ctx, &carillonv1.CreateCalendarRequest{Calendar: c})
		if err != nil {
			return err
		}
		return e.printFields(res, calendarFields(res.Calendar))
	})
}

func calendarUpdateCmd(e *cmdEnv) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "update [ID] -f FILE",
		Short: "Replace a calendar with a YAML file's (ADMIN)",
		Long: "Replace a calendar with the file's; the ID is the argument's or the file's id.\n" +
			"The started jobs using it get their next fire anew.\n\n" + calendarFileHelp,
		Example: "  carillon calendar update 1 -f holidays.yaml",
		Args:    cobra.MaximumNArgs(1),
	}
	file := cmd.Flags().StringP("file", "f", "", "the calendar's YAML (or JSON) file")
	_ = cobra.MarkFlagFilename(cmd.Flags(), "file", "yaml", "yml", "json")
	return e.leaf(cmd, func(ctx context.Context, args []string) error {
		c := &carillonv1.Calendar{}
		if err := e.readMessageFile(*file, "calendar", c); err != nil {
			return err
		}
		if len(args) == 1 {
			id, err := parseID("calendar", args[0])
			if err != nil {
				return err
			}
			c.Id = id
		}
		if c.Id == 0 {
			return usagef("calendar update: give the calendar's id, as an argument or as id in the file")
		}
		res, err := e.clients().Calendars.UpdateCalendar(ctx, &carillonv1.UpdateCalendarRequest{Calendar: c})
		if err != nil {
			return err
		}
		return e.printFields(res, calendarFields(res.Calendar))
	})
}

func calendarDeleteCmd(e *cmdEnv) *cobra.Command {
	return e.idCmd(&cobra.Command{Use: "delete ID", Short: "Delete a calendar no job uses (ADMIN)"}, "calendar", func(ctx context.Context, id int64) error {
		res, err := e.clients().Calendars.DeleteCalendar(ctx, &carillonv1.DeleteCalendarRequest{Id: id})
		if err != nil {
			return err
		}
		return e.printDone(res, "deleted calendar %d", id)
	})
}
