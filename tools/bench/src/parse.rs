//! Parsers for the output of the external benchmarks bench-wrap runs:
//! rt-tests' hackbench and `perf bench sched pipe`. Each returns the
//! numbers it found; a missing headline number is an error, because a run
//! whose result cannot be read must not be counted as a run.

use anyhow::{bail, Result};

#[derive(Debug, Default, PartialEq)]
pub struct Hackbench {
    /// "Time: X" in seconds: the benchmark's own result.
    pub time_s: f64,
    /// "process" or "threaded" (from "Running in ... mode").
    pub mode: Option<String>,
    pub groups: Option<u64>,
    pub tasks: Option<u64>,
    /// Messages each sender passes ("Each sender will pass N messages").
    pub messages: Option<u64>,
}

/// Number right after `prefix` on any line (leading spaces ignored).
fn after<'a>(text: &'a str, prefix: &str) -> Option<&'a str> {
    text.lines()
        .map(str::trim_start)
        .find_map(|l| l.strip_prefix(prefix))
        .map(str::trim)
}

fn first_word<T: std::str::FromStr>(s: Option<&str>) -> Option<T> {
    s?.split_whitespace().next()?.parse().ok()
}

/// Word following `word` in `line`, parsed.
fn word_after<T: std::str::FromStr>(line: &str, word: &str) -> Option<T> {
    let mut it = line.split_whitespace();
    while let Some(w) = it.next() {
        if w == word {
            return it
                .next()?
                .trim_matches(|c| c == '(' || c == ')')
                .parse()
                .ok();
        }
    }
    None
}

pub fn parse_hackbench(out: &str) -> Result<Hackbench> {
    let Some(time_s) = first_word::<f64>(after(out, "Time:")) else {
        bail!("no 'Time: X' line in hackbench output");
    };
    let mut h = Hackbench {
        time_s,
        ..Default::default()
    };
    if let Some(l) = out.lines().find(|l| l.starts_with("Running in ")) {
        h.mode = word_after(l, "in");
        h.groups = word_after(l, "with");
        h.tasks = word_after(l, "(==");
    }
    if let Some(l) = out.lines().find(|l| l.starts_with("Each sender")) {
        h.messages = word_after(l, "pass");
    }
    Ok(h)
}

#[derive(Debug, Default, PartialEq)]
pub struct PerfPipe {
    /// "Total time: X [sec]".
    pub total_time_s: f64,
    /// "X usecs/op": one op is one round trip (write + the reply).
    pub usecs_per_op: f64,
    /// "X ops/sec".
    pub ops_per_s: f64,
    /// "# Executed N pipe operations".
    pub ops: Option<u64>,
    /// "processes" or "threads" (-T).
    pub between: Option<String>,
}

pub fn parse_perf_pipe(out: &str) -> Result<PerfPipe> {
    let Some(total_time_s) = first_word::<f64>(after(out, "Total time:")) else {
        bail!("no 'Total time: X [sec]' line in perf bench sched pipe output");
    };
    // The per-op lines are "<number> <unit>"; find them by unit.
    let by_unit = |unit: &str| {
        out.lines().find_map(|l| {
            let mut w = l.split_whitespace();
            let (v, u) = (w.next()?, w.next()?);
            (u == unit).then(|| v.parse::<f64>().ok()).flatten()
        })
    };
    let (Some(usecs_per_op), Some(ops_per_s)) = (by_unit("usecs/op"), by_unit("ops/sec")) else {
        bail!("no 'usecs/op' / 'ops/sec' lines in perf bench sched pipe output");
    };
    let executed = out
        .lines()
        .find(|l| l.trim_start_matches(['#', ' ']).starts_with("Executed"));
    Ok(PerfPipe {
        total_time_s,
        usecs_per_op,
        ops_per_s,
        ops: executed.and_then(|l| word_after(l, "Executed")),
        between: executed.and_then(|l| word_after(l, "two")),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    // Recorded from rt-tests 2.5 hackbench on Debian 12.
    const HACKBENCH_PROCESS: &str =
        "Running in process mode with 2 groups using 40 file descriptors each (== 80 tasks)
Each sender will pass 100 messages of 100 bytes
Time: 0.187
";
    const HACKBENCH_THREADS: &str =
        "Running in threaded mode with 1 groups using 40 file descriptors each (== 40 tasks)
Each sender will pass 5 messages of 100 bytes
Time: 0.009
";
    // Recorded from perf 6.1 (Debian linux-perf).
    const PERF_PIPE: &str = "# Running 'sched/pipe' benchmark:
# Executed 2000 pipe operations between two processes

     Total time: 0.030 [sec]

      15.242500 usecs/op
          65606 ops/sec
";
    const PERF_PIPE_T: &str = "# Running 'sched/pipe' benchmark:
# Executed 1000 pipe operations between two threads

     Total time: 0.007 [sec]

       7.143000 usecs/op
         139997 ops/sec
";

    #[test]
    fn hackbench() {
        let h = parse_hackbench(HACKBENCH_PROCESS).unwrap();
        assert_eq!(
            h,
            Hackbench {
                time_s: 0.187,
                mode: Some("process".into()),
                groups: Some(2),
                tasks: Some(80),
                messages: Some(100),
            }
        );
        let t = parse_hackbench(HACKBENCH_THREADS).unwrap();
        assert_eq!(t.mode.as_deref(), Some("threaded"));
        assert_eq!(t.time_s, 0.009);
        assert_eq!(t.tasks, Some(40));
        // Only the headline is required.
        assert_eq!(parse_hackbench("Time: 1.5\n").unwrap().time_s, 1.5);
        assert!(parse_hackbench("hackbench: error\n").is_err());
        assert!(parse_hackbench("Time: abc\n").is_err());
    }

    #[test]
    fn perf_pipe() {
        let p = parse_perf_pipe(PERF_PIPE).unwrap();
        assert_eq!(
            p,
            PerfPipe {
                total_time_s: 0.030,
                usecs_per_op: 15.2425,
                ops_per_s: 65606.0,
                ops: Some(2000),
                between: Some("processes".into()),
            }
        );
        let t = parse_perf_pipe(PERF_PIPE_T).unwrap();
        assert_eq!(t.between.as_deref(), Some("threads"));
        assert_eq!(t.ops, Some(1000));
        assert!(parse_perf_pipe("     Total time: 0.030 [sec]\n").is_err());
        assert!(parse_perf_pipe("WARNING: perf not found for kernel 6.12\n").is_err());
    }
}
