// go-probe.go: Go's timers as a tl probe, speaking version 2 of tl's line
// protocol (README, "Writing a probe"). Build it once and run the binary:
//
//	go build -o go-probe go-probe.go
//	tlcollect --probe 'exec:./go-probe sleep'   (time.Sleep, the default)
//	tlcollect --probe 'exec:./go-probe after'   (<-time.After)
//
// or let go compile it each time: --probe 'exec:go run go-probe.go after'.
// It reads the plan once ("plan D1,D2,... COUNT GAP", nanoseconds), measures
// the delays in turn, each timer armed as soon as the previous one fired,
// timed with time.Now and time.Since (Go's monotonic clock), and writes its
// samples in batches (every 256 samples or 100 ms, and at the end). It
// exits when stdin closes.
package main

import (
	"bufio"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
)

func main() {
	mode := "sleep"
	if len(os.Args) > 1 {
		mode = os.Args[1]
	}
	out := bufio.NewWriterSize(os.Stdout, 1<<16)
	fail := func(why string) {
		out.WriteString("error " + why + "\n")
		out.Flush()
		os.Exit(1)
	}
	if mode != "sleep" && mode != "after" {
		fail("usage: go-probe [sleep|after]")
	}
	fmt.Fprintf(out, "hello 2\nfact go.version %s\nfact go.timer %s\n", runtime.Version(), mode)
	out.Flush()

	in := bufio.NewReader(os.Stdin)
	line, err := in.ReadString('\n')
	if err != nil {
		os.Exit(0) // tl closed stdin before the plan
	}
	f := strings.Fields(line)
	if len(f) != 4 || f[0] != "plan" {
		fail("expected a plan line")
	}
	var delays []time.Duration
	for _, d := range strings.Split(f[1], ",") {
		ns, err := strconv.ParseInt(d, 10, 64)
		if err != nil || ns < 0 {
			fail("bad delay in the plan")
		}
		delays = append(delays, time.Duration(ns))
	}
	count, err1 := strconv.ParseInt(f[2], 10, 64)
	gap, err2 := strconv.ParseInt(f[3], 10, 64)
	if err1 != nil || err2 != nil || count < 0 || gap < 0 {
		fail("bad count or gap in the plan")
	}

	// tl closes stdin to stop a run early: noticed between samples.
	var closed atomic.Bool
	done := make(chan struct{})
	go func() {
		for {
			if _, err := in.ReadString('\n'); err != nil {
				closed.Store(true)
				close(done)
				return
			}
		}
	}()

	total := count * int64(len(delays))
	inBatch := 0
	var batchStart time.Time
	for k := int64(0); (total == 0 || k < total) && !closed.Load(); k++ {
		d := delays[k%int64(len(delays))]
		t0 := time.Now()
		if mode == "sleep" {
			time.Sleep(d)
		} else {
			<-time.After(d)
		}
		ns := time.Since(t0).Nanoseconds()
		fmt.Fprintf(out, "sample %d\n", ns)
		if inBatch == 0 {
			batchStart = time.Now()
		}
		inBatch++
		if inBatch >= 256 || time.Since(batchStart) >= 100*time.Millisecond {
			out.Flush()
			inBatch = 0
		}
		if gap > 0 {
			time.Sleep(time.Duration(gap))
		}
	}
	out.Flush()
	<-done
}
