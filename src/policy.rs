// Policy families and variants, defined once: names, descriptions, the code
// or patch each follows and how it differs, from which --list-policies, the
// README table (--list-policies --markdown) and the errors are written; and
// the `--policy` syntax (presets and family=variant items, later items win).
// Each entry names its src/bpf/intf.h enum value; variant 0 is stock.
use std::fmt;

use anyhow::{bail, Result};

/// A mailing-list post: what a user can search lore for.
pub struct Post {
    pub subject: &'static str,
    pub author: &'static str,
    pub date: &'static str,
    /// Message-ID, when the copy this project read has one.
    pub msgid: Option<&'static str>,
}

impl Post {
    /// "subject (author, date)" and the Message-ID: `<id>` in text, a lore
    /// link in markdown (@md).
    fn cite(&self, md: bool) -> String {
        let mut s = format!("{} ({}, {})", self.subject, self.author, self.date);
        match self.msgid {
            Some(id) if md => s.push_str(&format!(", [lore](https://lore.kernel.org/all/{id}/)")),
            Some(id) => s.push_str(&format!(", <{id}>")),
            None => {}
        }
        s
    }
}

/// What a variant follows.
pub enum Follows {
    /// The stock kernel: the code it emulates (file, function, kernel).
    Kernel(&'static str),
    /// A posted patch.
    Patch(Post),
    /// A setting of the stock kernel (a sched_feat, a sysctl, a preemption mode).
    Setting(&'static str),
    /// This project's own, not in any posted patch.
    Own(&'static str),
}

impl Follows {
    fn cite(&self, md: bool) -> String {
        match self {
            Follows::Kernel(s) => format!("stock kernel: {s}"),
            Follows::Patch(p) => format!("patch: {}", p.cite(md)),
            Follows::Setting(s) => format!("setting: {s}"),
            Follows::Own(s) => format!("not from a patch: {s}"),
        }
    }
}

pub struct Variant {
    pub name: &'static str,
    /// One line: what the variant does.
    pub desc: &'static str,
    pub follows: Follows,
    /// How the emulation differs from what it follows ("" if it does not).
    pub differs: &'static str,
    /// Its value in the BPF enum (src/bpf/intf.h); must equal its index.
    pub bpf: u32,
}

pub struct Family {
    pub name: &'static str,
    pub what: &'static str,
    /// The thread the family comes from.
    pub thread: Post,
    pub variants: &'static [Variant],
    /// Its value in enum wp_policy_family; must equal its index.
    pub bpf: u32,
}

use crate::bpf_intf as i;

const ITMT_REPORT: Post = Post {
    subject: "[REPORT] sched: ITMT + DELAY_DEQUEUE: woken task waits ~1 ms behind another task \
              on the preferred CPU while allowed CPUs are idle",
    author: "Francesco Nigro",
    date: "2026-11-03",
    msgid: None,
};

pub const FAMILIES: &[Family] = &[
    Family {
        name: "delayed",
        what: "wakeup of a task that blocked while ineligible (DELAY_DEQUEUE) and is still queued",
        thread: ITMT_REPORT,
        bpf: i::wp_policy_family_WP_POL_DELAYED,
        variants: &[
            Variant {
                name: "requeue",
                desc:
                    "ttwu_runnable() requeues it on its old CPU (ENQUEUE_DELAYED), no CPU selection",
                follows: Follows::Kernel("core.c ttwu_runnable(), 6.12 and 7.3"),
                differs: "",
                bpf: i::wp_delayed_variant_WP_DELAYED_REQUEUE,
            },
            Variant {
                name: "migrate",
                desc: "ttwu_runnable() dequeues it and the wakeup goes through CPU selection",
                follows: Follows::Patch(Post {
                    subject: "[PATCH v2 11/12] sched: Change ttwu_runnable() vs sched_delayed",
                    author: "Peter Zijlstra",
                    date: "2025-07-02",
                    msgid: Some("20250702121159.535226098@infradead.org"),
                }),
                differs: "",
                bpf: i::wp_delayed_variant_WP_DELAYED_MIGRATE,
            },
            Variant {
                name: "migrate-if-busy",
                desc: "dequeue and select unless the task is pinned or the old CPU runs its wake \
                       buddy (the task that last woke it, or that it last woke)",
                follows: Follows::Patch(Post {
                    subject: "[PATCH V2] sched/fair: Dequeue sched_delayed tasks when waking to a \
                              busy CPU",
                    author: "Mike Galbraith",
                    date: "2024-11-23",
                    msgid: Some("bf4f50886c462ee1f33cc404843944fea4817616.camel@gmx.de"),
                }),
                differs: "last_wakee is the scheduler's own record, by pid (record_wakee() at \
                          CPU selection, as in fair.c); no DEQUEUE_DELAYED feature switch. V1 \
                          (2024-11-08, <750542452c4f852831e601e1b8de40df4b108d9a.camel@gmx.de>) \
                          is not offered: without the buddy test it decides as migrate does here",
                bpf: i::wp_delayed_variant_WP_DELAYED_MIGRATE_IF_BUSY,
            },
            Variant {
                name: "off",
                desc: "never delayed; the lag is saved when the task blocks",
                follows: Follows::Setting("NO_DELAY_DEQUEUE (/sys/kernel/debug/sched/features)"),
                differs: "",
                bpf: i::wp_delayed_variant_WP_DELAYED_OFF,
            },
        ],
    },
    Family {
        name: "sync",
        what: "WF_SYNC wakeup while the waker runs alone on its CPU",
        thread: Post {
            subject: "[PATCH] sched/fair: Let sync wakeups target the waker's core",
            author: "Madadi Vineeth Reddy",
            date: "2026-08-01",
            msgid: Some("20260801035532.260625-1-vineethr@linux.ibm.com"),
        },
        bpf: i::wp_policy_family_WP_POL_SYNC,
        variants: &[
            Variant {
                name: "sis",
                desc: "select_idle_sibling() counts the waker's CPU as busy",
                follows: Follows::Kernel(
                    "fair.c select_task_rq_fair() -> wake_affine_idle() -> select_idle_sibling(), \
                     6.12 and 7.3",
                ),
                differs: "affine domain = the LLC; wake_affine_weight() on emulated PELT loads \
                          (continuous decay, no task groups); SIS_UTIL's budget from each CPU's run time, no util_est; no per-CPU kthread rule; last_wakee, wakee_flips, recent_used_cpu and the \
                          has_idle_cores hint are the scheduler's own, kept as fair.c keeps them",
                bpf: i::wp_sync_variant_WP_SYNC_SIS,
            },
            Variant {
                name: "waker-sibling",
                desc: "the waker's core is an idle-core candidate, so the wakee lands on its \
                       sibling",
                follows: Follows::Patch(Post {
                    subject: "[PATCH] sched/fair: Let sync wakeups target the waker's core",
                    author: "Madadi Vineeth Reddy",
                    date: "2026-08-01",
                    msgid: Some("20260801035532.260625-1-vineethr@linux.ibm.com"),
                }),
                differs: "the has_idle_cores hint is emulated (set when a core goes idle as a \
                          whole, cleared by a failed scan), as the patch's gate",
                bpf: i::wp_sync_variant_WP_SYNC_WAKER_SIBLING,
            },
            Variant {
                name: "waker-cpu",
                desc: "return the waker's CPU before select_idle_sibling(), only without SMT",
                follows: Follows::Patch(Post {
                    subject: "[PATCH v3] sched/fair: Prefer waker CPU for non-SMT reciprocal sync \
                              wakeups",
                    author: "Shubhang Kaushik",
                    date: "2026-07-27",
                    msgid: Some("20260727-b4-sched-sync-wakeup-v3-1-90cf481dbd85@gentwo.org"),
                }),
                differs: "its diff was not available, only the thread's description: \
                          !sched_smt_active(), the waker alone on its CPU, and a reciprocal pair \
                          (the wakee last woke the waker); no asym-capacity fit test",
                bpf: i::wp_sync_variant_WP_SYNC_WAKER_CPU,
            },
            Variant {
                name: "prev-sibling",
                desc: "with no idle core, an idle sibling of prev, else stack on the waker",
                follows: Follows::Patch(Post {
                    subject: "Re: [PATCH v3] sched/fair: Prefer waker CPU for non-SMT reciprocal \
                              sync wakeups",
                    author: "K Prateek Nayak",
                    date: "2026-07-30",
                    msgid: Some("f3d5530f-3811-42af-8c34-c40cf314deed@amd.com"),
                }),
                differs: "its diff was not available, only its description: under \
                          !has_idle_core (emulated hint), prev's idle sibling anywhere, else stack \
                          on the waker if p->last_wakee == current; no asym-capacity fit test",
                bpf: i::wp_sync_variant_WP_SYNC_PREV_SIBLING,
            },
        ],
    },
    Family {
        name: "asym",
        what: "preferred-core (ITMT) priorities in balancing",
        thread: ITMT_REPORT,
        bpf: i::wp_policy_family_WP_POL_ASYM,
        variants: &[
            Variant {
                name: "rank",
                desc: "priority = preferred-core ranking; higher-priority idle CPUs pull work \
                       (asym packing, nohz kick)",
                follows: Follows::Kernel(
                    "sched.h sched_asym_prefer(), fair.c asym_active_balance(), x86 \
                     arch_asym_cpu_priority(), 6.12 and 7.3",
                ),
                differs: "nohz.idle_cpus_mask taken as idle for a tick at least; an idle core \
                          does not take the task of a CPU whose sibling is busy whatever the \
                          priorities (asym_active_balance()'s \"!sched_use_asym_prio(src)\")",
                bpf: i::wp_asym_variant_WP_ASYM_RANK,
            },
            Variant {
                name: "perf",
                desc:
                    "priority = highest_perf: CPUs of equal performance are equal whatever their \
                       ranking",
                follows: Follows::Own("the report's observation, no patch was posted"),
                differs: "",
                bpf: i::wp_asym_variant_WP_ASYM_PERF,
            },
            Variant {
                name: "off",
                desc: "no priorities",
                follows: Follows::Setting("sysctl kernel.sched_itmt_enabled=0"),
                differs: "",
                bpf: i::wp_asym_variant_WP_ASYM_OFF,
            },
        ],
    },
    Family {
        name: "preempt",
        what: "when a wakee that should preempt the running task gets the CPU",
        thread: Post {
            subject: "Re: [PATCH] sched: Further restrict the preemption modes",
            author: "Ciunas Bennett",
            date: "2026-06-05",
            msgid: Some("6c3fbb6d-d4e1-4984-b584-c067be844098@linux.ibm.com"),
        },
        bpf: i::wp_policy_family_WP_POL_PREEMPT,
        variants: &[
            Variant {
                name: "lazy",
                desc: "at the running task's next return to user mode or tick, whichever comes \
                       first",
                follows: Follows::Kernel(
                    "PREEMPT_LAZY: core.c resched_curr_lazy(), sched_tick(); entry/common.c \
                     exit_to_user_mode_loop(), 7.3",
                ),
                differs: "a wakeup from another CPU waits for the tick (the kernel also acts at \
                          that CPU's next return to user from an interrupt); on 6.12, tick only",
                bpf: i::wp_preempt_variant_WP_PREEMPT_LAZY,
            },
            Variant {
                name: "full",
                desc: "at once",
                follows: Follows::Setting("preempt=full"),
                differs: "",
                bpf: i::wp_preempt_variant_WP_PREEMPT_FULL,
            },
            Variant {
                name: "pinned",
                desc: "at once for wakees that can run on one CPU only (per-CPU kworkers), lazy \
                       otherwise",
                follows: Follows::Own(
                    "the thread's fix moves the work to an unbound workqueue; no scheduler patch \
                     was posted",
                ),
                differs: "",
                bpf: i::wp_preempt_variant_WP_PREEMPT_PINNED,
            },
        ],
    },
    Family {
        name: "coresched",
        what: "core scheduling (cookies): which SMT sibling's task runs, and wakeup placement",
        thread: Post {
            subject: "[PATCH 0/5] sched: Fix DL server starvation under core scheduling",
            author: "Fernand Sieber",
            date: "2026-11-12",
            msgid: None,
        },
        bpf: i::wp_policy_family_WP_POL_CORESCHED,
        variants: &[
            Variant {
                name: "fifo",
                desc: "the core's candidates by core_sched_at (6.12) or runnable_at, running task \
                       last (7.x); idle CPUs are idle whatever their sibling runs",
                follows: Follows::Kernel("ext.c scx_prio_less(), 6.12 and 7.3 (sched_ext's own)"),
                differs: "",
                bpf: i::wp_coresched_variant_WP_CORESCHED_FIFO,
            },
            Variant {
                name: "deadline",
                desc: "ops.core_sched_before() by virtual deadline in the core's virtual time \
                       (EEVDF across the SMT threads)",
                follows: Follows::Own("beyond the thread, which fixes the DL servers"),
                differs: "",
                bpf: i::wp_coresched_variant_WP_CORESCHED_DEADLINE,
            },
            Variant {
                name: "cookie",
                desc:
                    "deadline, and an idle CPU whose sibling runs another cookie is not idle for \
                       the wakee",
                follows: Follows::Own(
                    "beyond the thread; after fair.c __select_idle_cpu() -> \
                     sched_cpu_cookie_match()",
                ),
                differs: "",
                bpf: i::wp_coresched_variant_WP_CORESCHED_COOKIE,
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

    /// What the BPF program's policy[] holds: each family's variant as its
    /// intf.h enum value.
    pub fn bpf_values(&self) -> [u32; FAMILIES.len()] {
        let mut out = [0; FAMILIES.len()];
        for (f, fam) in FAMILIES.iter().enumerate() {
            out[fam.bpf as usize] = fam.variants[self.0[f] as usize].bpf;
        }
        out
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
            "\n{}: {}\n  thread: {}\n",
            f.name,
            f.what,
            f.thread.cite(false)
        ));
        for (k, v) in f.variants.iter().enumerate() {
            let item = format!("{}={}", f.name, v.name);
            let stock = if k == 0 { " (stock)" } else { "" };
            out.push_str(&format!("  {item}{stock}: {}\n", v.desc));
            out.push_str(&format!("      {}\n", v.follows.cite(false)));
            if !v.differs.is_empty() {
                out.push_str(&format!("      differs: {}\n", v.differs));
            }
        }
    }
    out
}

/// `--list-policies --markdown`: the README's policy table (a test checks
/// that the README holds exactly this).
pub fn describe_markdown() -> String {
    let cell = |s: &str| s.replace('|', "\\|");
    let mut out = String::from(
        "| family | variant | what it does | follows | differs from it |\n|---|---|---|---|---|\n",
    );
    for f in FAMILIES {
        for (k, v) in f.variants.iter().enumerate() {
            let fam = if k == 0 {
                format!("{} ({})", f.name, cell(f.what))
            } else {
                String::new()
            };
            let stock = if k == 0 { " (stock)" } else { "" };
            out.push_str(&format!(
                "| {fam} | `{}`{stock} | {} | {} | {} |\n",
                v.name,
                cell(v.desc),
                cell(&v.follows.cite(true)),
                cell(v.differs)
            ));
        }
    }
    out.push_str("\nThreads:\n\n");
    for f in FAMILIES {
        out.push_str(&format!("- {}: {}\n", f.name, f.thread.cite(true)));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn indices_match_the_bpf_enums() {
        assert_eq!(FAMILIES.len(), i::wp_policy_family_WP_POL_NR as usize);
        for (k, f) in FAMILIES.iter().enumerate() {
            assert_eq!(f.bpf as usize, k, "family {}", f.name);
            for (j, v) in f.variants.iter().enumerate() {
                assert_eq!(v.bpf as usize, j, "{}={}", f.name, v.name);
            }
        }
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
    fn no_internal_names() {
        for text in [describe(), describe_markdown()] {
            assert!(!text.to_lowercase().contains("seed"), "{text}");
        }
    }

    #[test]
    fn description_lists_everything() {
        let d = describe();
        for f in FAMILIES {
            assert!(d.contains(f.thread.subject));
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
