// Package calendar holds calendars: sets of excluded instants that a job's
// schedule skips, with the semantics of Quartz 2.3.2's calendar classes
// (org.quartz.impl.calendar), so a calendar carried over from Quartz
// excludes the same instants:
//
//   - HOLIDAY (HolidayCalendar) excludes whole days, given as dates.
//   - ANNUAL (AnnualCalendar) excludes a month and day every year.
//   - WEEKLY (WeeklyCalendar) excludes days of the week.
//   - DAILY (DailyCalendar) excludes a time-of-day range, both ends
//     included, or, inverted, every time outside it. As in Quartz, a
//     range that is not inverted also excludes the first and the last
//     millisecond of every day (00:00:00.000 and 23:59:59.999): Quartz
//     includes only the instants strictly between the day's start and the
//     range, and strictly between the range and the day's end.
//   - CRON (CronCalendar) excludes every second that a Quartz cron
//     expression matches.
//
// Days and times of day are the calendar's time zone's. A job's calendars
// form a Set: an instant any of them excludes is excluded, as in a chain of
// Quartz base calendars.
//
// The golden test compares against fire times computed by real Quartz; see
// testdata/README.
package calendar
