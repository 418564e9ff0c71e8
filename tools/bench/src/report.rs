//! The one output shape every benchmark shares:
//!
//! ```json
//! {"bench": "...", "params": {...}, "counts": {...}, "metrics": {...},
//!  "system": {"kernel": "...", "sched_ext": "disabled", "ops": null}}
//! ```
//!
//! `counts` are integers (events), `metrics` are floats whose names carry the
//! unit (`median_us`, `time_s`, `ops_per_s`, `share_pct`). A metric that
//! could not be measured is `null`; `notes` says why. Keys keep insertion
//! order so the JSON reads like the human summary.

use serde::ser::{Serialize, SerializeMap, Serializer};
use serde_json::Value;

/// An insertion-ordered JSON object (serde_json's own Map sorts keys unless
/// a feature that pulls in more crates is enabled).
#[derive(Default, Debug, Clone)]
pub struct Fields(pub Vec<(String, Value)>);

impl Fields {
    pub fn set(&mut self, k: &str, v: impl Into<Value>) {
        let v = v.into();
        match self.0.iter_mut().find(|(key, _)| key == k) {
            Some(slot) => slot.1 = v,
            None => self.0.push((k.to_string(), v)),
        }
    }
    pub fn get(&self, k: &str) -> Option<&Value> {
        self.0.iter().find(|(key, _)| key == k).map(|(_, v)| v)
    }
}

impl Serialize for Fields {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(Some(self.0.len()))?;
        for (k, v) in &self.0 {
            m.serialize_entry(k, v)?;
        }
        m.end()
    }
}

/// Round to 3 decimals (ns resolution for _us values) and map NaN to null.
pub fn num(x: f64) -> Value {
    if x.is_finite() {
        let r = (x * 1000.0).round() / 1000.0;
        serde_json::Number::from_f64(r).map_or(Value::Null, Value::Number)
    } else {
        Value::Null
    }
}

#[derive(Debug, Clone)]
pub struct Report {
    pub bench: String,
    pub params: Fields,
    pub counts: Fields,
    pub metrics: Fields,
    pub notes: Vec<String>,
}

impl Report {
    pub fn new(bench: &str) -> Self {
        Report {
            bench: bench.to_string(),
            params: Fields::default(),
            counts: Fields::default(),
            metrics: Fields::default(),
            notes: Vec::new(),
        }
    }
    pub fn param(&mut self, k: &str, v: impl Into<Value>) -> &mut Self {
        self.params.set(k, v);
        self
    }
    pub fn count(&mut self, k: &str, v: u64) -> &mut Self {
        self.counts.set(k, v);
        self
    }
    pub fn metric(&mut self, k: &str, v: f64) -> &mut Self {
        self.metrics.set(k, num(v));
        self
    }
    pub fn metric_opt(&mut self, k: &str, v: Option<f64>) -> &mut Self {
        self.metrics.set(k, v.map_or(Value::Null, num));
        self
    }
    pub fn note(&mut self, s: impl Into<String>) -> &mut Self {
        self.notes.push(s.into());
        self
    }

    /// The JSON object as one line, keys in insertion order.
    pub fn to_json(&self) -> String {
        #[derive(serde::Serialize)]
        struct Out<'a> {
            bench: &'a str,
            params: &'a Fields,
            counts: &'a Fields,
            metrics: &'a Fields,
            #[serde(skip_serializing_if = "<[String]>::is_empty")]
            notes: &'a [String],
            system: Fields,
        }
        serde_json::to_string(&Out {
            bench: &self.bench,
            params: &self.params,
            counts: &self.counts,
            metrics: &self.metrics,
            notes: &self.notes,
            system: system_fields(),
        })
        .expect("serialising plain JSON values cannot fail")
    }

    /// Human-readable lines (no trailing newline).
    pub fn human(&self) -> String {
        fn line(label: &str, f: &Fields) -> String {
            let kv: Vec<String> =
                f.0.iter()
                    .map(|(k, v)| match v {
                        Value::String(s) => format!("{k}={s}"),
                        Value::Null => format!("{k}=n/a"),
                        v => format!("{k}={v}"),
                    })
                    .collect();
            format!("  {label:<8} {}", kv.join(" "))
        }
        let mut out = vec![format!("{}:", self.bench)];
        out.push(line("params", &self.params));
        out.push(line("counts", &self.counts));
        out.push(line("metrics", &self.metrics));
        for n in &self.notes {
            out.push(format!("  note     {n}"));
        }
        out.join("\n")
    }

    /// With `json`: the summary on stderr and exactly one JSON object on
    /// stdout (what wakeplace-ab reads). Without: the summary on stdout.
    pub fn emit(&self, json: bool) {
        if json {
            eprintln!("{}", self.human());
            println!("{}", self.to_json());
        } else {
            println!("{}", self.human());
        }
    }
}

/// Which scheduler the kernel was running when the benchmark ran: a result
/// that says "sched_ext: disabled" came from the kernel's own (EEVDF).
fn system_fields() -> Fields {
    let mut f = Fields::default();
    f.set("kernel", crate::sys::kernel_release());
    f.set("cpus_allowed", crate::sys::allowed_cpus().len() as u64);
    let rd = |p: &str| {
        std::fs::read_to_string(p)
            .ok()
            .map(|s| s.trim().to_string())
    };
    f.set(
        "sched_ext",
        rd("/sys/kernel/sched_ext/state").map_or(Value::Null, Value::String),
    );
    f.set(
        "ops",
        rd("/sys/kernel/sched_ext/root/ops")
            .filter(|s| !s.is_empty())
            .map_or(Value::Null, Value::String),
    );
    f
}

/// Parse "--duration"-style seconds (fractions allowed, > 0).
pub fn parse_secs(s: &str) -> Result<f64, String> {
    let v: f64 = s.parse().map_err(|_| format!("not a number: {s}"))?;
    if !(v > 0.0 && v.is_finite()) {
        return Err(format!("must be > 0: {s}"));
    }
    Ok(v)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_shape_and_order() {
        let mut r = Report::new("x");
        r.param("workers", 2u64).param("cpus", "1-3");
        r.count("wakeups", 10);
        r.metric("median_us", 1.23456).metric("bad_us", f64::NAN);
        r.metric_opt("none_pct", None);
        let s = r.to_json();
        assert!(s.starts_with(r#"{"bench":"x","params":{"workers":2,"cpus":"1-3"},"counts":{"wakeups":10},"metrics":{"median_us":1.235,"bad_us":null,"none_pct":null},"system":"#), "{s}");
        let v: Value = serde_json::from_str(&s).unwrap();
        assert_eq!(v["metrics"]["median_us"], 1.235);
        assert!(r.human().contains("bad_us=n/a"));
    }

    #[test]
    fn secs() {
        assert_eq!(parse_secs("1.5"), Ok(1.5));
        assert!(parse_secs("0").is_err());
        assert!(parse_secs("x").is_err());
    }
}
