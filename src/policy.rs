// Policy families and variants: names, descriptions, sources, and the
// `--policy` syntax (presets and family=variant items, later items win).
// The numbering matches the enums in src/bpf/intf.h; variant 0 is stock.
use std::fmt;

use anyhow::{bail, Result};

pub struct Variant {
    pub name: &'static str,
    pub desc: &'static str,
}

pub struct Family {
    pub name: &'static str,
    pub what: &'static str,
    pub source: &'static str,
    pub variants: &'static [Variant],
}

pub const FAMILIES: &[Family] = &[
    Family {
        name: "delayed",
        what: "wakeup of a task that blocked while ineligible (DELAY_DEQUEUE) and is still queued",
        source: "seed 000: LKML report on ITMT + DELAY_DEQUEUE stalls (7950X)",
        variants: &[
            Variant {
                name: "requeue",
                desc: "stock: ttwu_runnable() requeues it on its old CPU, no CPU selection",
            },
            Variant {
                name: "migrate",
                desc: "Zijlstra, [PATCH v2 11/12] sched: Change ttwu_runnable() vs sched_delayed: \
                       dequeue it and go through CPU selection",
            },
            Variant {
                name: "migrate-if-busy",
                desc: "Galbraith, sched/fair: Dequeue sched_delayed tasks when waking to a busy \
                       CPU: select only if the old CPU runs something else and the task may move",
            },
            Variant {
                name: "off",
                desc: "NO_DELAY_DEQUEUE: never delayed; lag saved when the task blocks",
            },
        ],
    },
    Family {
        name: "sync",
        what: "WF_SYNC wakeup while the waker runs alone on its CPU",
        source: "seed 002: [PATCH] sched/fair: Let sync wakeups target the waker's core",
        variants: &[
            Variant {
                name: "sis",
                desc: "stock: select_idle_sibling() counts the waker's CPU as busy",
            },
            Variant {
                name: "waker-sibling",
                desc: "Reddy: the waker's core is an idle-core candidate (wakee on its sibling); \
                       no-op without an idle core, with SMT off, or when prev is idle",
            },
            Variant {
                name: "waker-cpu",
                desc:
                    "Kaushik v3: return the waker's CPU from the wake-affine branch, SMT off only",
            },
            Variant {
                name: "prev-sibling",
                desc:
                    "Prateek: with no idle core, an idle sibling of prev, else stack on the waker",
            },
        ],
    },
    Family {
        name: "asym",
        what: "preferred-core (ITMT) priorities in balancing",
        source: "seed 000: rankings differ among CPUs of equal highest_perf",
        variants: &[
            Variant {
                name: "rank",
                desc: "stock ITMT: priority = preferred-core ranking; higher-priority idle CPUs \
                       pull work (asym packing, nohz kick)",
            },
            Variant {
                name: "perf",
                desc: "priority = highest_perf: CPUs of equal performance are equal whatever \
                       their ranking",
            },
            Variant {
                name: "off",
                desc: "sched_itmt_enabled=0: no priorities",
            },
        ],
    },
    Family {
        name: "preempt",
        what: "when a wakee that should preempt the running task gets the CPU",
        source: "seed 004: Re: [PATCH] sched: Further restrict the preemption modes (kworkers)",
        variants: &[
            Variant {
                name: "lazy",
                desc: "stock PREEMPT_LAZY: at the running task's next tick",
            },
            Variant {
                name: "full",
                desc: "PREEMPT_FULL: at once",
            },
            Variant {
                name: "pinned",
                desc: "at once for wakees that can run on one CPU only (per-CPU kworkers), \
                       lazy otherwise",
            },
        ],
    },
    Family {
        name: "coresched",
        what: "core scheduling (cookies): which SMT sibling's task runs, and wakeup placement",
        source: "seed 003 (core scheduling, DL server starvation), beyond the thread",
        variants: &[
            Variant {
                name: "fifo",
                desc: "stock sched_ext: scx_prio_less() orders the core's candidates by \
                       core_sched_at (6.12) or runnable_at, running task last (7.x); idle CPUs are \
                       idle whatever their sibling runs",
            },
            Variant {
                name: "deadline",
                desc: "ops.core_sched_before() by virtual deadline in the core's virtual time \
                       (EEVDF across the SMT threads: shares follow weights)",
            },
            Variant {
                name: "cookie",
                desc: "deadline, and an idle CPU whose sibling runs another cookie is not idle \
                       for the wakee (fair.c's __select_idle_cpu() cookie match)",
            },
        ],
    },
];

/// Variant index of each family, in FAMILIES order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PolicySet(pub [u32; FAMILIES.len()]);

impl PolicySet {
    pub fn stock() -> Self {
        Self([0; FAMILIES.len()])
    }

    pub fn proposed() -> Self {
        let mut s = Self::stock();
        for item in [
            "delayed=migrate",
            "sync=waker-sibling",
            "asym=perf",
            "preempt=pinned",
        ] {
            s.apply_item(item).expect("built-in preset");
        }
        s
    }

    fn apply_item(&mut self, item: &str) -> Result<()> {
        let shown = item.escape_debug();
        let Some((fam, var)) = item.split_once('=') else {
            bail!(
                "unknown policy '{shown}'{}: use a preset ({}) or family=variant (families: {})",
                case_hint(item, PRESETS.iter().copied()),
                PRESETS.join(", "),
                FAMILIES
                    .iter()
                    .map(|f| f.name)
                    .collect::<Vec<_>>()
                    .join(", ")
            );
        };
        let (fam, var) = (fam.trim(), var.trim());
        let Some(fi) = FAMILIES.iter().position(|f| f.name == fam) else {
            bail!(
                "unknown policy family '{}' in '{shown}'{} (families: {})",
                fam.escape_debug(),
                case_hint(fam, FAMILIES.iter().map(|f| f.name)),
                FAMILIES
                    .iter()
                    .map(|f| f.name)
                    .collect::<Vec<_>>()
                    .join(", ")
            );
        };
        let f = &FAMILIES[fi];
        let Some(vi) = f.variants.iter().position(|v| v.name == var) else {
            bail!(
                "unknown variant '{}' for policy family '{fam}' in '{shown}'{} (variants: {})",
                var.escape_debug(),
                case_hint(var, f.variants.iter().map(|v| v.name)),
                f.variants
                    .iter()
                    .map(|v| v.name)
                    .collect::<Vec<_>>()
                    .join(", ")
            );
        };
        self.0[fi] = vi as u32;
        Ok(())
    }

    /// Parse `stock`, `proposed` and `family=variant` items separated by
    /// commas, applied left to right on top of stock.
    pub fn parse(spec: &str) -> Result<Self> {
        let mut s = Self::stock();
        if spec.trim().is_empty() {
            bail!(
                "empty policy: use a preset ({}) or family=variant",
                PRESETS.join(", ")
            );
        }
        for item in spec.split(',') {
            let item = item.trim();
            match item {
                "stock" => s = Self::stock(),
                "proposed" => s = Self::proposed(),
                "" => bail!("empty item in policy '{}'", spec.escape_debug()),
                _ => s.apply_item(item)?,
            }
        }
        Ok(s)
    }

    pub fn variant(&self, family: usize) -> &'static str {
        FAMILIES[family].variants[self.0[family] as usize].name
    }
}

pub const PRESETS: &[&str] = &["stock", "proposed"];

/// Names are lower-case and matched exactly; a name that differs only in
/// case is refused with a hint naming the right spelling.
fn case_hint<'a>(got: &str, valid: impl Iterator<Item = &'a str>) -> String {
    valid
        .into_iter()
        .find(|v| v.eq_ignore_ascii_case(got))
        .map(|v| format!(" (names are lower-case: did you mean '{v}'?)"))
        .unwrap_or_default()
}

impl fmt::Display for PolicySet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let items: Vec<String> = FAMILIES
            .iter()
            .enumerate()
            .map(|(i, fam)| format!("{}={}", fam.name, self.variant(i)))
            .collect();
        write!(f, "{}", items.join(","))
    }
}

/// `--list-policies` text.
pub fn describe() -> String {
    let mut out = String::new();
    out.push_str("Presets: stock (every family's first variant), proposed (");
    out.push_str(&PolicySet::proposed().to_string());
    out.push_str(")\n");
    for f in FAMILIES {
        out.push_str(&format!(
            "\n{}: {}\n  source: {}\n",
            f.name, f.what, f.source
        ));
        for v in f.variants {
            let item = format!("{}={}", f.name, v.name);
            out.push_str(&format!("  {item:<24} {}\n", v.desc));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bpf_intf as i;

    #[test]
    fn indices_match_the_bpf_enums() {
        assert_eq!(FAMILIES.len(), i::wp_policy_family_WP_POL_NR as usize);
        assert_eq!(
            FAMILIES[i::wp_policy_family_WP_POL_DELAYED as usize].name,
            "delayed"
        );
        assert_eq!(
            FAMILIES[i::wp_policy_family_WP_POL_SYNC as usize].name,
            "sync"
        );
        assert_eq!(
            FAMILIES[i::wp_policy_family_WP_POL_ASYM as usize].name,
            "asym"
        );
        assert_eq!(
            FAMILIES[i::wp_policy_family_WP_POL_PREEMPT as usize].name,
            "preempt"
        );
        let d = &FAMILIES[0].variants;
        assert_eq!(
            d[i::wp_delayed_variant_WP_DELAYED_MIGRATE_IF_BUSY as usize].name,
            "migrate-if-busy"
        );
        assert_eq!(d[i::wp_delayed_variant_WP_DELAYED_OFF as usize].name, "off");
        let s = &FAMILIES[1].variants;
        assert_eq!(
            s[i::wp_sync_variant_WP_SYNC_WAKER_SIBLING as usize].name,
            "waker-sibling"
        );
        assert_eq!(
            s[i::wp_sync_variant_WP_SYNC_PREV_SIBLING as usize].name,
            "prev-sibling"
        );
        let a = &FAMILIES[2].variants;
        assert_eq!(a[i::wp_asym_variant_WP_ASYM_PERF as usize].name, "perf");
        let p = &FAMILIES[3].variants;
        assert_eq!(
            p[i::wp_preempt_variant_WP_PREEMPT_PINNED as usize].name,
            "pinned"
        );
        assert_eq!(
            FAMILIES[i::wp_policy_family_WP_POL_CORESCHED as usize].name,
            "coresched"
        );
        let c = &FAMILIES[4].variants;
        assert_eq!(
            c[i::wp_coresched_variant_WP_CORESCHED_DEADLINE as usize].name,
            "deadline"
        );
        assert_eq!(
            c[i::wp_coresched_variant_WP_CORESCHED_COOKIE as usize].name,
            "cookie"
        );
    }

    #[test]
    fn presets_and_items_later_wins() {
        assert_eq!(PolicySet::parse("stock").unwrap(), PolicySet::stock());
        assert_eq!(
            PolicySet::parse("stock").unwrap().to_string(),
            "delayed=requeue,sync=sis,asym=rank,preempt=lazy,coresched=fifo"
        );
        assert_eq!(
            PolicySet::proposed().to_string(),
            "delayed=migrate,sync=waker-sibling,asym=perf,preempt=pinned,coresched=fifo"
        );
        let s = PolicySet::parse("stock,delayed=migrate").unwrap();
        assert_eq!(s.variant(0), "migrate");
        assert_eq!(s.variant(1), "sis");
        let s = PolicySet::parse("delayed=off,proposed,sync=sis").unwrap();
        assert_eq!(
            s.to_string(),
            "delayed=migrate,sync=sis,asym=perf,preempt=pinned,coresched=fifo"
        );
        let s = PolicySet::parse(" preempt=full , delayed=off ").unwrap();
        assert_eq!(s.variant(3), "full");
        assert_eq!(s.variant(0), "off");
    }

    #[test]
    fn bad_specs_name_the_valid_ones() {
        let e = PolicySet::parse("fast").unwrap_err().to_string();
        assert!(
            e.contains("stock, proposed") && e.contains("delayed, sync"),
            "{e}"
        );
        let e = PolicySet::parse("delayed=fast").unwrap_err().to_string();
        assert!(e.contains("requeue, migrate, migrate-if-busy, off"), "{e}");
        let e = PolicySet::parse("Delayed=migrate").unwrap_err().to_string();
        assert!(e.contains("unknown policy family 'Delayed'"), "{e}");
        assert!(PolicySet::parse("").is_err());
        assert!(PolicySet::parse("stock,,proposed").is_err());
        assert!(PolicySet::parse("sync=").is_err());
        assert!(PolicySet::parse("=sis").is_err());
    }

    #[test]
    fn description_lists_everything() {
        let d = describe();
        for f in FAMILIES {
            assert!(d.contains(f.source));
            for v in f.variants {
                assert!(d.contains(&format!("{}={}", f.name, v.name)));
            }
        }
    }
}

/// Hostile input: any string, and near-misses built from real names with
/// wrong case, stray separators and junk. Never a panic; a spec is either a
/// policy set that prints back to itself, or one line naming the first bad
/// item.
#[cfg(test)]
mod fuzz {
    use super::*;
    use proptest::prelude::*;

    fn item() -> impl Strategy<Value = String> {
        let fam = prop::sample::select(vec![
            "delayed", "sync", "asym", "preempt", "Delayed", "SYNC", "", " sync ", "x",
        ]);
        let var = prop::sample::select(vec![
            "requeue",
            "migrate",
            "migrate-if-busy",
            "off",
            "sis",
            "waker-sibling",
            "waker-cpu",
            "prev-sibling",
            "rank",
            "perf",
            "lazy",
            "full",
            "pinned",
            "Full",
            "",
            "=",
            "99999999999999999999",
        ]);
        prop_oneof![
            prop::sample::select(vec![
                "stock", "proposed", "Stock", "PROPOSED", "", " ", " stock"
            ])
            .prop_map(String::from),
            (fam, var).prop_map(|(f, v)| format!("{f}={v}")),
            "[ -~]{0,12}",
            any::<String>(),
        ]
    }

    fn check(spec: &str) -> std::result::Result<(), TestCaseError> {
        match PolicySet::parse(spec) {
            Ok(p) => prop_assert_eq!(PolicySet::parse(&p.to_string()).unwrap(), p),
            Err(e) => {
                let m = e.to_string();
                prop_assert!(!m.contains('\n') && !m.contains('\r'), "two lines: {m}");
                let first_bad = spec
                    .split(',')
                    .map(str::trim)
                    .find(|it| PolicySet::parse(it).is_err());
                if spec.trim().is_empty() {
                    prop_assert!(m.starts_with("empty policy"), "{m}");
                } else {
                    match first_bad {
                        Some("") => prop_assert!(m.starts_with("empty item"), "{m}"),
                        Some(b) => {
                            let shown = b.escape_debug().to_string();
                            prop_assert!(m.contains(&shown), "'{spec}': {m} lacks '{shown}'");
                        }
                        None => {
                            prop_assert!(false, "'{spec}' refused, each item alone is fine: {m}")
                        }
                    }
                }
            }
        }
        Ok(())
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(4096))]
        #[test]
        fn near_misses(items in prop::collection::vec(item(), 0..6)) {
            check(&items.join(","))?;
        }

        #[test]
        fn any_string(spec in any::<String>()) {
            check(&spec)?;
        }
    }

    #[test]
    fn wrong_case_is_refused_with_a_hint() {
        for (spec, hint) in [
            ("Stock", "did you mean 'stock'"),
            ("PROPOSED", "did you mean 'proposed'"),
            ("Delayed=migrate", "did you mean 'delayed'"),
            ("sync=Waker-Sibling", "did you mean 'waker-sibling'"),
        ] {
            let e = PolicySet::parse(spec).unwrap_err().to_string();
            assert!(e.contains(hint) && e.contains(spec), "{spec}: {e}");
        }
        // A newline in the value stays escaped, on one line.
        let e = PolicySet::parse("stock,del\nayed=off")
            .unwrap_err()
            .to_string();
        assert!(e.contains("del\\nayed") && !e.contains('\n'), "{e}");
        // Spaces around '=' are allowed like those around items.
        assert_eq!(PolicySet::parse("delayed = off").unwrap().variant(0), "off");
    }
}
