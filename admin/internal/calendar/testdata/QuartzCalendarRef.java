import java.nio.file.*;
import java.text.SimpleDateFormat;
import java.time.*;
import java.util.*;
import org.quartz.impl.calendar.*;
import org.quartz.impl.triggers.CronTriggerImpl;

// The reference for Carillon's calendars: real Quartz 2.3.2 calendar classes.
// Reads case lines and prints each followed by "|" and Quartz's answer:
//
//   fire|id|calendars|zone|cron|start|count  -> the next count fire times of a CronTrigger
//       on cron (in zone) strictly after start, each the trigger's getFireTimeAfter the previous
//       one, skipping the times the calendars exclude (as CronTriggerImpl.triggered does); "NONE"
//       when there are no more.
//   incl|id|calendars|zone|instants          -> for each comma-separated instant, 1 when the
//       calendars include it (Calendar.isTimeIncluded), 0 when they exclude it.
//
// calendars is ";"-separated, each chained as the base calendar of the next (so an instant any
// of them excludes is excluded), each "KIND:ARGS" in zone:
//   HOLIDAY:2026-12-25,2027-01-01   ANNUAL:12-25,01-01   WEEKLY:SAT,SUN
//   DAILY:09:00:00:000-17:30:00:000 (DAILY! inverts)   CRON:* * 0-7 ? * *
public class QuartzCalendarRef {
  static final String[] DAYS = {"SUN", "MON", "TUE", "WED", "THU", "FRI", "SAT"};
  static final int BOUND = 1_000_000;

  public static void main(String[] args) throws Exception {
    for (String line : Files.readAllLines(Paths.get(args[0]))) {
      if (line.isBlank() || line.startsWith("#")) continue;
      String[] p = line.split("\\|");
      TimeZone tz = TimeZone.getTimeZone(p[3]);
      org.quartz.Calendar cal = calendars(p[2], tz);
      List<String> out = new ArrayList<>();
      if (p[0].equals("fire")) {
        CronTriggerImpl tr = new CronTriggerImpl();
        tr.setCronExpression(p[4]);
        tr.setTimeZone(tz);
        tr.setStartTime(new Date(0));
        Date d = Date.from(OffsetDateTime.parse(p[5]).toInstant());
        for (int i = 0; i < Integer.parseInt(p[6]); i++) {
          d = tr.getFireTimeAfter(d);
          for (int n = 0; d != null && !cal.isTimeIncluded(d.getTime()); n++) {
            if (n == BOUND) { d = null; break; }
            d = tr.getFireTimeAfter(d);
          }
          if (d == null) { out.add("NONE"); break; }
          out.add(format(d, tz));
        }
      } else {
        for (String s : p[4].split(",")) {
          out.add(cal.isTimeIncluded(OffsetDateTime.parse(s).toInstant().toEpochMilli()) ? "1" : "0");
        }
      }
      System.out.println(line + "|" + String.join(",", out));
    }
  }

  static String format(Date d, TimeZone tz) {
    SimpleDateFormat f = new SimpleDateFormat("yyyy-MM-dd'T'HH:mm:ssXXX");
    f.setTimeZone(tz);
    return f.format(d);
  }

  static org.quartz.Calendar calendars(String spec, TimeZone tz) throws Exception {
    org.quartz.Calendar base = null;
    for (String c : spec.split(";")) {
      String kind = c.substring(0, c.indexOf(':')), a = c.substring(c.indexOf(':') + 1);
      org.quartz.impl.calendar.BaseCalendar cal;
      switch (kind) {
        case "HOLIDAY": {
          HolidayCalendar h = new HolidayCalendar(base, tz);
          for (String s : a.split(",")) {
            LocalDate ld = LocalDate.parse(s);
            Calendar jc = Calendar.getInstance(tz);
            jc.clear();
            jc.set(ld.getYear(), ld.getMonthValue() - 1, ld.getDayOfMonth(), 0, 0, 0);
            h.addExcludedDate(jc.getTime());
          }
          cal = h;
          break;
        }
        case "ANNUAL": {
          AnnualCalendar an = new AnnualCalendar(base, tz);
          for (String s : a.split(",")) {
            Calendar jc = Calendar.getInstance(tz);
            jc.clear();
            jc.set(2000, Integer.parseInt(s.substring(0, 2)) - 1, Integer.parseInt(s.substring(3, 5)));
            an.setDayExcluded(jc, true);
          }
          cal = an;
          break;
        }
        case "WEEKLY": {
          WeeklyCalendar w = new WeeklyCalendar(base, tz);
          List<String> ex = Arrays.asList(a.split(","));
          for (int i = 0; i < 7; i++) w.setDayExcluded(i + 1, ex.contains(DAYS[i]));
          cal = w;
          break;
        }
        case "DAILY":
        case "DAILY!": {
          String[] r = a.split("-");
          DailyCalendar dc = new DailyCalendar(base, r[0], r[1]);
          dc.setTimeZone(tz);
          dc.setInvertTimeRange(kind.equals("DAILY!"));
          cal = dc;
          break;
        }
        case "CRON":
          cal = new CronCalendar(base, a, tz);
          break;
        default:
          throw new IllegalArgumentException("unknown calendar kind " + kind);
      }
      base = cal;
    }
    return base;
  }
}
