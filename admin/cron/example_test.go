package cron_test

import (
	"fmt"
	"time"

	"github.com/carillonhq/carillon/admin/cron"
)

func Example() {
	ny, err := time.LoadLocation("America/New_York")
	if err != nil {
		panic(err)
	}
	// 10:15 on the third Friday of every month.
	s, err := cron.Parse("0 15 10 ? * 6#3", ny)
	if err != nil {
		panic(err)
	}
	t := time.Date(2026, 11, 22, 8, 0, 0, 0, ny)
	for range 3 {
		t = s.Next(t)
		fmt.Println(t)
	}
	// Output:
	// 2026-12-18 10:15:00 -0500 EST
	// 2027-01-15 10:15:00 -0500 EST
	// 2027-02-19 10:15:00 -0500 EST
}

func ExampleParse() {
	_, err := cron.Parse("0 0 12 ? * 0", nil)
	fmt.Println(err)
	// Output:
	// cron: day-of-week "0": values must be between 1 and 7
}

func ExampleSchedule_Next() {
	// The schedule ends: there is no fire time after 2030.
	s, err := cron.Parse("0 0 0 1 1 ? 2030", time.UTC)
	if err != nil {
		panic(err)
	}
	t := s.Next(time.Date(2026, 11, 22, 0, 0, 0, 0, time.UTC))
	fmt.Println(t)
	fmt.Println(s.Next(t).IsZero())
	// Output:
	// 2030-01-01 00:00:00 +0000 UTC
	// true
}

func ExampleSchedule_Next_dst() {
	// Every 30 minutes across New York's fall-back: the repeated hour
	// fires once, in standard time, as in Quartz.
	ny, err := time.LoadLocation("America/New_York")
	if err != nil {
		panic(err)
	}
	s, err := cron.Parse("0 */30 * * * ?", ny)
	if err != nil {
		panic(err)
	}
	t := time.Date(2026, 11, 1, 0, 45, 0, 0, ny)
	for range 3 {
		t = s.Next(t)
		fmt.Println(t)
	}
	// Output:
	// 2026-11-01 01:00:00 -0500 EST
	// 2026-11-01 01:30:00 -0500 EST
	// 2026-11-01 02:00:00 -0500 EST
}
