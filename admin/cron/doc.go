// Package cron parses Quartz cron expressions and computes their fire
// times exactly as Quartz 2.3.2 (org.quartz.CronExpression) does, so jobs
// imported from xxl-job or Quartz keep their schedules to the second.
//
//	s, err := cron.Parse("0 15 10 ? * 6#3", loc) // 10:15 on the third Friday
//	next := s.Next(time.Now())                    // zero when there are no more
//
// # Grammar
//
// An expression has six or seven fields separated by spaces or tabs:
//
//	field         values            special characters
//	second        0-59              , - * /
//	minute        0-59              , - * /
//	hour          0-23              , - * /
//	day-of-month  1-31              , - * / ? L W
//	month         1-12 or JAN-DEC   , - * /
//	day-of-week   1-7 or SUN-SAT    , - * / ? L #
//	year          1970-2099         , - * /     (optional; default *)
//
// Day-of-week 1 is Sunday and 7 is Saturday; 0 is an error. Names and the
// letters L and W are case-insensitive.
//
//   - "*" is every value; "a,b" a list; "a-b" a range. A range whose end is
//     below its start wraps around: hours "22-2" are 22, 23, 0, 1, 2;
//     "FRI-MON" is Friday to Monday; "NOV-FEB" November to February.
//   - "a/n" is a, a+n, a+2n ... up to the field's maximum; "*/n" and "/n"
//     start at the minimum; "a-b/n" steps through a range. After "*" or a
//     single value, n may not exceed the field's size (59, 23, 31, 12, 7).
//     "7/6" in the month field is July only: the step does not wrap.
//   - "?" means "no specific value". Exactly one of day-of-month and
//     day-of-week must be "?": "0 0 12 * * ?" is valid, "0 0 12 * * *" and
//     "0 0 12 1 * MON" are not.
//   - Day-of-month "L" is the last day of the month, "L-n" n days before
//     it (n <= 30), "nW" the weekday (Monday to Friday) nearest day n, "LW"
//     the last weekday and "L-nW" the weekday nearest L-n. W never leaves
//     the month: "1W" on a Saturday the 1st is Monday the 3rd.
//   - Day-of-week "nL" is the last day n of the month ("6L": the last
//     Friday), "n#k" the k-th day n (k 1-5; "6#3": the third Friday; months
//     without a fifth one are skipped), and "L" alone is Saturday.
//   - L, W and # forms, and "?", stand alone in their field: they cannot be
//     part of a list.
//
// # Time zones and daylight saving time
//
// Fire times are wall-clock times in the schedule's location, and Next
// resolves the ones that a DST change makes missing or repeated as Quartz
// does (it runs on java.util.GregorianCalendar):
//
//   - A time that does not exist (in a spring-forward gap) is skipped: with
//     New York's 02:00 to 03:00 jump, "0 30 2 * * ?" does not fire that day,
//     and "0 */30 * * * ?" goes from 01:30 to 03:00.
//   - A time that occurs twice (in a fall-back overlap) fires once, at its
//     second occurrence, in standard time: "0 30 1 * * ?" fires at
//     01:30-05:00 in New York, not at 01:30-04:00.
//   - Schedules that fire several times a day also skip the first pass of
//     the repeated hour: "0 */30 * * * ?" fires 00:30-04:00, then
//     01:00-05:00, 01:30-05:00, 02:00-05:00; 01:00-04:00 and 01:30-04:00
//     are skipped.
//   - Midnight is no exception: on a day that starts in a gap
//     (America/Sao_Paulo until 2019, America/Havana) "0 0 0 * * ?" does not
//     fire.
//
// # Limits and differences from Quartz
//
// Next returns the zero time when there is no fire time left: the year
// field has passed, or no date can ever match ("0 0 0 30 2 ?"). Like Quartz
// it searches no further than the current year plus 100 (the year field's
// "*" ends there too), so it always terminates, in microseconds.
//
// Fire times are whole seconds. Next(t) returns the first one strictly
// after t; sub-second parts of t are ignored apart from that. (Quartz
// compares the candidate days of W expressions with t to the millisecond
// against an unset millisecond field, which makes its answer for such a t
// depend on the wall clock; Next treats that field as zero.)
//
// Parse is stricter than Quartz, which silently ignores or misreads parts
// of some expressions. Parse rejects them instead:
//   - more than seven fields (Quartz ignores the extra ones);
//   - text after a complete value, such as "JANUARY", "MON-FRI/2",
//     "JAN-MAR/2", "6LX", "15WX", "5X", "?X", "*X" (Quartz drops it);
//   - empty list elements ("1,,2", ",5");
//   - increments of 0 or with a sign ("*/0", "5/0", "*/+5");
//   - out-of-range values that Quartz does not check: "0#1", "9#1", "0W",
//     a range end below the minimum ("5-0"), years outside 1970-2099;
//   - "?", W, L and # forms inside lists ("15W,20", "6#3,2", "?,5"), whose
//     other elements Quartz ignores, and "LW" or "L-n" in day-of-week
//     (Quartz reads both as Saturday);
//   - "0W" and "L-nW" with n > 27, on which Quartz's search never returns
//     (L-28 falls before the 1st in February).
//
// The files testdata/strict.cases and strict.golden list these cases with
// Quartz's answers, and the tests check that Parse rejects each one.
//
// Every error is a *ParseError naming the field, the token and the rule.
package cron
