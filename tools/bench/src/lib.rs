//! Shared code of the wakeplace benchmarks and the A/B runner.
//!
//! Every benchmark binary (delayed-stall, handoff, pinned-wake, cs-share,
//! bench-wrap) prints a human summary, and with `--json` exactly one JSON
//! object on stdout in the shape of [`report::Report`]. They report; they do
//! not judge: pass/fail belongs to whoever reads the numbers.

pub mod ab;
pub mod parse;
pub mod render;
pub mod report;
pub mod stats;
pub mod sys;
